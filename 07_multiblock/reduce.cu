// 07_multiblock: the partial sums of the blocks are combined in the same launch.
//
// What changed since 06_float4
//   - The launcher no longer relaunches the kernel over the partial sums until one value remains. It runs
//     one of three combine strategies (--combine):
//       atomic      *out is zeroed, and thread 0 of each block atomicAdd()s its block's sum into it.
//       two-pass    each block writes its sum to a partials array; a second launch of one block adds
//                   them up.
//       last-block  each block writes its sum to the partials array, makes it visible device-wide
//                   (__threadfence), and takes a ticket (atomicAdd on a counter). The block that draws the
//                   last ticket knows every other sum is written: it fences again and adds them up, then
//                   resets the counter for the next launch. One launch, no memset.
//   - The kernel is a template over the strategy, so each variant compiles to exactly its own code.
//   - The default is atomic, the fastest of the three at every size measured on an H200; it is not
//     bitwise reproducible (see below). last-block is the fastest deterministic one.
//
// Why it should help
//   Relaunching costs a launch per level (two for a GPU-sized grid of 1024-thread blocks), each a few
//   microseconds during which the GPU mostly waits. At small n that is most of the time. last-block and
//   atomic need one launch.
//
// What to look for
//   At large n every strategy streams at close to the peak; at small n the one-launch strategies win.
//   `--determinism 20 --combine all`: two-pass and last-block give bitwise the same sum every run (their
//   order of additions is fixed); atomic need not (blocks arrive in any order, and float addition is
//   not associative).
//
// Build and run
//   cmake -S . -B build && cmake --build build --target 07_multiblock
//   build/bin/07_multiblock --combine all  (all three side by side)
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
      __threadfence();  // release: this block's sum is visible to every block before its ticket is
      is_last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (is_last) {  // every other block has written its sum and taken its ticket
      __threadfence();  // acquire: the reads below see what the other blocks wrote before their tickets
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

// One launch over the input, then the partial sums are combined as launch.combine says.
void reduce(const float* in, std::size_t n, float* out, const ladder::ReduceLaunch& launch, cudaStream_t stream) {
  const std::size_t smem = launch.block / 32 * sizeof(float);
  const auto grid =
      static_cast<unsigned>(std::min<std::size_t>(ladder::ceil_div<std::size_t>(n, launch.block), launch.grid_limit));
  switch (launch.combine) {
    case Combine::kAtomic:
      CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(float), stream));
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
}

int main(int argc, char** argv) {
  const ladder::ReduceStage stage{
      "07_multiblock", {Regime::kStream, Regime::kTree}, {Combine::kAtomic, Combine::kLastBlock, Combine::kTwoPass}};
  return ladder::run_reduce_stage(argc, argv, stage, reduce);
}
