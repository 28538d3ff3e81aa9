// What a reduce stage (01..07) sees of the harness. A stage file holds a kernel, a launcher with the signature of
// ReduceFn, and a main() that hands both to run_reduce_stage(); options, input, checks, timing, the CUB reference and
// the report all happen in common/, the same way for every stage.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <cuda_runtime.h>

#include "cuda_check.hpp"

namespace ladder {
template <typename T>
__host__ __device__ constexpr T ceil_div(T a, T b) { return (a + b - 1) / b; }

// How the per-block partial sums become one value.
enum class Combine {
  kRelaunch,   // launch the same kernel again over the partial sums until one value remains (01..06)
  kAtomic,     // each block atomicAdd()s its partial sum into a zeroed result (07)
  kTwoPass,    // the blocks write partial sums; a second, one-block launch adds them up (07)
  kLastBlock,  // the blocks write partial sums; the last block to finish adds them up (07)
};
inline constexpr const char* kCombineNames[] = {"relaunch", "atomic", "two-pass", "last-block"};  // the enum's order

// Which launches a stage can run. tree: one element per thread, grid = n / block, as in 01 (the block-level tree
// dominates). stream: a grid that just fills the GPU (SMs x blocks_per_sm()), each thread looping over many elements
// (the kernel streams memory; the tree is a small part of the time).
enum class Regime { kStream, kTree };

struct ReduceStage {
  const char* name;                    // the directory name, e.g. "02_grid_stride"
  std::vector<Regime> regimes;         // supported; the first is the default
  std::vector<Combine> combines = {Combine::kRelaunch};  // supported; the first is the default
};

// Everything a launcher needs besides the input and the output.
struct ReduceLaunch {
  unsigned block;        // threads per block: a power of two from 64 to 1024
  unsigned grid_limit;   // the most blocks one launch may use (stream: SMs x blocks_per_sm() or --grid; tree: 2^31-1)
  Combine combine;       // how partial sums are combined (one of the stage's combines)
  float* partials[2];    // device scratch, each room for ceil(n / block) floats
  unsigned* ticket;      // a device counter the harness zeroes once, when it allocates it (last-block pattern)
};

// The shape of a stage's first launch, the one that reads the input: what the report prints and the bound counts with.
struct FirstLaunch {
  unsigned grid;   // blocks
  unsigned block;  // threads per block
};

// Reduces in[0..n) into *out on `stream`, and returns the shape of its first launch. Every launch it makes is checked
// with LADDER_CHECK_LAUNCH(). Before a checked launch the harness fills *out and both partials buffers with NaN: a
// launch must not depend on what an earlier one left there. The checked launches are captured into a CUDA graph, so a
// launcher only enqueues work on `stream` (no synchronisation, no legacy-stream calls); every kernel it launches takes
// a pointer first, and exactly one takes `in`: the harness reads that kernel's grid and block from the graph and
// refuses a returned shape that differs.
using ReduceFn = FirstLaunch (*)(const float* in, std::size_t n, float* out, const ReduceLaunch& launch,
                                 cudaStream_t stream);

// A stream-regime stage's first kernel: how many of its blocks one SM holds at once, as
// cudaOccupancyMaxActiveBlocksPerMultiprocessor answers for launch.block (and launch.combine).
using BlocksPerSmFn = int (*)(const ReduceLaunch& launch);
// Runs the stage as a program; returns 0 pass, 1 check failed, 2 usage or runtime error, 77 no usable GPU. A stage
// without a stream regime (01) passes no blocks_per_sm.
int run_reduce_stage(int argc, char** argv, const ReduceStage& stage, ReduceFn reduce,
                     BlocksPerSmFn blocks_per_sm = nullptr);
}  // namespace ladder
