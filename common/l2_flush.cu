// Evicting the input from L2 before a timed repetition, without leaving work behind for the timed region.
#include "timer.hpp"

namespace ladder {

namespace {
// Reads `count` float4s. The comparison never holds for the zeroed buffer, but the compiler cannot know that, so
// every load stays.
__global__ void read_all(const float4* __restrict__ buf, std::size_t count, float* sink) {
  float acc = 0.0f;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < count;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const float4 v = buf[i];
    acc += (v.x + v.y) + (v.z + v.w);
  }
  if (acc == 1234.5f) *sink = acc;
}
}  // namespace

L2Flush::L2Flush(std::size_t l2_bytes, bool clean)
    : buffer_(device_bytes(l2_bytes)), write_bytes_(write_bytes(l2_bytes)), read_bytes_(read_bytes(l2_bytes)),
      clean_(clean) {
  CUDA_CHECK(cudaMemset(buffer_.get(), 0, buffer_.bytes()));
}

void L2Flush::run(cudaStream_t stream) const {
  unsigned char* base = buffer_.get();
  // 1. Overwrite 4x the L2: every line of the input is evicted (L2 allocates on write).
  CUDA_CHECK(cudaMemsetAsync(base, 0, write_bytes_, stream));
  if (!clean_) return;
  // 2. Read 2x the L2 of other, clean data: the dirty lines of step 1 are written back to DRAM now, not during the
  //    timed kernel, where they would compete with its reads.
  read_all<<<1024, 256, 0, stream>>>(reinterpret_cast<const float4*>(base + write_bytes_), read_bytes_ / sizeof(float4),
                                     reinterpret_cast<float*>(base + write_bytes_ + read_bytes_));
  LADDER_CHECK_LAUNCH();
}

}  // namespace ladder
