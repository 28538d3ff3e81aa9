// 05_shuffle: each warp reduces in registers with __shfl_down_sync; shared memory keeps one value per warp.
//
// What changed since 04_warp_unroll
//   - The shared-memory tree is gone. Each warp adds its 32 values in registers: lane i adds the value of
//     lane i + 16, then i + 8, 4, 2, 1 (__shfl_down_sync), leaving the warp's sum in lane 0. Lane 0 of each
//     warp writes it to shared memory (block / 32 words), one barrier, and warp 0 adds those the same way.
//
// Why it should help
//   A shuffle moves a value between lanes without a shared-memory store and load, and the warp's lanes
//   are synchronised by the instruction itself (the mask 0xffffffff names all 32 lanes, which all take
//   part). The block needs one __syncthreads() instead of one per tree step, and almost nothing goes
//   through shared memory any more: one store per warp and one load per lane of warp 0, so the bank
//   conflicts the tree had are gone (docs/stages/05_shuffle.md counts what remains).
//
// What to look for
//   Compare both regimes with 04 (--regime stream,tree): the tree is a small part of the stream regime's
//   time and most of the tree regime's.
//
// Build and run
//   cmake -S . -B build && cmake --build build --target 05_shuffle
//   build/bin/05_shuffle --regime stream,tree
#include "reduce_stage.hpp"

using ladder::Combine;
using ladder::Regime;

// Sums v over the 32 lanes of a warp in registers; lane 0 ends with the warp's sum.
__device__ float warp_reduce(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

// Sums v over the block: every warp in registers, then warp 0 over the per-warp sums.
// The sum is valid in thread 0 only.
__device__ float block_reduce(float v, float* smem) {
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  v = warp_reduce(v);
  if (lane == 0) smem[warp] = v;
  __syncthreads();
  if (warp == 0) v = warp_reduce(lane < blockDim.x / 32 ? smem[lane] : 0.0f);
  return v;
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
std::size_t smem_bytes(unsigned block) { return block / 32 * sizeof(float); }

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
  const ladder::ReduceStage stage{"05_shuffle", {Regime::kStream, Regime::kTree}, {Combine::kRelaunch}};
  return ladder::run_reduce_stage(argc, argv, stage, reduce, blocks_per_sm);
}
