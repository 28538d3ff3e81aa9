// 03_padding: the same tree, on a shared array with one padding word after every 32.
//
// What changed since 02_grid_stride
//   - Shared-memory element i is stored at index i + i / 32 (padded(i)), and smem_bytes() asks for
//     block / 32 more words. Nothing else: same loads, same tree, same launches.
//
// Why it should help
//   Shared memory has 32 banks; word w lives in bank w % 32. In the tree of 01/02 a warp's threads touch
//   words 2*s apart, so several threads land in one bank and the access is replayed (2-way at s = 1,
//   4-way at s = 2, up to 16-way and more). With a padding word after every 32 words, words 32 apart move
//   to neighbouring banks, and at every step of this tree the threads of a warp that add touch different
//   banks (all 32 up to s = 16; from s = 32 on only 16, 8, ... threads add, each in a bank of its own).
//
// What to look for
//   Nsight Compute's shared-memory bank-conflict counters fall to about zero (docs/stages/03_padding.md
//   has the command and the measured counts). Compare both regimes (--regime stream,tree): in the stream
//   regime the tree runs once per block of a GPU-sized grid; in the tree regime the tree is the work.
//
// Build and run
//   cmake -S . -B build && cmake --build build --target 03_padding
//   build/bin/03_padding --regime stream,tree
#include "reduce_stage.hpp"

using ladder::Combine;
using ladder::Regime;

// Where element i lives in shared memory: one padding word after every 32.
__device__ unsigned padded(unsigned i) { return i + i / 32; }

// Sums v over the block. Threads pair up with neighbours: a stride of 2*s words between threads.
__device__ float block_reduce(float v, float* smem) {
  const unsigned tid = threadIdx.x;
  smem[padded(tid)] = v;
  __syncthreads();
  for (unsigned s = 1; s < blockDim.x; s *= 2) {
    const unsigned index = 2 * s * tid;
    if (index < blockDim.x) smem[padded(index)] += smem[padded(index + s)];
    __syncthreads();
  }
  return smem[0];
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
  const ladder::ReduceStage stage{"03_padding", {Regime::kStream, Regime::kTree}, {Combine::kRelaunch}};
  return ladder::run_reduce_stage(argc, argv, stage, reduce, blocks_per_sm);
}
