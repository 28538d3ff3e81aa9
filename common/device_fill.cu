#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "device_fill.hpp"

namespace ladder {

namespace {
__global__ void scatter_kernel(float* __restrict__ dst, const std::uint64_t* __restrict__ at,
                               const float* __restrict__ values, std::size_t count) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < count;
       i += std::size_t{gridDim.x} * blockDim.x) {
    dst[at[i]] = values[i];
  }
}
}  // namespace

void scatter(float* dst, const std::vector<std::uint64_t>& at, const std::vector<float>& values, cudaStream_t stream) {
  if (at.empty()) return;
  DeviceBuffer<std::uint64_t> d_at(at.size());
  DeviceBuffer<float> d_values(values.size());
  CUDA_CHECK(cudaMemcpyAsync(d_at.get(), at.data(), d_at.bytes(), cudaMemcpyHostToDevice, stream));
  CUDA_CHECK(cudaMemcpyAsync(d_values.get(), values.data(), d_values.bytes(), cudaMemcpyHostToDevice, stream));
  const auto blocks = static_cast<unsigned>(std::min<std::size_t>((at.size() + 255) / 256, 1024));
  scatter_kernel<<<blocks, 256, 0, stream>>>(dst, d_at.get(), d_values.get(), at.size());
  LADDER_CHECK_LAUNCH();
  CUDA_CHECK(cudaStreamSynchronize(stream));  // before the buffers above are freed
}

}  // namespace ladder
