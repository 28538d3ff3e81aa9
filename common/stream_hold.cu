// The stream hold (timer.hpp says why): a one-thread kernel that spins until the host releases it, or a second passes.
#include <cuda/atomic>

#include "timer.hpp"

namespace ladder {
namespace {
constexpr unsigned long long kTimeoutNs = 1000000000ull;

using SystemFlag = cuda::atomic_ref<int, cuda::thread_scope_system>;

__device__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Spins until the host sets flags[0], or kTimeoutNs have passed (then sets flags[1]).
__global__ void hold_kernel(int* flags) {
  const unsigned long long start = global_ns();
  while (SystemFlag(flags[0]).load(cuda::memory_order_relaxed) == 0) {
    if (global_ns() - start > kTimeoutNs) {
      SystemFlag(flags[1]).store(1, cuda::memory_order_relaxed);
      return;
    }
    __nanosleep(256);
  }
}
}  // namespace

StreamHold::StreamHold() {
  CUDA_CHECK(cudaHostAlloc(&flags_, 2 * sizeof(int), cudaHostAllocMapped));
  CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_flags_), flags_, 0));
  flags_[0] = flags_[1] = 0;
}
StreamHold::~StreamHold() { cudaFreeHost(flags_); }

void StreamHold::hold(cudaStream_t stream) {
  SystemFlag(flags_[0]).store(0, cuda::memory_order_relaxed);
  SystemFlag(flags_[1]).store(0, cuda::memory_order_relaxed);
  hold_kernel<<<1, 1, 0, stream>>>(device_flags_);
  LADDER_CHECK_LAUNCH();
}
void StreamHold::release() { SystemFlag(flags_[0]).store(1, cuda::memory_order_release); }
bool StreamHold::timed_out() const { return SystemFlag(flags_[1]).load(cuda::memory_order_acquire) != 0; }
}  // namespace ladder
