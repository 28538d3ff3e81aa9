// The unrolled last warp as written before Volta: `volatile` shared memory, no synchronisation. Since Volta a warp's
// threads need not run in lockstep, so this is a data race, which the test racecheck_sees_race demands that
// compute-sanitizer's racecheck report (04_warp_unroll, with __syncwarp(), must report none). Exits 0, or 77 without
// a GPU.
#include <algorithm>
#include <cstdio>

#include <cuda_runtime.h>

#include "cuda_check.hpp"
#include "device_fill.hpp"
#include "helper_cli.hpp"

namespace {
constexpr unsigned kBlock = 256, kBlocks = 64;

// Unsafe since Volta: a lane may read s[tid + 16] before the lane that owns it has added into it.
__device__ void racy_last_warp(volatile float* s, unsigned tid) {
  s[tid] += s[tid + 32];
  s[tid] += s[tid + 16];
  s[tid] += s[tid + 8];
  s[tid] += s[tid + 4];
  s[tid] += s[tid + 2];
  s[tid] += s[tid + 1];
}

__global__ void racy_reduce(float* out) {  // each block sums 256 ones
  __shared__ float s[kBlock];
  const unsigned tid = threadIdx.x;
  s[tid] = 1.0f;
  __syncthreads();
  for (unsigned half = kBlock / 2; half > 32; half /= 2) {
    if (tid < half) s[tid] += s[tid + half];
    __syncthreads();
  }
  if (tid < 32) racy_last_warp(s, tid);
  if (tid == 0) out[blockIdx.x] = s[0];
}
}  // namespace

int main(int argc, char** argv) {
  const int status = ladder::helper_start(argc, argv, "racy_warp_unroll",
                                          "run by the test racecheck_sees_race under compute-sanitizer "
                                          "--tool racecheck: it sums with the pre-Volta unrolled last warp "
                                          "(volatile, no __syncwarp)");
  if (status >= 0) return status;
  float sums[kBlocks];
  const ladder::DeviceBuffer<float> out(kBlocks);
  racy_reduce<<<kBlocks, kBlock>>>(out.get());
  LADDER_CHECK_LAUNCH();
  CUDA_CHECK(cudaMemcpy(sums, out.get(), sizeof sums, cudaMemcpyDeviceToHost));
  const auto wrong = static_cast<unsigned>(kBlocks - std::count(sums, sums + kBlocks, static_cast<float>(kBlock)));
  std::printf("racy_warp_unroll: %u of %u block sums wrong this run (a race need not show in the result)\n", wrong,
              kBlocks);
  return 0;
}
