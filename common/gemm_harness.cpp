// run_gemm_stage(): everything the GEMM stage does besides its kernel and launcher.
//
// A default run, for every variant of the tiled kernel (and, for the references, the naive kernel and cuBLAS):
//   1. the exact check: the exact inputs (k/4, oracle.hpp), launched twice, each C compared exactly;
//   2. the operand-precision probes: A times a selection matrix, and a selection matrix times B, with the
//      full-mantissa float A and B: C must be the selected elements bit for bit;
//   3. the measured input (float by default): checked, then timed, C poisoned before every warm-up and timed
//      launch and a fingerprint of C kept after each (on the device, outside the interval), every one of them
//      equal to the checked C's: each kernel here (cuBLAS too: its documentation promises bitwise the same
//      results run to run on one GPU) gives the same bits every launch; the C of the last launch is also copied
//      back and compared bit for bit.
// A, B, C and the probes' selection matrices sit between NaN guards (kGuard floats each side): a read past one
// makes a NaN in C, and after every checked launch and each timed series the canary demands that every guard
// still holds its NaN (a store past C, or into an operand, fails it, naming the buffer and the index).
// The verdict of a variant is a Verdict (verdict.hpp) holding every one of those checks and the references'.
#include <cmath>
#include <cstring>
#include <functional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "device_buffer.hpp"
#include "device_fill.hpp"
#include "gemm_bench.hpp"
#include "gemm_stage.hpp"
#include "harness.hpp"
#include "input.hpp"
#include "oracle.hpp"
#include "references.hpp"
#include "report.hpp"
#include "timer.hpp"
#include "verdict.hpp"

