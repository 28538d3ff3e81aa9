// 07_multiblock: the partial sums of the blocks are combined without relaunching the kernel per level.
//
// What changed since 06_float4
//   - The launcher no longer relaunches the kernel over the partial sums until one value remains. It runs
//     one of three combine strategies (--combine):
//       atomic      *out is zeroed, and thread 0 of each block atomicAdd()s its block's sum into it.
//       two-pass    each block writes its sum to a partials array; a second launch of one block adds
//                   them up.
//       last-block  each block's thread 0 writes its sum to the partials array and takes a ticket with an
//                   acquire-release atomic add on a counter. The release publishes the block's sum before
//                   its ticket; the acquire, in the thread that drew the last ticket, makes every other
//                   block's sum visible to it. That block adds the sums up and resets the counter to 0 for
//                   the next launch. One launch, no memset. (The counter starts at 0 because the harness
//                   zeroes it once, with cudaMemset, when it allocates it: launch.ticket in reduce_stage.hpp.)
//   - When one block covers the input with kOneBlockLoads float4 loads per thread, the launcher runs
//     one_block_kernel instead: one block, of just the warps the input needs, which writes *out itself, so
//     there is no combine at all (no memset, atomic, ticket or second launch), as CUB's DeviceReduce does
//     for small inputs with its single-tile kernel. It has no loop and 32-bit indices: each thread issues
//     its loads at once, at fixed offsets, where reduce_kernel first works out a 64-bit grid-stride loop.
//   - The kernel is a template over the strategy, so each variant compiles to exactly its own code.
//   - The default is atomic; it is not bitwise reproducible (see below). last-block and two-pass are.
//
// Why it should help
//   Relaunching costs a launch per level, each a few microseconds (an empty launch alone takes about that:
//   docs/stages/07_multiblock.md measures it); at small n that is a share of the time worth saving. last-block
//   and atomic need one launch (atomic also a 4-byte memset), and an input one block covers needs one
//   launch and nothing else.
//
// What to look for
//   ./ladder run shows atomic and last-block side by side; --combine all shows all three, and notes atomic's
//   distinct results over all its launches: two-pass and last-block give bitwise the same sum every run (their
//   order of additions is fixed); atomic need not (blocks arrive in any order, and float addition is
//   not associative).
//
// Build and run
//   cmake -S . -B build && cmake --build build --target 07_multiblock
//   build/bin/07_multiblock --combine all  (all three side by side)
#include <cuda/atomic>

#include "reduce_stage.hpp"

using ladder::Combine;
using ladder::Regime;

// float4 loads each thread issues before it adds any of them (1: float4 alone; ./ladder try measures 1, 2, 4, 8).
constexpr int kLoadsInFlight = 4;

// Inputs of at most this many float4 loads per thread of one block are summed by one_block_kernel alone, which
// writes *out itself: no memset, no atomic, no ticket, no second launch (./ladder try 07 kOneBlockLoads=...).
constexpr int kOneBlockLoads = kLoadsInFlight;

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

template <Combine kCombine>
__global__ void reduce_kernel(const float* __restrict__ in, std::size_t n, float* __restrict__ out,
                              float* __restrict__ partials, unsigned* __restrict__ ticket) {
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
  if constexpr (kCombine == Combine::kAtomic) {
    if (threadIdx.x == 0) atomicAdd(out, sum);  // *out was zeroed before the launch
  } else if constexpr (kCombine == Combine::kTwoPass) {
    if (threadIdx.x == 0) out[blockIdx.x] = sum;  // the second launch adds these up
  } else {
    __shared__ bool is_last;
    if (threadIdx.x == 0) {
      partials[blockIdx.x] = sum;
      // Release: this block's sum is visible before its ticket is. Acquire: the thread that draws the last
      // ticket sees every sum written before the other tickets.
      cuda::atomic_ref<unsigned, cuda::thread_scope_device> counter(*ticket);
      is_last = counter.fetch_add(1u, cuda::memory_order_acq_rel) == gridDim.x - 1;
    }
    __syncthreads();  // shares is_last, and orders the block's reads below after thread 0's acquire
    if (is_last) {  // every other block has written its sum and taken its ticket
      float total = 0.0f;
      for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x) total += __ldcg(&partials[b]);  // via L2
      total = block_reduce(total, smem);
      if (threadIdx.x == 0) {
        *out = total;
        *ticket = 0;  // ready for the next launch
      }
    }
  }
}

