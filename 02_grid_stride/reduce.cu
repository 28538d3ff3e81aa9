// 02_grid_stride: each thread first sums many elements in a register, in a grid-stride loop.
//
// What changed since 01_naive
//   - The kernel's one load became a loop: thread t of a grid of T threads adds elements t, t + T,
//     t + 2T, ... into a register, then the block runs the same tree as before on those sums.
//   - The launcher caps the grid at what the GPU holds at once (launch.grid_limit: SMs x resident blocks,
//     from the device attributes), instead of n / block blocks.
//
// Why it should help
//   The tree, its barriers and the partial-sum writes now happen once per block of a GPU-sized grid
//   (264 blocks of 1024 threads on an H200) instead of once per `block` elements. What is left is a loop
//   of loads and adds: the kernel becomes a memory stream. Most of the ladder's speed-up lands here.
//   (Each thread still waits for one 4-byte load before it issues the next; 06_float4 fixes that.)
//
// What to look for
//   A large jump in GB/s over 01. Run it with --regime tree (one element per thread again, grid = n /
//   block) to see that the loop, not anything else, made the difference.
//
// Build and run
//   cmake -S . -B build && cmake --build build --target 02_grid_stride
//   build/bin/02_grid_stride               (--regime tree for one element per thread)
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

// n values -> one partial sum per block -> ... -> one value, the same kernel at every level.
void reduce(const float* in, std::size_t n, float* out, const ladder::ReduceLaunch& launch, cudaStream_t stream) {
  const std::size_t smem = launch.block * sizeof(float);
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
  const ladder::ReduceStage stage{"02_grid_stride", {Regime::kStream, Regime::kTree}, {Combine::kRelaunch}};
  return ladder::run_reduce_stage(argc, argv, stage, reduce);
}
