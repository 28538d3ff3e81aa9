// The untimed studies of a reduce stage: --self-test (every awkward size, block, input, launch, alignment and
// combine), --determinism (the same reduction R times, bit for bit) and --error-study (the float bound against the
// errors of N random configurations).
#include <algorithm>
#include <cstring>
#include <random>
#include <set>
#include <tuple>

#include "reduce_run.hpp"

namespace ladder::reduce_run {

// ---- --self-test: every awkward size, block, input, launch, alignment and combine ------------------------

struct SelfTestPlan {
  std::vector<std::uint64_t> sizes;
  std::vector<unsigned> blocks;
  struct Launch {
    Regime regime;
    unsigned grid;
  };
  std::vector<Launch> launches;
};

SelfTestPlan self_test_plan(const ReduceStage& stage, bool full) {
  SelfTestPlan p;
  p.sizes = full ? std::vector<std::uint64_t>{1, 2, 31, 32, 33, 255, 256, 257, 4097, 1000003, (1u << 24) + 1}
                 : std::vector<std::uint64_t>{1, 2, 3, 4, 33, 4097, 4098, 4099, 4100};  // every n mod 4
  p.blocks = full ? std::vector<unsigned>{64, 128, 256, 512, 1024} : std::vector<unsigned>{64, 1024};
  // Stream-regime grids: from the occupancy API, and small ones that make each thread walk far.
  const std::vector<unsigned> stream_grids = full ? std::vector<unsigned>{0, 1, 7} : std::vector<unsigned>{0, 3};
  for (auto regime : stage.regimes) {
    if (regime == Regime::kTree) {
      p.launches.push_back({Regime::kTree, 0});
    } else {
      for (auto g : stream_grids) p.launches.push_back({Regime::kStream, g});
    }
  }
  return p;
}

// The inputs of the self-test: the exact one, the precision probe and the float one.
enum class SelfTestInput { kExact, kProbe, kFloat };
const char* to_string(SelfTestInput i) {
  return i == SelfTestInput::kExact ? "exact" : i == SelfTestInput::kProbe ? "probe" : "float";
}

// What the self-test has run so far, and its one verdict.
struct SelfTestTally {
  std::size_t runs = 0, failures = 0, unbounded = 0;
  Verdict all;
};

// Every block, launch and combine of the plan at one size of one input (already on the GPU at input()).
void self_test_size(ReduceBench& bench, const ReduceStage& stage, BlocksPerSmFn blocks_per_sm, const DeviceInfo& d,
                    const SelfTestPlan& plan, SelfTestInput input, unsigned offset, std::uint64_t n,
                    const SumReference& ref, SelfTestTally& tally) {
  const InputMode mode = input == SelfTestInput::kFloat ? InputMode::kFloat : InputMode::kExact;
  std::size_t runs = 0, failures = 0;
  for (auto block : plan.blocks) {
    for (const auto& l : plan.launches) {
      for (auto combine : stage.combines) {
        const Config c = make_config(n, l.regime, block, combine, l.grid, blocks_per_sm, d);
        const auto got = bench.run_checked(c);
        const SumCheck check = check_sum(got.value, ref, mode, shape_of(c, got.first), n);
        Verdict v;
        record(v, to_string(input), check);
        v.add("canary", got.canary.empty(), got.canary);
        tally.all.add_all(v);
        ++runs;
        tally.unbounded += v.skipped().size();
        if (!v.failures().empty()) {
          ++failures;
          fmt::print("  FAIL n = {}, block {}, {} regime{}, input {}, offset {}, combine {}: {}\n", n, block,
                     to_string(l.regime), l.grid ? fmt::format(" (grid {})", l.grid) : "", to_string(input), offset,
                     to_string(combine), v.failures().front());
        }
      }
    }
  }
  tally.runs += runs;
  tally.failures += failures;
  fmt::print("  input {}, offset {}, n = {:>8}: {:>4} runs, {}\n", to_string(input), offset, n, runs,
             failures ? fmt::format("{} FAILED", failures) : std::string("all PASS"));
}

int self_test(const ReduceStage& stage, ReduceFn reduce, BlocksPerSmFn blocks_per_sm, const ReduceOptions& o,
              const DeviceInfo& d) {
  const bool full = o.self_test == SelfTest::kFull;
  const SelfTestPlan plan = self_test_plan(stage, full);
  const std::uint64_t max_n = plan.sizes.back();
  std::uint64_t max_partials = 1;
  for (auto n : plan.sizes) max_partials = std::max(max_partials, ceil_div<std::uint64_t>(n, kMinBlock));
  ReduceBench bench = untimed_bench(reduce, o, d, max_n, max_partials, "--self-test");
  auto host = host_floats(max_n, "--self-test");
  const std::vector<unsigned> offsets = {0, 1, 2, 3};  // every alignment of a float pointer to 16 bytes
  SelfTestTally tally;
  fmt::print("{} self-test ({}): {} sizes x {} blocks x 3 inputs (exact, probe, float) x {} launches x {} offsets x {} "
             "combines\n",
             stage.name, full ? "full" : "quick", plan.sizes.size(), plan.blocks.size(), plan.launches.size(),
             offsets.size(), stage.combines.size());
  for (auto input : {SelfTestInput::kExact, SelfTestInput::kProbe, SelfTestInput::kFloat}) {
    const InputMode mode = input == SelfTestInput::kFloat ? InputMode::kFloat : InputMode::kExact;
    std::vector<SumReference> refs(plan.sizes.size());
    if (input != SelfTestInput::kProbe) {
      generate_input(o.seed, 0, mode, host.get(), max_n, exact_range(max_n));
      for (std::size_t si = 0; si < plan.sizes.size(); ++si) refs[si] = reference_sum(host.get(), plan.sizes[si]);
    }
    for (auto offset : offsets) {
      if (input != SelfTestInput::kProbe) {
        bench.upload(host.get(), InputSpec(o.seed, 0, mode, exact_range(max_n)), max_n, offset);
        tally.all.add("input", bench.input_is_hosts(),
                      fmt::format("offset {}: the {} input the GPU made differs from the host's", offset,
                                  to_string(input)));
      }
      for (std::size_t si = 0; si < plan.sizes.size(); ++si) {
        const std::uint64_t n = plan.sizes[si];
        SumReference ref = refs[si];
        if (input == SelfTestInput::kProbe) {
          const ProbeInput p = precision_probe(o.seed, n);
          bench.upload_probe(p, n, offset);
          ref = {p.sum, p.sum};
        } else {
          bench.fence(n);
        }
        self_test_size(bench, stage, blocks_per_sm, d, plan, input, offset, n, ref, tally);
      }
    }
  }
  fmt::print("{} self-test: {} runs ({} float runs not judged, their bound too loose: their exact twins decide), {} "
             "failed: {}\n",
             stage.name, tally.runs, tally.unbounded, tally.failures, tally.all.word());
  return tally.all.pass() ? 0 : 1;
}

// ---- --determinism R: the same reduction R times, compared bit for bit ----------------------------------

// How many floats lie between a and b: their distance in units in the last place, across zero too (-0 and +0
// are 0 apart); NaN if either is not finite.
double ulps_between(float a, float b) {
  if (!std::isfinite(a) || !std::isfinite(b)) return NAN;
  auto key = [](float x) {  // the bits, mapped so that the order of the keys is the order of the floats
    std::uint32_t u;
    std::memcpy(&u, &x, sizeof u);
    return (u & 0x80000000u) ? static_cast<long long>(0x80000000u) - static_cast<long long>(u & 0x7fffffffu)
                             : static_cast<long long>(0x80000000u) + static_cast<long long>(u);
  };
  return static_cast<double>(std::llabs(key(b) - key(a)));
}

// The repeated runs of one configuration: how many distinct results, their range, and the verdict.
struct Repeats {
  std::set<std::uint32_t> distinct;
  float lo = INFINITY, hi = -INFINITY;
};

Repeats repeat(ReduceBench& bench, Run& r, const ReduceOptions& o, Verdict& v) {
  Repeats rep;
  for (int i = 0; i < o.determinism; ++i) {
    const auto got = bench.run_checked(r.c);
    std::uint32_t bits;
    std::memcpy(&bits, &got.value, sizeof bits);
    rep.distinct.insert(bits);
    rep.lo = std::min(rep.lo, got.value);
    rep.hi = std::max(rep.hi, got.value);
    SumCheck check = check_sum(got.value, r.ref, o.input, shape_of(r.c, got.first), r.c.n);
    if (!check.pass && check.bounded) check.reason = fmt::format("run {}: {}", i + 1, check.reason);
    record(v, measured_name(o.input), check);
    v.add("canary", got.canary.empty(), got.canary);
  }
  return rep;
}

int determinism(const ReduceStage& stage, ReduceFn reduce, BlocksPerSmFn blocks_per_sm, const ReduceOptions& o,
                const DeviceInfo& d) {
  require_tree_grid(o);
  const std::vector<Config> configs = all_configs(o, blocks_per_sm, d);
  auto bench = make_bench(reduce, o, d, configs, false);
  const std::uint64_t max_n = *std::max_element(o.sizes.begin(), o.sizes.end());
  auto host = host_floats(max_n, fmt::format("-n {}", max_n));
  std::vector<Run> runs = runs_for(configs);
  // The exact check and the probe first, as in the default run: a float result without them proves little.
  check_exact(*bench, o, host.get(), runs, stage.name);
  check_probe(*bench, o, runs);
  if (o.input == InputMode::kFloat) generate_input(o.seed, 0, InputMode::kFloat, host.get(), max_n);
  bench->upload(host.get(), InputSpec(o.seed, 0, o.input, exact_range(max_n)), max_n, o.offset);

  std::vector<Record> records;
  bool ok = true;
  for (auto& r : runs) {
    r.ref = o.input == InputMode::kFloat ? reference_sum(host.get(), r.c.n) : r.exact_ref;
    bench->fence(r.c.n);
    Verdict v;
    add_input_checks(v, r);
    const Repeats rep = repeat(*bench, r, o, v);
    const bool by_design = deterministic(r);  // atomics add partial sums in arrival order
    const bool identical = rep.distinct.size() == 1;
    if (by_design) v.add("bitwise", identical, fmt::format("{} distinct results", rep.distinct.size()));
    ok = ok && v.pass();
    Record rec;
    add_context_fields(rec, stage.name, d, o);
    rec.add("regime", to_string(r.c.regime))
        .add("n", r.c.n)
        .add("block", r.c.block)
        .add("grid", r.first.grid)
        .add("threads", r.first.block)
        .add("combine", to_string(r.c.combine))
        .add("runs", o.determinism)
        .add("distinct_results", static_cast<std::uint64_t>(rep.distinct.size()))
        .add("min_result", static_cast<double>(rep.lo), 9)
        .add("max_result", static_cast<double>(rep.hi), 9)
        .add("reference", r.ref.sum, 17)
        .add("max_abs_error", std::max(std::fabs(rep.lo - r.ref.sum), std::fabs(rep.hi - r.ref.sum)), 3)
        .add("spread_ulps", ulps_between(rep.lo, rep.hi))
        .add("bitwise_identical", identical)
        .add("deterministic_by_design", by_design)
        .add("check", v.word());
    records.push_back(std::move(rec));
    if (o.format == Format::kTable) {
      fmt::print("{}: n = {}, {} regime, block {}, {}: {} runs, {} distinct result{}: {}{}{}\n", stage.name, r.c.n,
                 to_string(r.c.regime), r.c.block, to_string(r.c.combine), o.determinism, rep.distinct.size(),
                 rep.distinct.size() == 1 ? "" : "s", identical ? "bitwise identical" : "NOT bitwise identical",
                 by_design ? "" : " (atomic adds arrive in any order; not deterministic by design)",
                 v.pass() ? "" : fmt::format("; FAIL {}", v.failures().front()));
    }
  }
  if (o.format != Format::kTable) print_records(o.format, records);
  return ok ? 0 : 1;
}

// ---- --error-study N: the float bound against the errors of N random configurations --------------------

// One random configuration of the study.
struct StudyCase {
  std::uint64_t seed, n;
  unsigned offset, block, grid;  // grid: 0 = from the occupancy API
  Regime regime;
  Combine combine;
};

std::vector<StudyCase> study_cases(const ReduceStage& stage, const ReduceOptions& o, const DeviceInfo& d) {
  std::mt19937_64 rng(o.seed * 0x9E3779B97F4A7C15ull + 1);
  auto pick = [&](std::uint64_t count) { return static_cast<std::size_t>(rng() % count); };
  std::vector<StudyCase> cases(static_cast<std::size_t>(o.error_study));
  for (auto& c : cases) {
    c.seed = o.seed + pick(kStudySeeds);
    c.offset = static_cast<unsigned>(pick(4));
    c.n = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::exp2(std::ldexp(static_cast<double>(rng() >> 11), -53) * kStudyMaxLog2)));
    c.block = 64u << pick(5);
    c.regime = stage.regimes[pick(stage.regimes.size())];
    c.grid = c.regime == Regime::kStream && pick(2) ? static_cast<unsigned>(1 + pick(4ull * d.sm_count)) : 0;
    c.combine = stage.combines[pick(stage.combines.size())];
  }
  // The sizes the ladder publishes, at the default block and grid: every regime and combine, the first seed.
  for (int log2 : kStudyLargeLog2) {
    for (auto regime : stage.regimes) {
      for (auto combine : stage.combines) cases.push_back({o.seed, std::uint64_t{1} << log2, 0, 1024, 0, regime, combine});
    }
  }
  std::sort(cases.begin(), cases.end(), [](const StudyCase& a, const StudyCase& b) {
    return std::tie(a.seed, a.offset, a.n) < std::tie(b.seed, b.offset, b.n);  // one upload per input and offset
  });
  return cases;
}

