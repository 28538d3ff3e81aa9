// The unrolled last warp as it was written before Volta: `volatile` shared memory and no synchronisation,
// relying on the 32 threads of a warp running in lockstep. Since Volta (compute capability 7.0) they need
// not, and this is a data race. The test racecheck_finds_volatile_race runs this program under
// compute-sanitizer --tool racecheck and passes only if racecheck reports the hazards (04_warp_unroll, with
// __syncwarp() between the steps, must report none).
//
// Prints the sum of 256 ones per block and whether it came out right; exits 0, or 77 without a GPU.
#include <cstdio>

#include <cuda_runtime.h>

#include "cuda_check.hpp"
#include "helper_cli.hpp"

namespace {

constexpr unsigned kBlock = 256;

// Unsafe since Volta: a lane may read s[tid + 16] before the lane that owns it has added into it.
__device__ void racy_last_warp(volatile float* s, unsigned tid) {
  s[tid] += s[tid + 32];
  s[tid] += s[tid + 16];
  s[tid] += s[tid + 8];
  s[tid] += s[tid + 4];
  s[tid] += s[tid + 2];
  s[tid] += s[tid + 1];
}

__global__ void racy_reduce(const float* in, float* out) {
  __shared__ float s[kBlock];
  const unsigned tid = threadIdx.x;
  s[tid] = in[blockIdx.x * kBlock + tid];
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
  if (const int status = ladder::helper_start(argc, argv, "racy_warp_unroll",
                                              "run by the test racecheck_finds_volatile_race under compute-sanitizer "
                                              "--tool racecheck: it sums with the pre-Volta unrolled last warp "
                                              "(volatile, no __syncwarp)");
      status >= 0) {
    return status;
  }
  constexpr unsigned kBlocks = 64;
  float host[kBlocks * kBlock];
  for (float& v : host) v = 1.0f;
  float *in = nullptr, *out = nullptr;
  CUDA_CHECK(cudaMalloc(&in, sizeof host));
  CUDA_CHECK(cudaMalloc(&out, kBlocks * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(in, host, sizeof host, cudaMemcpyHostToDevice));
  racy_reduce<<<kBlocks, kBlock>>>(in, out);
  LADDER_CHECK_LAUNCH();
  float sums[kBlocks];
  CUDA_CHECK(cudaMemcpy(sums, out, sizeof sums, cudaMemcpyDeviceToHost));
  unsigned wrong = 0;
  for (float s : sums) wrong += s != static_cast<float>(kBlock);
  std::printf("racy_warp_unroll: %u of %u block sums wrong this run (a race need not show in the result)\n", wrong,
              kBlocks);
  cudaFree(in);
  cudaFree(out);
  return 0;
}
