// What a default reduce run prints and records: the header, the table, the notes and one record per configuration.
#include <algorithm>
#include <set>

#include "reduce_run.hpp"

namespace ladder::reduce_run {

// ---- presenting a run: the table row, the notes, the record ----------------------------------------------

std::string input_words(InputMode mode, unsigned range) {
  return mode == InputMode::kFloat
             ? "float: uniform in [0,1)"
             : fmt::format("exact: random dyadic values k/{} in [-1, 1], k a non-zero integer", range);
}

// What the measured input's check says, in a table cell: error / bound, or that it was not judged.
std::string float_cell(const SumCheck& c, InputMode mode) {
  if (mode == InputMode::kExact) return "exact";
  if (!c.bounded) return "skipped";  // record() skipped it
  if (!std::isfinite(c.error)) return "NaN";
  return fmt::format("{:.2g}", c.tolerance > 0 ? c.error / c.tolerance : 0.0);
}

std::string where(const Config& c) {
  return fmt::format("n = {}, {} regime, block {}, {}", c.n, to_string(c.regime), c.block, to_string(c.combine));
}

// "60 of 60 (3 exact, 1 probe, 1 float, 5 warm-up, 50 timed)": the stage's launches in this configuration and
// how many of them were checked.
std::string launches_cell(const Run& r, const ReduceOptions& o) {
  return fmt::format("{} of {}", r.checked, r.launches) +
         (r.timing ? fmt::format(" ({} exact, 1 probe, 1 {}, {} warm-up, {} timed)", kCheckedLaunches,
                                 measured_name(o.input), GpuTimer::warmups(o.warmup), o.reps)
                   : "");
}

// The notes under the table: every failed check, every check not judged, and, for a single configuration
// that passed, what each check found.
void add_notes(const Run& r, const References* refs, const Verdict& v, const ReduceOptions& o, bool single,
               std::vector<std::string>& notes) {
  for (const auto& failure : v.failures()) notes.push_back(fmt::format("FAIL {}: {}", where(r.c), failure));
  for (const auto& skipped : v.skipped()) notes.push_back(fmt::format("not judged {}: {}", where(r.c), skipped));
  if (!single || !v.pass()) return;
  notes.push_back(fmt::format("exact check: PASS, {} launches on the exact input each gave {}, the exact sum",
                              kCheckedLaunches, r.exact_results.front()));
  notes.push_back(fmt::format("precision probe: PASS, {} (the exact sum of the probe's 13-bit values)", r.probe_result));
  if (o.input == InputMode::kFloat && r.measured.bounded) {
    notes.push_back(fmt::format("float input: result {:.9g}, oracle {:.17g}, |error| {:.3g} = {:.2g} of the bound "
                                "{:.3g} ({:g} u mean|x| sqrt(sum of the squared partial sums this launch of {} x {} "
                                "threads, {}, forms))",
                                r.result, r.ref.sum, r.measured.error, r.measured.error / r.measured.tolerance,
                                r.measured.tolerance, kSumLambda, r.first.grid, r.first.block, to_string(r.c.combine)));
  }
  notes.push_back(fmt::format("launches checked: {}{}", launches_cell(r, o),
                              refs ? fmt::format("; CUB's {} and the read-only kernel's {} too", refs->cub_launches,
                                                 refs->read_launches)
                                   : ""));
}

std::vector<std::string> table_row(const Run& r, const References* refs, const Verdict& v, const ReduceOptions& o,
                                   double peak) {
  auto ms = [&](double x) { return r.timing ? fmt::format("{:.4f}", x) : std::string("-"); };
  const double g = gbps(r.c.n, r.t.median_ms);
  const std::string grid = r.first.block == r.c.block ? std::to_string(r.first.grid)
                                                      : fmt::format("{} x {} threads", r.first.grid, r.first.block);
  return {std::to_string(r.c.n), to_string(r.c.regime), std::to_string(r.c.block), grid,
          to_string(r.c.combine), v.field("exact"), v.field("probe"), float_cell(r.measured, o.input),
          fmt::format("{}/{}", r.checked, r.launches), v.word(),
          ms(r.t.median_ms), ms(r.t.min_ms), ms(r.t.max_ms), r.timing ? fmt::format("{:.1f}", g) : "-",
          r.timing ? fmt::format("{:.1f}", 100 * g / peak) : "-",
          refs ? fmt::format("{:.1f}", 100 * refs->read.median_ms / r.t.median_ms) : "-",
          refs ? ms(refs->cub.median_ms) : "-", refs ? fmt::format("{:.1f}", gbps(r.c.n, refs->cub.median_ms)) : "-",
          refs ? fmt::format("{:.2f}", refs->cub.median_ms / r.t.median_ms) : "-"};
}

// The checks of a run and their numbers, as record fields.
void add_check_fields(Record& rec, const Run& r, const References* refs, const Verdict& v, const ReduceOptions& o) {
  const bool bounded = o.input == InputMode::kFloat && r.measured.bounded;
  rec.add("exact_check", v.field("exact"))
      .add("exact_result", static_cast<double>(r.exact_results.front()), 9)
      .add("exact_sum", r.exact_ref.sum, 17)
      .add("exact_range", exact_range(*std::max_element(o.sizes.begin(), o.sizes.end())))
      .add("checked_launches", kCheckedLaunches)
      .add("probe_check", v.field("probe"))
      .add("probe_result", static_cast<double>(r.probe_result), 9)
      .add("probe_sum", r.probe_sum, 17)
      .add("result", static_cast<double>(r.result), 9)
      .add("reference", r.ref.sum, 17)
      .add("abs_error", r.measured.error, 3)
      .add("bound", bounded ? r.measured.tolerance : NAN, 3)
      .add("error_bound_ratio", bounded ? r.measured.error / r.measured.tolerance : NAN, 3)
      .add("float_check", o.input == InputMode::kExact ? "exact" : v.field("float"))
      .add("timed_check", v.field("timed"))
      .add("launches", static_cast<std::uint64_t>(r.launches))
      .add("launches_checked", static_cast<std::uint64_t>(r.checked))
      .add("timing_check", !r.timing ? "-" : held_verdict(unheld(r, refs)).word())
      .add("check", v.word());
}

// CUB's, the read-only kernel's and the copy's times beside the stage's, as record fields.
void add_reference_fields(Record& rec, const Run& r, const References* refs, const Verdict& v, double peak,
                          int read_grid) {
  const double stage_gbps = r.timing ? gbps(r.c.n, r.t.median_ms) : NAN;
  const double cub_gbps = refs ? gbps(r.c.n, refs->cub.median_ms) : NAN;
  const double read_gbps = refs ? gbps(r.c.n, refs->read.median_ms) : NAN;
  const double copy_gbps = refs ? 2 * gbps(r.c.n, refs->copy.median_ms) : NAN;  // every byte read and written
  rec.add("cub_ms_median", refs ? refs->cub.median_ms : NAN)
      .add("cub_ms_min", refs ? refs->cub.min_ms : NAN)
      .add("cub_ms_max", refs ? refs->cub.max_ms : NAN)
      .add("cub_gbps", cub_gbps)
      .add("cub_pct_peak", 100 * cub_gbps / peak, 4)
      .add("x_cub", refs ? refs->cub.median_ms / r.t.median_ms : NAN, 4)
      .add("cub_check", v.field("cub"))
      .add("cub_result", refs ? static_cast<double>(refs->cub_result) : NAN, 9)
      .add("cub_abs_error", refs ? std::fabs(static_cast<double>(refs->cub_result) - r.ref.sum) : NAN, 3)
      .add("read_check", v.field("read"))
      .add("read_ms_median", refs ? refs->read.median_ms : NAN)
      .add("read_gbps", read_gbps)
      .add("read_pct_peak", 100 * read_gbps / peak, 4)
      .add("pct_read", 100 * stage_gbps / read_gbps, 4)
      .add("read_grid", read_grid)
      .add("copy_ms_median", refs ? refs->copy.median_ms : NAN)
      .add("copy_gbps", copy_gbps)
      .add("copy_pct_peak", 100 * copy_gbps / peak, 4)
      .add("empty_launch_ms", refs ? refs->empty.median_ms : NAN)
      .add("memset4_ms", refs ? refs->memset.median_ms : NAN);
}

Record make_record(const Run& r, const References* refs, const Verdict& v, const ReduceStage& stage,
                   const ReduceOptions& o, const DeviceInfo& d, const std::string& fingerprint, int read_grid) {
  const double stage_gbps = r.timing ? gbps(r.c.n, r.t.median_ms) : NAN;
  Record rec;
  add_context_fields(rec, stage.name, d, o);
  rec.add("regime", to_string(r.c.regime))
      .add("offset", o.offset)
      .add("n", r.c.n)
      .add("bytes", r.c.n * sizeof(float))
      .add("block", r.c.block)
      .add("grid", r.first.grid)
      .add("threads", r.first.block)
      .add("blocks_per_sm", r.c.blocks_per_sm)
      .add("combine", to_string(r.c.combine))
      .add("fingerprint", fingerprint);
  add_check_fields(rec, r, refs, v, o);
  rec.add("ms_median", r.timing ? r.t.median_ms : NAN)
      .add("ms_min", r.timing ? r.t.min_ms : NAN)
      .add("ms_max", r.timing ? r.t.max_ms : NAN)
      .add("gbps", stage_gbps)
      .add("pct_peak", 100 * stage_gbps / d.peak_gbps(), 4);
  add_clock_fields(rec, r.t, r.timing);
  add_reference_fields(rec, r, refs, v, d.peak_gbps(), read_grid);
  return rec;
}

void print_header(const ReduceStage& stage, const ReduceOptions& o, const DeviceInfo& d, const std::vector<Run>& runs,
                  int read_grid) {
  const bool timing = !o.check_only;
  const unsigned range = exact_range(*std::max_element(o.sizes.begin(), o.sizes.end()));
  fmt::print("{}: float sum reduction, checked against the CPU oracle{}\n", stage.name,
             timing ? ", timed beside cub::DeviceReduce::Sum" : "");
  fmt::print("  device   {}\n", device_line(d));
  fmt::print("  peak     {:.0f} GB/s theoretical: 2 x {} MHz x {}-bit bus / 8, from device attributes\n", d.peak_gbps(),
             d.mem_clock_khz / 1000, d.bus_width_bits);
  fmt::print("  input    {}, seed {}, at a 256-byte aligned address + {} floats, NaN before and after\n",
             input_words(o.input, range), o.seed, o.offset);
  std::set<std::string> launches;
  for (const auto& r : runs) {
    const std::string line =
        fmt::format("{} regime, block {}: {}", to_string(r.c.regime), r.c.block, launch_words(r.c, o.grid, d));
    if (launches.insert(line).second) fmt::print("  launch   {}\n", line);
  }
  fmt::print("  check    PASS = every check passed: exact (the same launch, {} times, on dyadic values k/{} whose every "
             "partial sum is exact in float, equals the exact sum), probe ({} values of 13 significant bits among "
             "zeros: a read or partial sum kept in 12 bits or fewer changes the sum){}{}; before every checked "
             "launch the result, the partial sums{} are NaN, and the harness takes the launch's grid from the launch "
             "itself (a captured graph)\n",
             kCheckedLaunches, range, kProbeElements,
             o.input == InputMode::kFloat
                 ? fmt::format(", float (error/bound <= 1, the bound {:g} u mean|x| sqrt(sum of the squared partial "
                               "sums the launch forms): under the rounding model a correct kernel exceeds it with "
                               "probability below 3e-8)",
                               kSumLambda)
                 : "",
             timing ? fmt::format(", every warm-up and timed launch (each started from a poisoned result; bit for "
                                  "bit the checked launch where the combine is deterministic, else within the bound) "
                                  "and every launch of CUB and of the read-only kernel{}",
                                  o.flush == Flush::kNone ? "" : fmt::format(", and none of their GB/s more than {:g}% "
                                                                             "above the theoretical peak",
                                                                             100 * kRateMargin))
                    : "",
             o.shared_poison ? " and the shared memory of every SM" : " (not the shared memory: --no-shared-poison)");
  fmt::print("  not seen the memory-model bugs one GPU hides (a relaxed ticket, a non-coherent read of what the launch "
             "wrote, a block-scope atomic): the machine-code test (scripts/sass.py) reads them\n");
  if (!timing) return;
  fmt::print("  timing   {}\n", timing_line(o, d));
  fmt::print("  GB/s     bytes read (4 n) / median time, 1 GB = 1e9 B; x CUB = CUB time / stage time "
             "(above 1: faster than CUB)\n");
  fmt::print("  % read   the stage's GB/s over a kernel that only reads the same bytes ({} blocks of 512 threads, four "
             "16-byte loads in flight each), timed alike: the speed of light a sum can reach here\n",
             read_grid);
}

// Judges and presents every run; returns whether all passed.
bool report(const ReduceStage& stage, const ReduceOptions& o, const DeviceInfo& d, const std::vector<Run>& runs,
            const std::map<std::uint64_t, References>& refs, const float* host) {
  const int read_grid = refs.empty() ? 0 : refs.begin()->second.read_grid;
  TextTable table({"n", "regime", "block", "grid", "combine", "exact", "probe", "error/bound", "launches", "check", "ms", "min",
                   "max", "GB/s", "% peak", "% read", "CUB ms", "CUB GB/s", "x CUB"});
  std::vector<Record> records;
  std::vector<std::string> notes;
  std::map<std::uint64_t, std::string> fingerprints;
  std::vector<TimingStats> series;
  bool all_pass = true;
  for (const auto& r : runs) {
    const References* ref = refs.count(r.c.n) ? &refs.at(r.c.n) : nullptr;
    const Verdict v = verdict_of(r, ref, o.input, judged_peak_gbps(o, d));
    all_pass = all_pass && v.pass();
    if (!fingerprints.count(r.c.n)) fingerprints.emplace(r.c.n, fingerprint_hex(fingerprint(host, r.c.n)));
    table.add_row(table_row(r, ref, v, o, d.peak_gbps()));
    add_notes(r, ref, v, o, runs.size() == 1, notes);
    records.push_back(make_record(r, ref, v, stage, o, d, fingerprints.at(r.c.n), read_grid));
    if (r.timing) series.push_back(r.t);
  }
  for (const auto& [n, ref] : refs) {
    for (const auto* t : {&ref.cub, &ref.read, &ref.copy, &ref.empty, &ref.memset}) series.push_back(*t);
  }
  warn_about_clocks(stage.name, series);
  if (o.format != Format::kTable) {
    print_records(o.format, records);
    return all_pass;
  }
  print_header(stage, o, d, runs, read_grid);
  fmt::print("\n{}", table.str());
  for (const auto& note : notes) fmt::print("  {}\n", note);
  return all_pass;
}

}  // namespace ladder::reduce_run
