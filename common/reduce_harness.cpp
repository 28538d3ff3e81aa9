// run_reduce_stage(): everything a reduce stage does besides its kernel, its launcher and its occupancy query.
//
// A default run, for every configuration (size, regime, block, combine):
//   1. the exact check: the exact input (dyadic values whose every partial sum is exact in float), launched
//      kCheckedLaunches times, each result compared with the exact sum;
//   2. the precision probe: zeros and kProbeElements 13-bit values, summed exactly (input.hpp);
//   3. the measured input (float by default): one checked launch, then the warm-ups and the timed repetitions,
//      each started from a poisoned result and partial sums and each result kept and checked; CUB and the speed
//      of light beside it, every launch of theirs checked the same way.
// Before every checked launch the result and both partials buffers are filled with NaN, whole, and so is the
// shared memory of every SM; the launch is captured into a graph, so the harness sees the grid and block of the
// kernel that reads the input instead of taking the stage's word, and the float bound is computed from that
// shape. The verdict of a configuration is a Verdict (verdict.hpp) holding every one of those checks.
#include <algorithm>

#include "reduce_run.hpp"

namespace ladder {

namespace reduce_run {
namespace {

int bench(const ReduceStage& stage, ReduceFn reduce, BlocksPerSmFn blocks_per_sm, const ReduceOptions& o,
          const DeviceInfo& d) {
  require_tree_grid(o);
  const std::vector<Config> configs = all_configs(o, blocks_per_sm, d);
  auto bench = make_bench(reduce, o, d, configs, !o.check_only);
  const std::uint64_t max_n = *std::max_element(o.sizes.begin(), o.sizes.end());
  auto host = host_floats(max_n, fmt::format("-n {}", max_n));
  std::vector<Run> runs = runs_for(configs);
  std::map<std::uint64_t, References> refs;
  check_exact(*bench, o, host.get(), runs, stage.name);
  check_probe(*bench, o, runs);
  measure(*bench, o, d, host.get(), runs, refs, stage.name);
  return report(stage, o, d, runs, refs, host.get()) ? 0 : 1;
}

}  // namespace
}  // namespace reduce_run

int run_reduce_stage(int argc, char** argv, const ReduceStage& stage, ReduceFn reduce, BlocksPerSmFn blocks_per_sm) {
  ReduceOptions o;
  const ParseOutcome parsed = parse_reduce_options(stage, argc, argv, o);
  if (parsed.exit_status) return print_outcome(parsed);
  return run_program(stage.name, o, [&](const DeviceInfo& d) {
    if (o.self_test != SelfTest::kNone) return reduce_run::self_test(stage, reduce, blocks_per_sm, o, d);
    if (o.determinism > 0) return reduce_run::determinism(stage, reduce, blocks_per_sm, o, d);
    if (o.error_study > 0) return reduce_run::error_study(stage, reduce, blocks_per_sm, o, d);
    return reduce_run::bench(stage, reduce, blocks_per_sm, o, d);
  });
}

}  // namespace ladder
