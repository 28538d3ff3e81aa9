// CUB's device-wide sum, the reference for the reduce stages.
#include <algorithm>
#include <cstdint>
#include <limits>

#include <cub/device/device_reduce.cuh>

#include "cuda_check.hpp"
#include "references.hpp"

namespace ladder {

namespace {
// A 32-bit item count where it fits, as a caller with an int count would pass; 64-bit otherwise.
cudaError_t cub_sum(void* temp, std::size_t& bytes, const float* in, std::size_t n, float* out, cudaStream_t stream) {
  if (n <= static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    return cub::DeviceReduce::Sum(temp, bytes, in, out, static_cast<int>(n), stream);
  }
  return cub::DeviceReduce::Sum(temp, bytes, in, out, static_cast<std::int64_t>(n), stream);
}
}  // namespace

std::size_t CubSum::temp_bytes(std::size_t n) {
  std::size_t bytes = 0;
  CUDA_CHECK(cub_sum(nullptr, bytes, nullptr, n, nullptr, nullptr));
  return bytes;
}

CubSum::CubSum(const std::vector<std::size_t>& sizes) {
  for (std::size_t n : sizes) bytes_ = std::max(bytes_, temp_bytes(n));
  CUDA_CHECK(cudaMalloc(&temp_, std::max<std::size_t>(bytes_, 1)));
}

CubSum::~CubSum() { cudaFree(temp_); }

void CubSum::run(const float* in, std::size_t n, float* out, cudaStream_t stream) {
  std::size_t bytes = bytes_;
  CUDA_CHECK(cub_sum(temp_, bytes, in, n, out, stream));
}

}  // namespace ladder
