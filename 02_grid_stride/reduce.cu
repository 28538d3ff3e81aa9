// 02_grid_stride: each thread first sums many elements in a register, in a grid-stride loop.
//
// What changed since 01_naive
//   - The kernel's one load became a loop: thread t of a grid of T threads adds elements t, t + T,
//     t + 2T, ... into a register, then the block runs the same tree as before on those sums.
//   - The grid no longer grows with n. blocks_per_sm() asks the occupancy API how many blocks of this
//     kernel one SM holds at once (its registers and shared memory decide); the harness calls it once,
//     multiplies by the SM count, prints the product and hands it to the launcher as launch.grid_limit.
//
// Why it should help
//   The tree, its barriers and the partial-sum writes now happen once per block of a GPU-sized grid
//   instead of once per `block` elements. What is left is a loop of loads and adds: the kernel becomes a
//   memory stream. (Each thread still waits for one 4-byte load before it issues the next; 06_float4
//   changes that.)
//
// What to look for
//   The "launch" line names the grid the occupancy API gave. Run with --regime stream,tree: the tree
//   regime is one element per thread again (grid = n / block), so the loop, not anything else, is what
//   the stream column measures. --grid N overrides the grid (./ladder try 02 --grid=... measures several).
//
// Build and run
//   cmake -S . -B build && cmake --build build --target 02_grid_stride
//   build/bin/02_grid_stride --regime stream,tree
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
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  float sum = 0.0f;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += stride) sum += in[i];
  sum = block_reduce(sum, smem);
  if (threadIdx.x == 0) out[blockIdx.x] = sum;
}

// Shared memory of one block.
std::size_t smem_bytes(unsigned block) { return block * sizeof(float); }

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
  const ladder::ReduceStage stage{"02_grid_stride", {Regime::kStream, Regime::kTree}, {Combine::kRelaunch}};
  return ladder::run_reduce_stage(argc, argv, stage, reduce, blocks_per_sm);
}
