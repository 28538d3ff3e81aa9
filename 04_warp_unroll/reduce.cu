// 04_warp_unroll: once 32 threads or fewer are left in the tree, its last steps run unrolled in one warp.
//
// What changed since 03_padding
//   - The tree loop stops while more than 32 threads are still adding. Whatever the block size (64 to
//     1024), exactly six steps are then left: 32, 16, 8, 4, 2 and 1 threads add, all of them in warp 0.
//     Those six steps have a fixed trip count, so the compiler unrolls them (#pragma unroll), and they
//     synchronise warp 0 alone with __syncwarp() instead of the whole block with __syncthreads().
//   - Only thread 0 reads the final sum: the other warps no longer wait for warp 0 to finish.
//
// Why it should help
//   __syncthreads() makes every warp of the block wait at each of the last six steps, although only
//   warp 0 still works. A warp-level barrier costs far less, the other warps can leave, and the unrolled
//   steps need no loop counter or branch back.
//
// Which barriers the last warp needs (and which it does not)
//   At stride s, lane t reads words 2st and 2st + s and writes word 2st. Within one step no lane writes a
//   word another lane reads (2st' + s = 2st would need 2t' + 1 = 2t), so no barrier is needed between a
//   step's reads and its writes. The next step reads what this step's lanes wrote (read-after-write
//   between lanes), so one __syncwarp() separates consecutive steps: five in all, none after the last,
//   whose result thread 0 itself wrote.
//
// The pitfall (why this is not the 2007 version)
//   The classic unrolled last warp drops all synchronisation and marks shared memory `volatile`, relying
//   on the 32 threads of a warp running in lockstep. Since Volta (compute capability 7.0) threads of a
//   warp are scheduled independently, and that code is a data race: a lane may read a word another lane
//   has not written yet. `compute-sanitizer --tool racecheck` reports no hazard here and reports the race
//   in the volatile version (docs/stages/04_warp_unroll.md shows both).
//
// What to look for
//   Compare both regimes with 03 (--regime stream,tree): the tree and its barriers are a small part of
//   the stream regime's time and most of the tree regime's.
//
// Build and run
//   cmake -S . -B build && cmake --build build --target 04_warp_unroll
//   build/bin/04_warp_unroll --regime stream,tree
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
  if (tid < 32) {  // six steps left (s = blockDim / 64 ... blockDim / 2): 32, 16, ..., 1 threads of warp 0 add
#pragma unroll
    for (int step = 0; step < 6; ++step, s *= 2) {
      const unsigned index = 2 * s * tid;
      if (index < blockDim.x) smem[padded(index)] += smem[padded(index + s)];
      if (step < 5) __syncwarp();  // the next step reads what this step's lanes wrote
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

// Shared memory of one block.
std::size_t smem_bytes(unsigned block) { return (block + block / 32) * sizeof(float); }

// The stream regime's grid is the SM count times this: how many blocks of this kernel one SM holds at once,
// as the occupancy API answers for its registers and shared memory at this block size.
int blocks_per_sm(const ladder::ReduceLaunch& launch) {
  int blocks = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, reduce_kernel, launch.block, smem_bytes(launch.block)));
  return blocks;
}

// n values -> one partial sum per block -> ... -> one value, the same kernel at every level.
ladder::FirstLaunch reduce(const float* in, std::size_t n, float* out, const ladder::ReduceLaunch& launch,
                           cudaStream_t stream) {
  unsigned first_grid = 0;  // the first launch's blocks, for the report
  for (int pass = 0;; ++pass) {
    const auto grid =
        static_cast<unsigned>(std::min<std::size_t>(ladder::ceil_div<std::size_t>(n, launch.block), launch.grid_limit));
    if (pass == 0) first_grid = grid;
    float* dst = grid == 1 ? out : launch.partials[pass % 2];
    reduce_kernel<<<grid, launch.block, smem_bytes(launch.block), stream>>>(in, n, dst);
    LADDER_CHECK_LAUNCH();
    if (grid == 1) return {first_grid, launch.block};
    in = dst;
    n = grid;
  }
}

int main(int argc, char** argv) {
  const ladder::ReduceStage stage{"04_warp_unroll", {Regime::kStream, Regime::kTree}, {Combine::kRelaunch}};
  return ladder::run_reduce_stage(argc, argv, stage, reduce, blocks_per_sm);
}
