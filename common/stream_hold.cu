// The stream hold (timer.hpp says why): a one-thread kernel that spins until the host releases it, or a second passes.
#include <cuda/atomic>
#include <cuda/ptx>

#include "timer.hpp"

namespace ladder {
namespace {
constexpr unsigned long long kTimeoutNs = 1000000000ull;

using SystemFlag = cuda::atomic_ref<int, cuda::thread_scope_system>;

// Spins until the host sets flags[0], or kTimeoutNs have passed (then sets flags[1]).
__global__ void hold_kernel(int* flags) {
  const unsigned long long start = cuda::ptx::get_sreg_globaltimer();
  while (SystemFlag(flags[0]).load(cuda::memory_order_relaxed) == 0) {
    if (cuda::ptx::get_sreg_globaltimer() - start > kTimeoutNs) {
      SystemFlag(flags[1]).store(1, cuda::memory_order_relaxed);
      return;
    }
    __nanosleep(256);
  }
}
}  // namespace

void GpuTimer::hold() {
  SystemFlag(flags_[0]).store(0, cuda::memory_order_relaxed);
  SystemFlag(flags_[1]).store(0, cuda::memory_order_relaxed);
  hold_kernel<<<1, 1, 0, stream_>>>(device_flags_);
  LADDER_CHECK_LAUNCH();
}
void GpuTimer::release() { SystemFlag(flags_[0]).store(1, cuda::memory_order_release); }
bool GpuTimer::timed_out() const { return SystemFlag(flags_[1]).load(cuda::memory_order_acquire) != 0; }
}  // namespace ladder