// One configuration of the error study, as its result file has it (the check added by the caller).
Record study_record(const ReduceStage& stage, const StudyCase& sc, const FirstLaunch& first, const SumCheck& check,
                    double ratio, double z) {
  Record rec;
  rec.add("stage", stage.name).add("seed", sc.seed).add("n", sc.n).add("offset", sc.offset)
      .add("block", sc.block).add("regime", to_string(sc.regime)).add("grid_option", sc.grid)
      .add("grid", first.grid).add("threads", first.block).add("combine", to_string(sc.combine))
      .add("abs_error", check.error, 3).add("bound", check.bounded ? check.tolerance : NAN, 3)
      .add("error_bound_ratio", ratio, 3).add("error_sigmas", z, 3);
  return rec;
}

int error_study(const ReduceStage& stage, ReduceFn reduce, BlocksPerSmFn blocks_per_sm, const ReduceOptions& o,
                const DeviceInfo& d) {
  const std::vector<StudyCase> cases = study_cases(stage, o, d);
  std::map<std::uint64_t, std::uint64_t> need;  // the largest n of each seed: how much of its input to make
  for (const auto& sc : cases) need[sc.seed] = std::max(need[sc.seed], sc.n);
  std::uint64_t max_n = 1;
  for (const auto& [seed, n] : need) max_n = std::max(max_n, n);
  ReduceBench bench = untimed_bench(reduce, o, d, max_n, ceil_div<std::uint64_t>(max_n, kMinBlock), "--error-study");
  auto host = host_floats(max_n, "--error-study");
  Verdict all;
  std::vector<Record> records;
  std::vector<double> ratios;
  double z_sum = 0;  // the signed errors over their sigmas, for the centring test
  std::uint64_t seed = 0;
  unsigned offset = 99;
  for (const auto& sc : cases) {
    if (sc.seed != seed || sc.offset != offset || records.empty()) {
      if (sc.seed != seed || records.empty()) generate_input(sc.seed, 0, InputMode::kFloat, host.get(), need[sc.seed]);
      bench.upload(host.get(), InputSpec(sc.seed, 0, InputMode::kFloat), need[sc.seed], sc.offset);
      seed = sc.seed;
      offset = sc.offset;
    }
    bench.fence(sc.n);
    const Config c = make_config(sc.n, sc.regime, sc.block, sc.combine, sc.grid, blocks_per_sm, d);
    const SumReference ref = reference_sum(host.get(), sc.n);
    const auto got = bench.run_checked(c);
    const SumCheck check = check_sum(got.value, ref, InputMode::kFloat, shape_of(c, got.first), sc.n);
    Verdict v;
    record(v, "float", check);
    v.add("canary", got.canary.empty(), got.canary);
    all.add_all(v);
    const double ratio = check.bounded && check.tolerance > 0 ? check.error / check.tolerance : NAN;
    const double z = std::isfinite(ratio) ? (got.value - ref.sum) / (check.tolerance / kSumLambda) : NAN;
    if (std::isfinite(ratio)) {
      ratios.push_back(ratio);
      z_sum += z;
    }
    records.push_back(study_record(stage, sc, got.first, check, ratio, z).add("check", v.field({"float", "canary"})));
  }
  const Centring centred = check_centred(z_sum, ratios.size());
  all.add("centred", centred.pass, centred.reason);
  if (o.format != Format::kTable) {
    print_records(o.format, records);
  } else {
    std::sort(ratios.begin(), ratios.end());
    auto at = [&](double q) { return ratios.empty() ? NAN : ratios[static_cast<std::size_t>(q * (ratios.size() - 1))]; };
    fmt::print("{} error study: {} configurations (seeds {}..{}, n from 1 to 2^{} and the published sizes), float "
               "input; error/bound median {:.3g}, 99th percentile {:.3g}, max {:.3g}; mean error {:.3g} sigma "
               "(limit {:.3g}); {} not judged, {} failed: {}\n",
               stage.name, cases.size(), o.seed, o.seed + kStudySeeds - 1, kStudyMaxLog2, at(0.5), at(0.99), at(1.0),
               centred.mean_z, centred.limit, all.skipped().size(), all.failures().size(), all.word());
    for (const auto& f : all.failures()) fmt::print("  FAIL {}\n", f);
  }
  return all.pass() ? 0 : 1;
}

}  // namespace ladder::reduce_run
