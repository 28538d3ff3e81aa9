// 06_float4: the grid-stride loop reads 16-byte vectors, four of them in flight per thread.
//
// What changed since 05_shuffle
//   - The loop reads the input as float4 vectors: one load instruction brings 16 bytes, four floats,
//     which the thread adds pairwise before adding them to its sum.
//   - Each iteration issues kLoadsInFlight (4) of those loads, `stride` vectors apart, before it adds any
//     of them. In 02..05 a thread issued one 4-byte load and waited for it before the next; now it has 64
//     bytes on their way at once. (CUB's reduction does the same: 4-wide vectors, 16 items per thread.)
//   - A float4 load needs a 16-byte aligned address, and n need not be a multiple of 4. So the input is
//     peeled: the first `head` elements (0 to 3) bring the pointer to a 16-byte boundary, the middle is
//     read as float4, and the last `tail` elements (0 to 3) are read one by one. Any n and any input
//     pointer (for example an allocation + 1 float, --offset 1) give the right sum and no access outside
//     [in, in + n).
//
// Why it should help
//   A memory stream needs many bytes in flight: the DRAM bandwidth times its latency, several MB on an
//   H200, spread over every thread of the GPU. Wider loads and more of them per thread put those bytes
//   in flight with a quarter of the load instructions and none of the waiting between them.
//
// What to look for
//   GB/s close to the peak and to CUB in the stream regime (set kLoadsInFlight to 1 and rebuild to see
//   what the batching adds). In the tree regime three threads in four find no float4 to load (the grid is
//   still n / block), and the time is the tree's as before.
//
// Build and run
//   cmake -S . -B build && cmake --build build --target 06_float4
//   build/bin/06_float4                    (try --offset 1 and -n 1000003: still PASS)
#include "reduce_stage.hpp"

using ladder::Combine;
using ladder::Regime;

// float4 loads each thread issues before it adds any of them (one thing to try: 1, 2, 8).
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

// n values -> one partial sum per block -> ... -> one value, the same kernel at every level.
void reduce(const float* in, std::size_t n, float* out, const ladder::ReduceLaunch& launch, cudaStream_t stream) {
  const std::size_t smem = launch.block / 32 * sizeof(float);
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
  const ladder::ReduceStage stage{"06_float4", {Regime::kStream, Regime::kTree}, {Combine::kRelaunch}};
  return ladder::run_reduce_stage(argc, argv, stage, reduce);
}
