// 08_gemm_tiled: C = A * B in float, with A and B staged through shared-memory tiles.
//
// What it does
//   Row-major A (M x K), B (K x N), C (M x N). A block of tile x tile threads computes a tile x tile
//   block of C, one element per thread: thread (tx, ty) owns C[row][col] with col = block column + tx and
//   row = block row + ty, so consecutive threads of a warp own consecutive columns. The block walks K in
//   steps of `tile`: each thread loads one element of A's tile and one of B's into shared memory, the
//   block synchronises, and each thread adds the tile's `tile` products to its sum.
//   Any M, N, K >= 1: loads outside A or B store 0 (which adds nothing), and threads outside C store
//   nothing, so partial tiles at the edges need no special case.
//
// Why it should help (over the naive kernel, one thread per element reading A and B from global memory)
//   Every element loaded into shared memory is used `tile` times, by the `tile` threads of a row or
//   column of the block, so global traffic falls by a factor of `tile`.
//
// The padding question (--pad)
//   Padding each tile row by one float (16x17) is the classic cure for bank conflicts. Here it has
//   nothing to cure: a warp reads a_tile[ty][k] (one or two words, broadcast) and b_tile[k][tx] (16 or 32
//   consecutive words), and stores 32 consecutive words. With 16-wide tiles the padded rows even put two
//   stores of a warp into one bank. docs/stages/08_gemm_tiled.md has the Nsight Compute counts.
//
// What to look for
//   GFLOP/s over the naive kernel (the "x naive" column), and how far it stays from cuBLAS. With one
//   output per thread, each multiply-add in the source reads one element of each tile from shared memory;
//   the compiler merges four consecutive a_tile reads into one 128-bit load, so the machine code has 1.25
//   shared loads per FFMA (16 LDS and 4 LDS.128 per 16 FFMA for 16x16 tiles on sm_90:
//   cuobjdump -sass build/bin/08_gemm_tiled). docs/stages/08_gemm_tiled.md measures what that costs against
//   the FP32 peak. The next rungs would compute several outputs per thread from registers.
//
// Build and run
//   cmake -S . -B build && cmake --build build --target 08_gemm_tiled
//   build/bin/08_gemm_tiled --pad both     (-m/-n/-k or --size for the shape, --tile 32)
#include "gemm_stage.hpp"

template <int kTile, int kPad>
__global__ void gemm_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M,
                            int N, int K) {
  __shared__ float a_tile[kTile][kTile + kPad];  // rows of C x a slice of K
  __shared__ float b_tile[kTile][kTile + kPad];  // a slice of K x columns of C
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * kTile + ty;
  const int col = blockIdx.x * kTile + tx;
  float sum = 0.0f;
  for (int k0 = 0; k0 < K; k0 += kTile) {
    a_tile[ty][tx] = row < M && k0 + tx < K ? A[std::size_t(row) * K + (k0 + tx)] : 0.0f;
    b_tile[ty][tx] = k0 + ty < K && col < N ? B[std::size_t(k0 + ty) * N + col] : 0.0f;
    __syncthreads();  // the tiles are complete
    for (int k = 0; k < kTile; ++k) sum += a_tile[ty][k] * b_tile[k][tx];
    __syncthreads();  // everyone is done with them before the next tiles overwrite them
  }
  if (row < M && col < N) C[std::size_t(row) * N + col] = sum;
}

template <int kTile, int kPad>
void launch_tiled(const float* A, const float* B, float* C, int M, int N, int K, cudaStream_t stream) {
  const dim3 block(kTile, kTile);
  const dim3 grid((N + kTile - 1) / kTile, (M + kTile - 1) / kTile);
  gemm_kernel<kTile, kPad><<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}

void gemm(const float* A, const float* B, float* C, int M, int N, int K, const ladder::GemmLaunch& launch,
          cudaStream_t stream) {
  if (launch.tile == 16) {
    launch.pad ? launch_tiled<16, 1>(A, B, C, M, N, K, stream) : launch_tiled<16, 0>(A, B, C, M, N, K, stream);
  } else {
    launch.pad ? launch_tiled<32, 1>(A, B, C, M, N, K, stream) : launch_tiled<32, 0>(A, B, C, M, N, K, stream);
  }
  LADDER_CHECK_LAUNCH();
}

int main(int argc, char** argv) { return ladder::run_gemm_stage(argc, argv, {"08_gemm_tiled"}, gemm); }
