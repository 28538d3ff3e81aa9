// 01_naive: one element per thread, a shared-memory tree that pairs neighbours.
//
// What it does
//   Every thread loads one float into shared memory. The block then adds pairs in a tree: at step s
//   thread t adds element 2*s*t + s into element 2*s*t, with __syncthreads() after every step, until
//   element 0 holds the block's sum. Each block writes that partial sum; the launcher runs the same
//   kernel again over the partial sums, and again, until one value remains.
//
// Why it is slow (the two problems the next stages fix)
//   - No work per thread: a thread does one load and one addition before the tree starts, so the grid is
//     n / block blocks and most of the time goes to the tree and its barriers, not to reading memory.
//   - Bank conflicts: at step s the threads of a warp touch words 2*s apart, so they fall into the same
//     shared-memory banks 2-, 4-, 8-, 16-, up to 32-way over: an n-way access takes n wavefronts (n - 1
//     replays) where a conflict-free one takes one.
//
// What to look for
//   GB/s far below the peak and far below CUB in the same run. Nsight Compute's shared-memory bank
//   conflict counters (see docs/method.md) are large here and drop to about zero in 03_padding.
//
// Build and run
//   cmake -S . -B build && cmake --build build --target 01_naive
//   build/bin/01_naive                     (--help lists the options; -n 2^24 for a smaller input)
#include "reduce_stage.hpp"

using ladder::Combine;
using ladder::Regime;

// Sums v over the block. Threads pair up with neighbours: a stride of 2*s words between threads.
__device__ float block_reduce(float v, float* smem) {
  const unsigned tid = threadIdx.x;
  smem[tid] = v;
  __syncthreads();
  for (unsigned s = 1; s < blockDim.x; s *= 2) {
    const unsigned index = 2 * s * tid;
    if (index < blockDim.x) smem[index] += smem[index + s];
    __syncthreads();
  }
  return smem[0];
}

__global__ void reduce_kernel(const float* __restrict__ in, std::size_t n, float* __restrict__ out) {
  extern __shared__ float smem[];
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  float sum = i < n ? in[i] : 0.0f;  // one element per thread
  sum = block_reduce(sum, smem);
  if (threadIdx.x == 0) out[blockIdx.x] = sum;
}

// Shared memory of one block: one float per thread.
std::size_t smem_bytes(unsigned block) { return block * sizeof(float); }

// n values -> one partial sum per block -> ... -> one value, the same kernel at every level.
ladder::FirstLaunch reduce(const float* in, std::size_t n, float* out, const ladder::ReduceLaunch& launch,
                           cudaStream_t stream) {
  unsigned first_grid = 0;  // the first launch's blocks, for the report
  for (int pass = 0;; ++pass) {
    const auto grid = static_cast<unsigned>(ladder::ceil_div<std::size_t>(n, launch.block));
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
  const ladder::ReduceStage stage{"01_naive", {Regime::kTree}, {Combine::kRelaunch}};
  return ladder::run_reduce_stage(argc, argv, stage, reduce);
}
