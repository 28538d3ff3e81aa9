// 04_warp_unroll: the last steps of the tree, when at most 32 threads are left, run inside one warp.
//
// What changed since 03_padding
//   - The tree loop stops while more than 32 threads are still adding. The remaining steps (at most 32
//     threads, all in warp 0) run in a second loop that synchronises only that warp, with __syncwarp(),
//     instead of the whole block with __syncthreads().
//   - Only thread 0 reads the final sum: the other warps no longer wait for warp 0 to finish.
//
// Why it should help
//   __syncthreads() makes every warp of the block wait at each of the last five or six steps, although
//   only warp 0 still works. A warp-level barrier costs far less and lets the other warps leave.
//
// The pitfall (why this is not the 2007 version)
//   The classic unrolled last warp drops all synchronisation and marks shared memory `volatile`, relying
//   on the 32 threads of a warp running in lockstep. Since Volta (compute capability 7.0) threads of a
//   warp are scheduled independently, and that code is a data race: one lane may read a word another lane
//   has not written yet. Here every step reads, then __syncwarp(), then writes, then __syncwarp():
//   `compute-sanitizer --tool racecheck` reports no hazard (docs/stages/04_warp_unroll.md shows both).
//
// What to look for
//   Little change in the stream regime; a gain in the tree regime (--regime tree), where the tree and its
//   barriers are most of the time.
//
// Build and run
//   cmake -S . -B build && cmake --build build --target 04_warp_unroll
//   build/bin/04_warp_unroll               (compare --regime tree with 03_padding --regime tree)
#include "reduce_stage.hpp"

using ladder::Combine;
using ladder::Regime;

// Where element i lives in shared memory: one padding word after every 32.
__device__ unsigned padded(unsigned i) { return i + i / 32; }

// Sums v over the block. Threads pair up with neighbours: a stride of 2*s words between threads.
// The sum is valid in thread 0 only.
__device__ float block_reduce(float v, float* smem) {
  const unsigned tid = threadIdx.x;
  smem[padded(tid)] = v;
  __syncthreads();
  unsigned s = 1;
  for (; 64 * s < blockDim.x; s *= 2) {  // more than 32 threads (blockDim / 2s) add in this step: sync the block
    const unsigned index = 2 * s * tid;
    if (index < blockDim.x) smem[padded(index)] += smem[padded(index + s)];
    __syncthreads();
  }
  if (tid < 32) {  // at most 32 threads add in the remaining steps, all of them in warp 0: sync the warp
    for (; s < blockDim.x; s *= 2) {
      const unsigned index = 2 * s * tid;
      float sum = 0.0f;
      if (index < blockDim.x) sum = smem[padded(index)] + smem[padded(index + s)];
      __syncwarp();  // every lane has read before any lane writes
      if (index < blockDim.x) smem[padded(index)] = sum;
      __syncwarp();  // every lane has written before the next step reads
    }
  }
  return tid == 0 ? smem[0] : 0.0f;
}

__global__ void reduce_kernel(const float* __restrict__ in, std::size_t n, float* __restrict__ out) {
  extern __shared__ float smem[];
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  float sum = 0.0f;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += stride) sum += in[i];
  sum = block_reduce(sum, smem);
  if (threadIdx.x == 0) out[blockIdx.x] = sum;
}

// n values -> one partial sum per block -> ... -> one value, the same kernel at every level.
void reduce(const float* in, std::size_t n, float* out, const ladder::ReduceLaunch& launch, cudaStream_t stream) {
  const std::size_t smem = (launch.block + launch.block / 32) * sizeof(float);
  for (int pass = 0;; ++pass) {
    const auto grid =
        static_cast<unsigned>(std::min<std::size_t>(ladder::ceil_div<std::size_t>(n, launch.block), launch.grid_limit));
    float* dst = grid == 1 ? out : launch.partials[pass % 2];
    reduce_kernel<<<grid, launch.block, smem, stream>>>(in, n, dst);
    LADDER_CHECK_LAUNCH();
    if (grid == 1) return;
    in = dst;
    n = grid;
  }
}

int main(int argc, char** argv) {
  const ladder::ReduceStage stage{"04_warp_unroll", {Regime::kStream, Regime::kTree}, {Combine::kRelaunch}};
  return ladder::run_reduce_stage(argc, argv, stage, reduce);
}
