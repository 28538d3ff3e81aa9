// 06_float4: more bytes in flight per thread: 16-byte loads, kLoadsInFlight of them issued at once.
//
// What changed since 05_shuffle (one idea, bytes in flight per thread, in two parts)
//   - Wider loads: the loop reads the input as float4 vectors. One load instruction brings 16 bytes, four
//     floats, which the thread adds pairwise before adding them to its sum.
//   - More loads at once: each iteration issues kLoadsInFlight of those loads, `stride` vectors apart,
//     before it adds any of them. With kLoadsInFlight = 1 this is float4 alone.
//   - A float4 load needs a 16-byte aligned address, and n need not be a multiple of 4. So the input is
//     peeled: the first `head` elements (0 to 3) bring the pointer to a 16-byte boundary, the middle is
//     read as float4, and the last `tail` elements (0 to 3) are read one by one. Any n and any input
//     pointer (for example an allocation + 1 float, --offset 1) give the right sum and no access outside
//     [in, in + n).
//
// Why it should help
//   A memory stream needs bandwidth x latency bytes in flight, spread over every thread of the GPU. In
//   02..05 a thread issues one 4-byte load and waits for it before the next. Here one instruction asks for
//   16 bytes, and kLoadsInFlight of them are on their way before the first add waits.
//
// What to look for
//   The stream regime's GB/s against 05 and against CUB. How much of the gain the float4 loads bring and
//   how much the extra loads in flight add is measured, not assumed: ./ladder try 06
//   kLoadsInFlight=1,2,4,8 builds each variant and runs it beside this file; docs/stages/06_float4.md
//   shows the split. In the tree regime three threads in four find no float4 to load (the grid is still
//   n / block), and the tree is still the time.
//
// Build and run
//   cmake -S . -B build && cmake --build build --target 06_float4
//   build/bin/06_float4 --regime stream,tree   (try --offset 1 and -n 1000003: still PASS)
#include "reduce_stage.hpp"

using ladder::Combine;
using ladder::Regime;

// float4 loads each thread issues before it adds any of them (1: float4 alone; ./ladder try measures 1, 2, 4, 8).
constexpr int kLoadsInFlight = 4;

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
  const std::size_t tid = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  // in[0, head) up to a 16-byte boundary, then whole float4s, then in[n - tail, n).
  const std::size_t to_boundary = (16 - reinterpret_cast<std::uintptr_t>(in) % 16) % 16 / 4;  // 0..3 floats
  const std::size_t head = to_boundary < n ? to_boundary : n;
  const std::size_t vectors = (n - head) / 4;
  const std::size_t tail = (n - head) % 4;
  const float4* body = reinterpret_cast<const float4*>(in + head);
  float sum = 0.0f;
  std::size_t i = tid;
  for (; i + (kLoadsInFlight - 1) * stride < vectors; i += kLoadsInFlight * stride) {
    float4 v[kLoadsInFlight];
#pragma unroll
    for (int k = 0; k < kLoadsInFlight; ++k) v[k] = body[i + k * stride];  // all loads issued before any add
#pragma unroll
    for (int k = 0; k < kLoadsInFlight; ++k) sum += (v[k].x + v[k].y) + (v[k].z + v[k].w);
  }
  for (; i < vectors; i += stride) {
    const float4 v = body[i];
    sum += (v.x + v.y) + (v.z + v.w);
  }
  if (tid < head) sum += in[tid];
  if (tid < tail) sum += in[n - tail + tid];
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
  const ladder::ReduceStage stage{"06_float4", {Regime::kStream, Regime::kTree}, {Combine::kRelaunch}};
  return ladder::run_reduce_stage(argc, argv, stage, reduce, blocks_per_sm);
}