namespace ladder {

namespace {

using gemm_run::GemmBench;
using gemm_run::GemmRun;
using gemm_run::Shape;

constexpr int kCheckedLaunches = 2;  // of the exact inputs: a kernel whose result changes between launches fails

double gflops(const Shape& s, double ms) { return ms > 0 ? 2.0 * s.m * s.n * s.k / (ms * 1e6) : NAN; }
double gbps(const Shape& s, double ms) {
  return ms > 0 ? static_cast<double>(s.m * s.k + s.k * s.n + s.m * s.n) * sizeof(float) / (ms * 1e6) : NAN;
}

std::string variant_name(const GemmLaunch& l) {
  return fmt::format("tiled {}x{}{}", l.tile, l.tile + (l.pad ? 1 : 0), l.pad ? " (padded)" : "");
}

int as_int(std::uint64_t v) { return static_cast<int>(v); }

// One GEMM kernel of the run: a tiled variant, the naive kernel or cuBLAS, its checks and its timing.
struct Kernel {
  std::string name;
  GemmRun run;
  bool is_stage = false;  // a tiled variant (the stage's own kernel)
  bool pad = false;
  Verdict v;
  GemmCheck exact, measured, timed;
  TimingStats t;
  int timed_launches = 0;  // warm-ups and timed repetitions, each checked by its fingerprint
};

// The canary of k's launches on `bench` since the last look: every NaN guard still NaN.
void add_canary(Kernel& k, GemmBench& bench, const std::string& launches) {
  const std::string changed = bench.take_canary();
  k.v.add("canary", changed.empty(), changed.empty() ? "" : launches + ": " + changed);
}

// 1. and 2.: the exact inputs (kCheckedLaunches launches) on the tiled variants (on every kernel in the
// self-test), and the probes on every kernel.
void check_exact_and_probes(std::vector<Kernel>& kernels, const Shape& s, const GemmOptions& o,
                            GemmBench& float_bench, cudaStream_t stream, const std::string& dims) {
  GemmBench exact_bench(s, InputMode::kExact, o.seed, dims, o.shared_poison);
  for (auto& k : kernels) {
    if (!k.is_stage && o.self_test == SelfTest::kNone) continue;  // the references: probes and float input only
    k.exact = exact_bench.run_checked(k.run, stream);
    k.v.add("exact", k.exact.pass, k.exact.reason);
    for (int l = 1; l < kCheckedLaunches; ++l) {
      const GemmCheck again = exact_bench.run_again(k.run, stream);
      k.v.add("exact", again.pass, again.pass ? "" : fmt::format("launch {}: {}", l + 1, again.reason));
    }
    add_canary(k, exact_bench, "the exact input");
  }
  for (auto probe : {GemmProbe::kA, GemmProbe::kB}) {
    for (auto& k : kernels) {
      const GemmCheck c = float_bench.run_probe(k.run, probe, stream);
      k.v.add(probe == GemmProbe::kA ? "probe_a" : "probe_b", c.pass, c.reason);
      add_canary(k, float_bench, probe == GemmProbe::kA ? "the probe of A" : "the probe of B");
    }
  }
}

// 3.: the measured input, checked, then timed and checked after the timing, its rate against the FP32 peak.
void measure(std::vector<Kernel>& kernels, GemmBench& bench, GpuTimer& timer, const GemmOptions& o, bool timing,
             const Shape& s, double peak_gflops) {
  for (auto& k : kernels) {
    progress(fmt::format("checking{} {}", timing ? " and timing" : "", k.name));
    k.measured = bench.run_checked(k.run, timer.stream());
    k.v.add(o.input == InputMode::kFloat ? "float" : "exact", k.measured.pass, k.measured.reason);
    add_canary(k, bench, fmt::format("the {} input", to_string(o.input)));
    if (!timing) continue;
    k.t = bench.time(timer, k.run, o.warmup, o.reps, &k.timed);
    k.v.add("timed", k.timed.pass, k.timed.pass ? "" : "the warm-up and timed launches: " + k.timed.reason);
    add_canary(k, bench, "the warm-up and timed launches");
    const std::string why = rate_above_peak(k.name, gflops(s, k.t.median_ms), peak_gflops, "GFLOP/s");
    k.v.add("rate", why.empty(), why);
    k.timed_launches = bench.timed_launches();
  }
}

// The kernels of a run: every tiled variant asked for, then (when timing) the naive kernel and cuBLAS.
std::vector<Kernel> kernels_for(const Shape& s, const GemmOptions& o, GemmFn gemm, CublasSgemm* cublas) {
  std::vector<Kernel> kernels;
  for (bool pad : o.pads) {
    const GemmLaunch l{o.tile, pad};
    kernels.push_back({variant_name(l), [=](const float* A, const float* B, float* C, cudaStream_t st) {
                         gemm(A, B, C, as_int(s.m), as_int(s.n), as_int(s.k), l, st);
                       }, true, pad, {}, {}, {}, {}, {}});
  }
  if (cublas == nullptr) return kernels;
  kernels.push_back({"naive", [=](const float* A, const float* B, float* C, cudaStream_t st) {
                       gemm_naive(A, B, C, as_int(s.m), as_int(s.n), as_int(s.k), st);
                     }, false, false, {}, {}, {}, {}, {}});
  kernels.push_back({"cuBLAS", [=](const float* A, const float* B, float* C, cudaStream_t st) {
                       cublas->run(A, B, C, as_int(s.m), as_int(s.n), as_int(s.k), st);
                     }, false, false, {}, {}, {}, {}, {}});
  return kernels;
}

// The verdict of a tiled variant's row: its own checks and those of the references it is compared with.
Verdict row_verdict(const Kernel& k, const Kernel* naive, const Kernel* cublas) {
  Verdict v = k.v;
  if (naive) v.add("naive", naive->v.pass(), naive->v.pass() ? "" : naive->v.failures().front());
  if (cublas) v.add("cublas", cublas->v.pass(), cublas->v.pass() ? "" : cublas->v.failures().front());
  return v;
}

Record make_record(const Kernel& k, const Verdict& v, const Kernel* naive, const Kernel* cublas, const Shape& s,
                   const GemmStage& stage, const GemmOptions& o, const DeviceInfo& d, const std::string& fp) {
  const bool timing = cublas != nullptr;
  const double ms = k.t.median_ms;
  // Repetitions not held behind the stream hold to the end, here and in the references' series (GpuTimer::time).
  const int unheld = timing ? k.t.hold_timeouts + naive->t.hold_timeouts + cublas->t.hold_timeouts : 0;
  Record r;
  add_context_fields(r, stage.name, d, o);
  r.add("m", s.m)
      .add("n", s.n)
      .add("k", s.k)
      .add("tile", o.tile)
      .add("pad", k.pad)
      .add("fingerprint", fp)
      .add("exact_check", v.field("exact"))
      .add("exact_method", k.exact.method)
      .add("probe_a_check", v.field("probe_a"))
      .add("probe_b_check", v.field("probe_b"))
      .add("float_check", o.input == InputMode::kExact ? "exact" : v.field("float"))
      .add("timed_check", v.field("timed"))
      .add("timing_check", !timing ? "-" : held_verdict(unheld).word())
      .add("check", v.word())
      .add("check_method", k.measured.method)
      .add("checked_elements", k.measured.elements)
      .add("worst_error_ratio", k.measured.worst, 3)
      .add("mean_error_sigma", k.measured.mean_z, 3)
      .add("launches_checked", static_cast<std::uint64_t>(kCheckedLaunches + 2 + 1 + k.timed_launches))
      .add("ms_median", timing ? ms : NAN)
      .add("ms_min", timing ? k.t.min_ms : NAN)
      .add("ms_max", timing ? k.t.max_ms : NAN)
      .add("gflops", timing ? gflops(s, ms) : NAN)
      .add("gbps", timing ? gbps(s, ms) : NAN);
  add_clock_fields(r, k.t, timing);
  r.add("naive_ms_median", timing ? naive->t.median_ms : NAN)
      .add("naive_gflops", timing ? gflops(s, naive->t.median_ms) : NAN)
      .add("naive_check", v.field("naive"))
      .add("cublas_ms_median", timing ? cublas->t.median_ms : NAN)
      .add("cublas_gflops", timing ? gflops(s, cublas->t.median_ms) : NAN)
      .add("cublas_check", v.field("cublas"))
      .add("cublas_math", CublasSgemm::math_mode())
      .add("pct_cublas", timing ? 100 * cublas->t.median_ms / ms : NAN, 4)
      .add("x_naive", timing ? naive->t.median_ms / ms : NAN, 4)
      .add("pct_fp32_peak", timing ? 100 * gflops(s, ms) / d.fp32_peak_gflops() : NAN, 4)
      .add("cublas_pct_fp32_peak", timing ? 100 * gflops(s, cublas->t.median_ms) / d.fp32_peak_gflops() : NAN, 4);
  return r;
}

void print_header(const GemmStage& stage, const Shape& s, const GemmOptions& o, const DeviceInfo& d,
                  const std::string& fp, bool timing) {
  fmt::print("{}: C = A * B in float (row-major), checked against the CPU oracle{}\n", stage.name,
             timing ? ", timed beside cuBLAS and a naive kernel" : "");
  fmt::print("  device   {}\n", device_line(d));
  fmt::print("  shape    M = {}, N = {}, K = {}: A, B and C together {}; {:.1f} GFLOP per product\n", s.m, s.n, s.k,
             human_bytes(static_cast<double>((s.m * s.k + s.k * s.n + s.m * s.n) * sizeof(float))),
             2.0 * s.m * s.n * s.k / 1e9);
  fmt::print("  input    {}, seed {}, fingerprint {}\n",
             o.input == InputMode::kFloat ? "float: uniform in [0,1)" : "exact: random values k/4, k in [-4,4], not 0",
             o.seed, fp);
  fmt::print("  check    PASS = every check passed: exact (the same launch, {} times, on values k/4 whose products and "
             "sums are exact in float: a wrong element of C fails it, and several in one row of a sampled check slip "
             "through with probability at most 2^-16), probes (A times a selection matrix and a selection matrix "
             "times B, with full-mantissa float A and B: C must be their selected elements bit for bit, so a TF32, "
             "bf16 or fp16 read fails), the canary (the NaN guards around A, B and C unchanged after every launch){}{}\n",
             kCheckedLaunches,
             o.input == InputMode::kFloat ? ", float (every element checked within its probabilistic bound, and their "
                                            "mean error centred: a rounding that leans one way fails)"
                                          : "",
             timing ? fmt::format(", every warm-up and timed launch (C poisoned before each, its fingerprint equal "
                                  "to the checked C's) and the naive kernel's and cuBLAS's, and none of their GFLOP/s "
                                  "more than {:g}% above the FP32 peak", 100 * kRateMargin)
                    : "");
  if (!timing) return;
  fmt::print("  timing   {}\n", timing_line(o, d));
  fmt::print("  cuBLAS   cublasSgemm, {}\n", CublasSgemm::math_mode());
  fmt::print("  GFLOP/s  2 M N K / median time; GB/s = bytes of A, B and C once / median time\n");
  fmt::print("  FP32     {:.0f} GFLOP/s theoretical: {} SMs x {} FMA lanes x 2 FLOP x {} MHz, from device "
             "attributes\n",
             d.fp32_peak_gflops(), d.sm_count, d.fp32_lanes_per_sm(), d.clock_khz / 1000);
}

// Judges and presents every kernel; returns whether all passed.
bool report(const std::vector<Kernel>& kernels, const Shape& s, const GemmStage& stage, const GemmOptions& o,
            const DeviceInfo& d, const std::string& fp) {
  const bool timing = !o.check_only;
  const Kernel* naive = timing ? &kernels[kernels.size() - 2] : nullptr;
  const Kernel* cublas = timing ? &kernels.back() : nullptr;
  auto ms = [&](double v) { return timing ? fmt::format("{:.3f}", v) : std::string("-"); };
  TextTable table({"kernel", "exact", "probes", "float", "check", "ms", "min", "max", "GFLOP/s", "GB/s", "% cuBLAS",
                   "x naive"});
  std::vector<Record> records;
  std::vector<std::string> notes;
  std::vector<TimingStats> series;
  bool all_pass = true;
  for (const auto& k : kernels) {
    const Verdict v = k.is_stage ? row_verdict(k, naive, cublas) : k.v;
    all_pass = all_pass && v.pass();
    table.add_row({k.name, k.v.field("exact"), k.v.field({"probe_a", "probe_b"}),
                   o.input == InputMode::kExact ? "exact" : k.v.field("float"), v.word(), ms(k.t.median_ms),
                   ms(k.t.min_ms), ms(k.t.max_ms), timing ? fmt::format("{:.0f}", gflops(s, k.t.median_ms)) : "-",
                   timing ? fmt::format("{:.1f}", gbps(s, k.t.median_ms)) : "-",
                   timing ? fmt::format("{:.1f}", 100 * cublas->t.median_ms / k.t.median_ms) : "-",
                   timing ? fmt::format("{:.2f}", naive->t.median_ms / k.t.median_ms) : "-"});
    for (const auto& failure : k.v.failures()) notes.push_back(fmt::format("FAIL {}: {}", k.name, failure));
    if (timing) series.push_back(k.t);
    if (!k.is_stage) continue;
    records.push_back(make_record(k, v, naive, cublas, s, stage, o, d, fp));
    if (v.pass() && o.pads.size() == 1) {
      notes.push_back(fmt::format("exact check: PASS ({}; {} elements compared one by one)", k.exact.method,
                                  k.exact.elements));
      if (o.input == InputMode::kFloat) {
        notes.push_back(fmt::format("float input: PASS ({}; the largest error is {:.2g} of its element's bound)",
                                    k.measured.method, k.measured.worst));
      }
    }
  }
  warn_about_clocks(stage.name, series);
  if (o.format != Format::kTable) {
    print_records(o.format, records);
    return all_pass;
  }
  print_header(stage, s, o, d, fp, timing);
  fmt::print("\n{}", table.str());
  for (const auto& note : notes) fmt::print("  {}\n", note);
  return all_pass;
}

int bench(const GemmStage& stage, GemmFn gemm, const GemmOptions& o, const DeviceInfo& d) {
  const Shape s{o.m, o.n, o.k};  // K <= 10^6 (the options' limit), so the exact inputs stay exact (K <= 2^20)
  const bool timing = !o.check_only;
  const std::size_t flush = GpuTimer::flush_bytes_for(d, timing ? o.flush : Flush::kNone);
  const std::string dims = fmt::format("-m {} -n {} -k {}", s.m, s.n, s.k);
  const int benches = o.input == InputMode::kFloat ? 2 : 3;  // exact, measured, and float operands for the probes
  const std::size_t operands = benches * GemmBench::device_bytes(s);
  require_device_memory(d, operands + flush,
                        fmt::format("A, B, C and the probes' selection matrices, for {} inputs {}, L2 flush buffer {}",
                                    benches, human_bytes(static_cast<double>(operands)),
                                    human_bytes(static_cast<double>(flush))),
                        dims);
  GpuTimer timer(d, timing ? o.flush : Flush::kNone);
  std::unique_ptr<CublasSgemm> cublas = timing ? std::make_unique<CublasSgemm>() : nullptr;
  std::vector<Kernel> kernels = kernels_for(s, o, gemm, cublas.get());

  progress(fmt::format("{}: generating A ({} x {}) and B ({} x {})", stage.name, s.m, s.k, s.k, s.n));
  GemmBench bench(s, o.input, o.seed, dims, o.shared_poison);
  // The probes need full-mantissa operands: the measured input's, or float ones made for them.
  std::unique_ptr<GemmBench> float_operands =
      o.input == InputMode::kFloat ? nullptr : std::make_unique<GemmBench>(s, InputMode::kFloat, o.seed, dims, o.shared_poison);
  progress(fmt::format("{}: exact check and precision probes", stage.name));
  check_exact_and_probes(kernels, s, o, float_operands ? *float_operands : bench, timer.stream(), dims);
  float_operands.reset();
  measure(kernels, bench, timer, o, timing, s, d.fp32_peak_gflops());
  return report(kernels, s, stage, o, d, fingerprint_hex(bench.fingerprint_ab())) ? 0 : 1;
}

// ---- --self-test: awkward shapes, both tiles, padded and not, every input and probe ---------------------

int self_test(const GemmStage& stage, GemmFn gemm, const GemmOptions& o, const DeviceInfo& d) {
  const bool full = o.self_test == SelfTest::kFull;
  std::vector<Shape> shapes = {{1, 1, 1}, {17, 33, 65}, {255, 257, 129}, {1000, 17, 300}, {17, 1000, 300}};
  if (full) {
    shapes.push_back({1024, 1024, 1024});
    shapes.push_back({o.m, o.n, o.k});
  } else {
    shapes = {{1, 1, 1}, {17, 33, 65}, {40, 70, 33}};
  }
  std::size_t largest = 0;
  for (const auto& s : shapes) largest = std::max(largest, 2 * GemmBench::device_bytes(s));  // exact and float
  require_device_memory(d, largest, "A, B, C and the selection matrices of the largest shape, twice", "--self-test");
  GpuTimer timer(d, Flush::kNone);
  std::unique_ptr<CublasSgemm> cublas = full ? std::make_unique<CublasSgemm>() : nullptr;

  std::size_t runs = 0, failures = 0;
  Verdict all;  // every kernel's checks at every shape: the self-test's one verdict
  fmt::print("{} self-test ({}): {} shapes x tiles 16, 32 x padded and not, plus the naive kernel{}: the exact "
             "inputs, both probes{}\n",
             stage.name, full ? "full" : "quick", shapes.size(), full ? " and cuBLAS" : "",
             full ? " and the float inputs" : "");
  for (const auto& s : shapes) {
    std::vector<Kernel> kernels;
    for (int tile : {16, 32}) {
      GemmOptions one = o;
      one.tile = tile;
      one.pads = {false, true};
      for (auto& k : kernels_for(s, one, gemm, nullptr)) kernels.push_back(std::move(k));
    }
    kernels.push_back({"naive", [=](const float* A, const float* B, float* C, cudaStream_t st) {
                         gemm_naive(A, B, C, as_int(s.m), as_int(s.n), as_int(s.k), st);
                       }, false, false, {}, {}, {}, {}, {}});
    if (cublas) {
      kernels.push_back({"cuBLAS", [&, s](const float* A, const float* B, float* C, cudaStream_t st) {
                           cublas->run(A, B, C, as_int(s.m), as_int(s.n), as_int(s.k), st);
                         }, false, false, {}, {}, {}, {}, {}});
    }
    GemmBench floats(s, InputMode::kFloat, o.seed, "--self-test", o.shared_poison);
    check_exact_and_probes(kernels, s, o, floats, timer.stream(), "--self-test");
    if (full) {
      GemmOptions f = o;
      f.input = InputMode::kFloat;
      measure(kernels, floats, timer, f, false, s, NAN);  // untimed: no rate to judge
    }
    for (const auto& k : kernels) {
      ++runs;
      all.add_all(k.v);
      if (k.v.pass()) continue;
      ++failures;
      for (const auto& failure : k.v.failures()) {
        fmt::print("  FAIL {} x {} x {}, {}: {}\n", s.m, s.n, s.k, k.name, failure);
      }
    }
    fmt::print("  {} x {} x {}: done\n", s.m, s.n, s.k);
  }
  fmt::print("{} self-test: {} kernels x shapes, {} failed: {}\n", stage.name, runs, failures, all.word());
  return all.pass() ? 0 : 1;
}

}  // namespace

int run_gemm_stage(int argc, char** argv, const GemmStage& stage, GemmFn gemm) {
  GemmOptions o;
  const ParseOutcome parsed = parse_gemm_options(stage.name, argc, argv, o);
  if (parsed.exit_status) return print_outcome(parsed);
  return run_program(stage.name, o, [&](const DeviceInfo& d) {
    if (o.determinism > 0) throw UsageError("--determinism applies to the reduce stages");
    if (o.self_test != SelfTest::kNone) return self_test(stage, gemm, o, d);
    return bench(stage, gemm, o, d);
  });
}

}  // namespace ladder
