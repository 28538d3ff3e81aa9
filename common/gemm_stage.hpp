// What the GEMM stage (08) sees of the harness: its kernel, a launcher with the signature of GemmFn and a main() that
// hands both to run_gemm_stage(). Row-major everywhere: A is M x K, B is K x N, C is M x N; X[r][c] is X[r * C + c].
#pragma once

#include <cuda_runtime.h>

#include "cuda_check.hpp"

namespace ladder {
struct GemmLaunch {
  int tile;  // shared-memory tile edge: 16 or 32 (threads per block = tile x tile)
  bool pad;  // pad each tile row by one float
};

// C = A * B on `stream`. Every launch it makes is checked with LADDER_CHECK_LAUNCH().
using GemmFn = void (*)(const float* A, const float* B, float* C, int M, int N, int K, const GemmLaunch& launch,
                        cudaStream_t stream);

// Runs the stage as a program; returns 0 pass, 1 check failed, 2 usage or runtime error, 77 no usable GPU.
int run_gemm_stage(int argc, char** argv, const char* stage, GemmFn gemm);
}  // namespace ladder
