// Error checking for every CUDA runtime call and kernel launch: CUDA_CHECK(cudaMalloc(&p, bytes)) prints the call,
// file:line and the CUDA error and exits 2; LADDER_CHECK_LAUNCH() after kernel<<<...>>>(...) reports a bad launch.
#pragma once

#include <cuda_runtime.h>

namespace ladder {
void cuda_check(cudaError_t err, const char* call, const char* file, int line);
}  // namespace ladder

#define CUDA_CHECK(call) ::ladder::cuda_check((call), #call, __FILE__, __LINE__)
#define LADDER_CHECK_LAUNCH() ::ladder::cuda_check(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