// One block sums all n <= 4 * kOneBlockLoads * blockDim.x floats and writes the result: nothing to combine.
// The same head, float4 body and tail as reduce_kernel, in the same order of additions, without its loop.
__global__ void one_block_kernel(const float* __restrict__ in, unsigned n, float* __restrict__ out) {
  __shared__ float smem[32];
  const auto to_boundary = static_cast<unsigned>((16 - reinterpret_cast<std::uintptr_t>(in) % 16) % 16 / 4);
  const unsigned head = min(to_boundary, n);
  const unsigned vectors = (n - head) / 4, tail = (n - head) % 4;
  const float4* body = reinterpret_cast<const float4*>(in + head);
  float4 v[kOneBlockLoads];
#pragma unroll
  for (int k = 0; k < kOneBlockLoads; ++k) {  // every load issued before any add
    const unsigned i = threadIdx.x + k * blockDim.x;
    v[k] = i < vectors ? body[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  }
  float sum = 0.0f;
#pragma unroll
  for (int k = 0; k < kOneBlockLoads; ++k) sum += (v[k].x + v[k].y) + (v[k].z + v[k].w);
  if (threadIdx.x < head) sum += in[threadIdx.x];
  if (threadIdx.x < tail) sum += in[n - tail + threadIdx.x];
  sum = block_reduce(sum, smem);
  if (threadIdx.x == 0) *out = sum;
}

// Shared memory of one block.
std::size_t smem_bytes(unsigned block) { return block / 32 * sizeof(float); }

// The stream regime's grid is the SM count times this: how many blocks of this kernel one SM holds at once,
// as the occupancy API answers for its registers and shared memory at this block size.
int blocks_per_sm(const ladder::ReduceLaunch& launch) {
  int blocks = 0;
  auto* kernel = launch.combine == Combine::kAtomic    ? reduce_kernel<Combine::kAtomic>  // this combine's kernel
                 : launch.combine == Combine::kTwoPass ? reduce_kernel<Combine::kTwoPass>
                                                       : reduce_kernel<Combine::kLastBlock>;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, launch.block, smem_bytes(launch.block)));
  return blocks;
}

// One launch over the input, then the partial sums are combined as launch.combine says.
ladder::FirstLaunch reduce(const float* in, std::size_t n, float* out, const ladder::ReduceLaunch& launch,
                           cudaStream_t stream) {
  const std::size_t smem = smem_bytes(launch.block);
  const std::size_t per_block = std::size_t{4} * kOneBlockLoads * launch.block;  // floats one block covers
  if (n <= per_block) {  // one block, of just the warps the input needs, and no combine
    const auto threads =
        static_cast<unsigned>(ladder::ceil_div<std::size_t>(ladder::ceil_div<std::size_t>(n, 4 * kOneBlockLoads), 32) * 32);
    one_block_kernel<<<1, threads, 0, stream>>>(in, static_cast<unsigned>(n), out);
    LADDER_CHECK_LAUNCH();
    return {1, threads};
  }
  const auto grid =
      static_cast<unsigned>(std::min<std::size_t>(ladder::ceil_div<std::size_t>(n, launch.block), launch.grid_limit));
  switch (launch.combine) {
    case Combine::kAtomic:
      CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(float), stream));  // the blocks add into *out
      reduce_kernel<Combine::kAtomic><<<grid, launch.block, smem, stream>>>(in, n, out, nullptr, nullptr);
      break;
    case Combine::kTwoPass:
      reduce_kernel<Combine::kTwoPass><<<grid, launch.block, smem, stream>>>(in, n, launch.partials[0], nullptr, nullptr);
      LADDER_CHECK_LAUNCH();
      reduce_kernel<Combine::kTwoPass><<<1, launch.block, smem, stream>>>(launch.partials[0], grid, out, nullptr, nullptr);
      break;
    default:  // Combine::kLastBlock
      reduce_kernel<Combine::kLastBlock><<<grid, launch.block, smem, stream>>>(in, n, out, launch.partials[0],
                                                                               launch.ticket);
  }
  LADDER_CHECK_LAUNCH();
  return {grid, launch.block};
}

int main(int argc, char** argv) {
  const ladder::ReduceStage stage{
      "07_multiblock", {Regime::kStream, Regime::kTree}, {Combine::kAtomic, Combine::kLastBlock, Combine::kTwoPass}};
  return ladder::run_reduce_stage(argc, argv, stage, reduce, blocks_per_sm);
}
