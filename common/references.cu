// The references the stages are timed against in the same run: CUB's device-wide sum for the reduce stages, and for
// the GEMM a naive kernel (the baseline that shows what tiling buys) and cuBLAS (gemm_harness.cpp).
#include <algorithm>
#include <cstdint>
#include <limits>

#include <cub/device/device_reduce.cuh>

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

__global__ void gemm_naive_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                                  int M, int N, int K) {
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[std::size_t(row) * K + k] * B[std::size_t(k) * N + col];
  C[std::size_t(row) * N + col] = acc;
}
}  // namespace

std::size_t CubSum::temp_bytes(const std::vector<std::uint64_t>& sizes) {
  std::size_t most = 0;
  for (const std::uint64_t n : sizes) {
    std::size_t bytes = 0;
    CUDA_CHECK(cub_sum(nullptr, bytes, nullptr, n, nullptr, nullptr));
    most = std::max(most, bytes);
  }
  return most;
}

void CubSum::run(const float* in, std::size_t n, float* out, cudaStream_t stream) {
  std::size_t bytes = temp_.bytes();
  CUDA_CHECK(cub_sum(temp_.get(), bytes, in, n, out, stream));
}

void gemm_naive(const float* A, const float* B, float* C, int M, int N, int K, cudaStream_t stream) {
  const dim3 block(16, 16);
  const dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  gemm_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
  LADDER_CHECK_LAUNCH();
}
}  // namespace ladder
