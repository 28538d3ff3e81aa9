#include <cuda/atomic>

#include "cuda_check.hpp"
#include "stream_hold.hpp"

namespace ladder {

namespace {

constexpr unsigned long long kTimeoutNs = 1000000000ull;

__device__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Spins until the host sets flags[0], or a second has passed (then sets flags[1]).
__global__ void hold_kernel(int* flags) {
  cuda::atomic_ref<int, cuda::thread_scope_system> released(flags[0]);
  const unsigned long long start = global_ns();
  while (released.load(cuda::memory_order_relaxed) == 0) {
    if (global_ns() - start > kTimeoutNs) {
      cuda::atomic_ref<int, cuda::thread_scope_system>(flags[1]).store(1, cuda::memory_order_relaxed);
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
  cuda::atomic_ref<int, cuda::thread_scope_system>(flags_[0]).store(0, cuda::memory_order_relaxed);
  cuda::atomic_ref<int, cuda::thread_scope_system>(flags_[1]).store(0, cuda::memory_order_relaxed);
  hold_kernel<<<1, 1, 0, stream>>>(device_flags_);
  LADDER_CHECK_LAUNCH();
}

void StreamHold::release() {
  cuda::atomic_ref<int, cuda::thread_scope_system>(flags_[0]).store(1, cuda::memory_order_release);
}

bool StreamHold::timed_out() const {
  return cuda::atomic_ref<int, cuda::thread_scope_system>(flags_[1]).load(cuda::memory_order_acquire) != 0;
}

}  // namespace ladder
