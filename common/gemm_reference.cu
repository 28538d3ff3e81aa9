// The naive GEMM, the baseline that shows what tiling buys.
#include "cuda_check.hpp"
#include "references.hpp"

namespace ladder {

namespace {
__global__ void gemm_naive_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                                  int M, int N, int K) {
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[static_cast<std::size_t>(row) * K + k] * B[static_cast<std::size_t>(k) * N + col];
  C[static_cast<std::size_t>(row) * N + col] = acc;
}
}  // namespace

void gemm_naive(const float* A, const float* B, float* C, int M, int N, int K, cudaStream_t stream) {
  const dim3 block(16, 16);
  const dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  gemm_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
  LADDER_CHECK_LAUNCH();
}

}  // namespace ladder
