// The checks every reduce run makes: the exact input, the precision probe, the measured input with every warm-up and
// timed launch, and CUB and the read-only kernel beside it; and the one verdict of a run (reduce_run.hpp).
#include <algorithm>
#include <cstring>

#include "reduce_run.hpp"

namespace ladder::reduce_run {

const char* measured_name(InputMode mode) { return mode == InputMode::kFloat ? "float" : "exact"; }

// The checks every mode makes first: the exact input's launches and the probe.
void add_input_checks(Verdict& v, const Run& r) {
  for (const auto& e : r.exact) v.add("exact", e.pass, e.reason);
  v.add("probe", r.probe.pass, r.probe.reason);
}

// Repetitions of a run's timed series (the stage's and its references') not held to the end: their intervals may
// hold host time (GpuTimer::time). Not a check of the result, so not in the verdict: the row's timing_check says
// it, the run warns, and ./ladder saves no such row.
int unheld(const Run& r, const References* refs) {
  int n = r.t.hold_timeouts;
  if (refs) {
    for (const auto* t : {&refs->cub, &refs->read, &refs->copy, &refs->empty, &refs->memset}) n += t->hold_timeouts;
  }
  return n;
}

// The first canary that failed, with the launch it followed.
void keep_canary(Run& r, const std::string& canary, const std::string& launch) {
  if (r.canary.empty() && !canary.empty()) r.canary = fmt::format("{}: {}", launch, canary);
}

// The DRAM peak the timed rates are judged against: NaN (not judged) under --flush none, where an input smaller
// than the L2 is read from it, faster than DRAM.
double judged_peak_gbps(const ReduceOptions& o, const DeviceInfo& d) {
  return o.flush == Flush::kNone ? NAN : d.peak_gbps();
}

// The one verdict of a run: every check it made, by name; the timed rates (the stage's, CUB's, the read-only
// kernel's) against peak_gbps.
Verdict verdict_of(const Run& r, const References* refs, InputMode mode, double peak_gbps) {
  Verdict v;
  add_input_checks(v, r);
  record(v, measured_name(mode), r.measured);
  if (r.timing) record(v, "timed", r.timed);
  v.add("canary", r.canary.empty(), r.canary);
  v.add("launches", r.checked == r.launches,
        fmt::format("{} of the stage's {} launches were checked", r.checked, r.launches));
  const auto rate = [&](const std::string& who, const TimingStats& t) {
    const std::string why = rate_above_peak(who, gbps(r.c.n, t.median_ms), peak_gbps, "GB/s");
    v.add("rate", why.empty(), why);
  };
  if (r.timing) rate("the stage", r.t);
  if (refs) {
    record(v, "cub", refs->cub_check);
    record(v, "cub", refs->cub_timed);
    record(v, "read", refs->read_check);
    rate("CUB", refs->cub);
    rate("the read-only kernel", refs->read);
  }
  return v;
}

// Whether a configuration gives the same bits on every launch of the same input: every combine but atomic, whose
// block sums arrive in any order, and atomic too where one block does all the work.
bool deterministic(const Run& r) { return r.c.combine != Combine::kAtomic || r.first.grid == 1; }

// Every kept launch of a series (warm-ups, then timed repetitions): bit for bit `checked` (the checked launch's
// result) where the series is deterministic, so a launch that loses even one element's worth fails; else each
// within the float bound (or exact) like the checked one. The reason names the first launch that failed.
template <typename T>
SumCheck check_launches(const std::vector<T>& kept, T checked, bool deterministic, const SumReference& ref,
                        InputMode mode, const SumShape& shape, std::uint64_t n, int warmup, int reps) {
  SumCheck all;
  all.pass = true;
  for (std::size_t i = 0; i < kept.size(); ++i) {
    SumCheck c;
    if (deterministic) {
      c.pass = std::memcmp(&kept[i], &checked, sizeof(T)) == 0;
      c.error = std::fabs(static_cast<double>(kept[i]) - ref.sum);
      if (!c.pass) {
        c.reason = fmt::format("gave {:.9g}, the checked launch {:.9g}: a deterministic launch must give the same "
                               "bits",
                               static_cast<double>(kept[i]), static_cast<double>(checked));
      }
    } else {
      c = check_sum(kept[i], ref, mode, shape, n);
      if (!c.bounded) {  // not judged: the exact check carries the verdict (NaN is still a failure, bounded)
        all.pass = all.bounded = false;
        all.reason = c.reason;
        continue;
      }
    }
    all.error = std::max(all.error, c.error);
    all.tolerance = c.tolerance;
    if (!c.pass) {
      all.pass = false;
      all.bounded = true;
      all.reason = fmt::format("{}: {}", launch_name(static_cast<int>(i), warmup, reps), c.reason);
      return all;
    }
  }
  return all;
}

// 1. The exact input at every configuration, kCheckedLaunches launches each.
void check_exact(ReduceBench& bench, const ReduceOptions& o, float* host, std::vector<Run>& runs, const char* stage) {
  const std::uint64_t max_n = *std::max_element(o.sizes.begin(), o.sizes.end());
  const unsigned range = exact_range(max_n);
  progress(fmt::format("{}: exact check: {} dyadic floats k/{} (seed {})", stage, max_n, range, o.seed));
  generate_input(o.seed, 0, InputMode::kExact, host, max_n, range);
  bench.upload(host, InputSpec(o.seed, 0, InputMode::kExact, range), max_n, o.offset);
  std::map<std::uint64_t, SumReference> refs;
  for (auto& r : runs) {
    if (!refs.count(r.c.n)) refs.emplace(r.c.n, reference_sum(host, r.c.n));
    r.exact_ref = refs.at(r.c.n);
    bench.fence(r.c.n);
    const long long before = bench.launches();
    for (int l = 0; l < kCheckedLaunches; ++l) {
      const auto got = bench.run_checked(r.c);
      r.first = got.first;
      r.exact_results.push_back(got.value);
      keep_canary(r, got.canary, fmt::format("exact input, launch {} of {}", l + 1, kCheckedLaunches));
      SumCheck check = check_sum(got.value, r.exact_ref, InputMode::kExact, shape_of(r.c, got.first), r.c.n);
      if (!check.pass) check.reason = fmt::format("launch {} of {}: {}", l + 1, kCheckedLaunches, check.reason);
      r.exact.push_back(check);
      ++r.checked;
    }
    r.launches += bench.launches() - before;
  }
}

// 2. The precision probe at every configuration.
void check_probe(ReduceBench& bench, const ReduceOptions& o, std::vector<Run>& runs) {
  std::uint64_t probed = 0;
  ProbeInput p;
  for (auto& r : runs) {
    if (probed != r.c.n) {
      p = precision_probe(o.seed, r.c.n);
      bench.upload_probe(p, r.c.n, o.offset);
      probed = r.c.n;
    }
    const long long before = bench.launches();
    const auto got = bench.run_checked(r.c);
    r.launches += bench.launches() - before;
    r.probe_sum = p.sum;
    r.probe_result = got.value;
    keep_canary(r, got.canary, "precision probe");
    r.probe = check_sum(got.value, SumReference{p.sum, p.sum}, InputMode::kExact, shape_of(r.c, got.first), r.c.n);
    ++r.checked;
  }
}

// CUB and the speed of light on the measured input of size n (uploaded, fenced at n).
References time_references(ReduceBench& bench, CubSum& cub, SpeedOfLight& sol, std::uint64_t n,
                           const SumReference& ref, const ReduceOptions& o, const DeviceInfo& d) {
  References r;
  r.read_grid = sol.grid();
  const cudaStream_t s = bench.timer().stream();
  const float* in = bench.input();
  auto poison_out = [&](cudaStream_t st) { CUDA_CHECK(cudaMemsetAsync(bench.out(), 0xFF, sizeof(float), st)); };
  poison_out(s);
  cub.run(in, n, bench.out(), s);
  r.cub_result = bench.read_out(s);
  r.cub_check = check_sum(r.cub_result, ref, o.input, cub_shape(n, d), n);
  const Kept<float> cub_kept(o.warmup, o.reps);
  r.cub = bench.timer().time([&](cudaStream_t st) { cub.run(in, n, bench.out(), st); }, o.warmup, o.reps,
                             {poison_out, cub_kept.copy_of(bench.out())});
  r.cub_launches = cub_kept.launches() + 1;
  // Each launch within the bound. (CUB documents run-to-run determinism on one GPU, so bit for bit its checked
  // launch would be stricter; not yet run on a GPU here, so not yet the check.)
  r.cub_timed = check_launches(cub_kept.read(s), r.cub_result, false, ref, o.input, cub_shape(n, d), n, o.warmup,
                               o.reps);
  const Kept<double> read_kept(o.warmup, o.reps);
  r.read = bench.timer().time([&](cudaStream_t st) { sol.read(in, n, st); }, o.warmup, o.reps,
                              {[&](cudaStream_t st) { sol.poison_sums(st); },
                               [&](cudaStream_t st, int l) { sol.keep_sum(read_kept.slot(l), st); }});
  r.read_launches = read_kept.launches();
  const std::vector<double> reads = read_kept.read(s);
  // The first launch against the oracle, then every launch bit for bit that one (the kernel is deterministic).
  r.read_check = check_sum(reads.front(), ref, o.input, read_shape(n, sol.threads()), n);
  if (r.read_check.pass) {
    r.read_check = check_launches(reads, reads.front(), true, ref, o.input, read_shape(n, sol.threads()), n, o.warmup,
                                  o.reps);
  }
  if (sol.has_copy()) {
    r.copy = bench.timer().time([&](cudaStream_t st) { sol.copy(in, n, st); }, o.warmup, o.reps);
  } else {
    r.copy.median_ms = r.copy.min_ms = r.copy.max_ms = NAN;
  }
  r.empty = bench.timer().time([&](cudaStream_t st) { sol.empty_launch(st); }, o.warmup, o.reps);
  r.memset = bench.timer().time([&](cudaStream_t st) { sol.memset4(st); }, o.warmup, o.reps);
  return r;
}

// 3. The measured input: each configuration checked once, then timed, every warm-up and timed launch checked; CUB
// and the speed of light once per size.
void measure(ReduceBench& bench, const ReduceOptions& o, const DeviceInfo& d, float* host, std::vector<Run>& runs,
             std::map<std::uint64_t, References>& refs, const char* stage) {
  const bool timing = !o.check_only;
  const std::uint64_t max_n = *std::max_element(o.sizes.begin(), o.sizes.end());
  if (o.input == InputMode::kFloat) {
    progress(fmt::format("{}: generating {} input floats (seed {})", stage, max_n, o.seed));
    generate_input(o.seed, 0, InputMode::kFloat, host, max_n);
  }
  bench.upload(host, InputSpec(o.seed, 0, o.input, exact_range(max_n)), max_n, o.offset);  // exact: again
  std::unique_ptr<CubSum> cub;
  std::unique_ptr<SpeedOfLight> sol;
  if (timing) {
    cub = std::make_unique<CubSum>(std::vector<std::size_t>(o.sizes.begin(), o.sizes.end()));
    sol = std::make_unique<SpeedOfLight>(d.sm_count, max_n);
  }
  std::map<std::uint64_t, SumReference> sums;
  for (auto& r : runs) {
    if (!sums.count(r.c.n)) {
      sums.emplace(r.c.n, o.input == InputMode::kFloat ? reference_sum(host, r.c.n) : r.exact_ref);
    }
    r.ref = sums.at(r.c.n);
    bench.fence(r.c.n);
    progress(fmt::format("{}: n = {}, {} regime, block {}, {}: checking{}", stage, r.c.n, to_string(r.c.regime),
                         r.c.block, to_string(r.c.combine), timing ? " and timing" : ""));
    const long long before = bench.launches();
    const auto got = bench.run_checked(r.c);
    r.result = got.value;
    r.measured = check_sum(got.value, r.ref, o.input, shape_of(r.c, got.first), r.c.n);
    keep_canary(r, got.canary, fmt::format("{} input", to_string(o.input)));
    ++r.checked;
    if (timing) {
      r.timing = true;
      r.t = bench.time_stage(r.c, o.warmup, o.reps, &r.timed_results);
      keep_canary(r, bench.changed_poison(r.c, r.first), "after the warm-up and timed launches");
      r.timed = check_launches(r.timed_results, r.result, deterministic(r), r.ref, o.input, shape_of(r.c, r.first),
                               r.c.n, o.warmup, o.reps);
      r.checked += static_cast<long long>(r.timed_results.size());
    }
    r.launches += bench.launches() - before;
    if (timing && !refs.count(r.c.n)) refs.emplace(r.c.n, time_references(bench, *cub, *sol, r.c.n, r.ref, o, d));
  }
}

}  // namespace ladder::reduce_run
