// The launch configurations of a reduce run and the benches that run them (reduce_run.hpp).
#include <algorithm>

#include "reduce_run.hpp"

namespace ladder::reduce_run {

// The shape of CUB's own sum (for checking the reference itself): 256-thread blocks of 16 items per thread per
// tile, and a second pass of one block over the partial sums. Modelled with at most one block per SM, the
// fewest CUB runs with enough work: the fewer the blocks, the longer each thread's chain and the looser the bound.
SumShape cub_shape(std::uint64_t n, const DeviceInfo& d) {
  const std::uint64_t blocks = std::min<std::uint64_t>(ceil_div<std::uint64_t>(n, 4096), d.sm_count);
  return stage_shape(n, blocks, 256, Combine::kTwoPass);
}

// The read-only kernel's: each thread's chain of floats; the kept per-thread sums are then added in double.
SumShape read_shape(std::uint64_t n, std::uint64_t threads) {
  std::uint64_t per_thread = 0, busy = 0;
  return SumShape().chains(n, 1, threads, &per_thread, &busy);
}

// One launch configuration of a stage, with the grid limit it resolves to.

// Resolves the grid limit: the tree regime has none, --grid wins, else SMs x the stage's occupancy answer.
Config make_config(std::uint64_t n, Regime regime, unsigned block, Combine combine, unsigned requested_grid,
                   BlocksPerSmFn blocks_per_sm, const DeviceInfo& d) {
  Config c{n, regime, block, combine, kMaxGrid, 0};
  if (regime == Regime::kTree) return c;
  if (requested_grid) {
    c.limit = requested_grid;
    return c;
  }
  c.blocks_per_sm = blocks_per_sm(ReduceLaunch{block, 0, combine, {nullptr, nullptr}, nullptr});
  if (c.blocks_per_sm < 1) {
    throw UsageError(fmt::format("--block {}: the occupancy API says no block of {} threads of this kernel fits on "
                                 "an SM",
                                 block, block));
  }
  c.limit = static_cast<unsigned>(std::min<long long>(static_cast<long long>(d.sm_count) * c.blocks_per_sm, kMaxGrid));
  return c;
}

std::string launch_words(const Config& c, unsigned requested_grid, const DeviceInfo& d) {
  if (c.regime == Regime::kTree) return "one element per thread, grid = n / block";
  if (requested_grid) return fmt::format("grid = min(n / block, --grid {})", requested_grid);
  return fmt::format("grid = min(n / block, {} SMs x {} blocks per SM from the occupancy API)", d.sm_count,
                     c.blocks_per_sm);
}


std::uint64_t max_partials_for(const std::vector<Config>& configs) {
  std::uint64_t most = 1;
  for (const auto& c : configs) most = std::max(most, max_grid(c.n, c.block, c.limit));
  return most;
}

void require_tree_grid(const ReduceOptions& o) {
  if (std::find(o.regimes.begin(), o.regimes.end(), Regime::kTree) == o.regimes.end()) return;
  for (auto n : o.sizes) {
    for (auto b : o.blocks) {
      if (ceil_div<std::uint64_t>(n, b) > kMaxGrid) {
        throw UsageError(fmt::format("-n {}: the tree regime would launch {} blocks of {} threads; a grid holds at "
                                     "most 2^31-1 blocks (use a larger --block or the stream regime)",
                                     n, ceil_div<std::uint64_t>(n, b), b));
      }
    }
  }
}

std::vector<Config> all_configs(const ReduceOptions& o, BlocksPerSmFn blocks_per_sm, const DeviceInfo& d) {
  std::vector<Config> configs;
  for (auto n : o.sizes) {
    for (auto regime : o.regimes) {
      for (auto block : o.blocks) {
        for (auto combine : o.combines) configs.push_back(make_config(n, regime, block, combine, o.grid, blocks_per_sm, d));
      }
    }
  }
  return configs;
}

SumShape shape_of(const Config& c, const FirstLaunch& f) { return stage_shape(c.n, f.grid, f.block, c.combine); }


// ---- the default run -------------------------------------------------------------------------------------

// Sizes the device buffers for every configuration and refuses what does not fit, before any allocation.
std::unique_ptr<ReduceBench> make_bench(ReduceFn reduce, const ReduceOptions& o, const DeviceInfo& d,
                                        const std::vector<Config>& configs, bool timing) {
  const std::uint64_t max_n = *std::max_element(o.sizes.begin(), o.sizes.end());
  const std::uint64_t max_partials = max_partials_for(configs);
  const auto [needed, breakdown] = ReduceBench::memory_needed(o, d, max_n, max_partials, o.offset, timing);
  require_device_memory(d, needed, breakdown, fmt::format("-n {}", max_n));
  return std::make_unique<ReduceBench>(reduce, d, max_n, max_partials, o.offset, timing ? o.flush : Flush::kNone,
                                       o.shared_poison);
}

// A bench for the untimed studies (--self-test, --error-study): inputs up to max_n at every offset up to
// kSelfTestMaxOffset, no flush; refuses what does not fit, before any allocation.
ReduceBench untimed_bench(ReduceFn reduce, const ReduceOptions& o, const DeviceInfo& d, std::uint64_t max_n,
                          std::uint64_t max_partials, const char* what) {
  ReduceOptions sized = o;
  sized.sizes = {max_n};
  const auto [needed, breakdown] = ReduceBench::memory_needed(sized, d, max_n, max_partials, kSelfTestMaxOffset, false);
  require_device_memory(d, needed, breakdown, what);
  return ReduceBench(reduce, d, max_n, max_partials, kSelfTestMaxOffset, Flush::kNone, o.shared_poison);
}

std::vector<Run> runs_for(const std::vector<Config>& configs) {
  std::vector<Run> runs(configs.size());
  for (std::size_t i = 0; i < configs.size(); ++i) runs[i].c = configs[i];
  return runs;
}

}  // namespace ladder::reduce_run
