// run_gemm_stage(): everything the GEMM stage does besides its kernel and launcher. For every tiled variant (and the
// naive kernel and cuBLAS beside it): 1. the exact inputs (k/4), launched twice, each C compared exactly; 2. the
// operand-precision probes (oracle.hpp); 3. the measured input: checked, then timed, every launch's fingerprint of C
// equal to the checked C's, the last C compared bit for bit. The canary checks the NaN guards after every launch.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include <cublas_v2.h>
#include <fmt/format.h>

#include "gemm_stage.hpp"
#include "harness.hpp"
#include "input.hpp"
#include "oracle.hpp"
#include "references.hpp"

namespace ladder {
namespace {
void cublas_check(cublasStatus_t status, const char* call, int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  std::fprintf(stderr, "error: %s failed at common/gemm_harness.cpp:%d: %s (%s)\n", call, line,
               cublasGetStatusName(status), cublasGetStatusString(status));
  std::exit(2);
}
#define CUBLAS_CHECK(call) cublas_check((call), #call, __LINE__)
constexpr int kCheckedLaunches = 2;  // of the exact inputs: a kernel whose result changes between launches fails

// cuBLAS SGEMM in strict FP32: CUBLAS_PEDANTIC_MATH, no TF32, whatever NVIDIA_TF32_OVERRIDE says.
class CublasSgemm {
 public:
  CublasSgemm() {
    CUBLAS_CHECK(cublasCreate(&handle_));
    CUBLAS_CHECK(cublasSetMathMode(handle_, CUBLAS_PEDANTIC_MATH));
  }
  ~CublasSgemm() { cublasDestroy(handle_); }
  CublasSgemm(const CublasSgemm&) = delete;
  CublasSgemm& operator=(const CublasSgemm&) = delete;
  void run(const float* A, const float* B, float* C, int M, int N, int K, cudaStream_t stream) {
    const float alpha = 1.0f, beta = 0.0f;
    CUBLAS_CHECK(cublasSetStream(handle_, stream));
    // Row-major C (M x N) = A (M x K) * B (K x N) is column-major C^T (N x M) = B^T (N x K) * A^T (K x M).
    CUBLAS_CHECK(cublasSgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, N, A, K, &beta, C, N));
  }
  static const char* math_mode() { return "FP32, CUBLAS_PEDANTIC_MATH (no TF32)"; }

 private:
  cublasHandle_t handle_ = nullptr;
};

struct Shape {
  std::uint64_t m, n, k;
};

double gflops(const Shape& s, double ms) { return ms > 0 ? 2.0 * s.m * s.n * s.k / (ms * 1e6) : NAN; }
double gbps(const Shape& s, double ms) {
  return ms > 0 ? static_cast<double>(s.m * s.k + s.k * s.n + s.m * s.n) * sizeof(float) / (ms * 1e6) : NAN;
}

using GemmRun = std::function<void(const float* A, const float* B, float* C, cudaStream_t stream)>;

// One shape and input mode: A, B and C on the host and, between NaN guards, on the device; the checked, repeated,
// probing and timed launches, and the canary after each.
class GemmBench {
 public:
  GemmBench(const Shape& s, InputMode mode, std::uint64_t seed, const std::string& option, bool poison_shared)
      : s_(s), mode_(mode), seed_(seed), host_a_(host_floats(s.m * s.k, option)),
        host_b_(host_floats(s.k * s.n, option)), host_c_(host_floats(s.m * s.n, option)),
        host_again_(host_floats(s.m * s.n, option)), a_(kGuard + s.m * s.k + kGuard), b_(kGuard + s.k * s.n + kGuard),
        c_(kGuard + s.m * s.n + kGuard), poison_shared_(poison_shared) {
    generate_input(seed, 1, mode, host_a_.get(), s.m * s.k);
    generate_input(seed, 2, mode, host_b_.get(), s.k * s.n);
    for (const auto* guarded : {&a_, &b_}) guarded->poison(nullptr);  // the guards
    CUDA_CHECK(cudaMemcpy(a(), host_a_.get(), s.m * s.k * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(b(), host_b_.get(), s.k * s.n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaDeviceSynchronize());  // a copy from pageable memory may still be in flight when it returns
  }
  static std::size_t device_bytes(const Shape& s) {
    return (2 * (s.m * s.k + s.k * s.n) + s.m * s.n + 10 * kGuard) * sizeof(float);
  }
  // Poisons C, runs, copies C back (it stays in host_c_) and checks it against the CPU oracle.
  GemmCheck run_checked(const GemmRun& run, cudaStream_t stream) {
    launch_into(run, a(), b(), host_c_.get(), stream);
    checked_print_ = fingerprint(host_c_.get(), s_.m * s_.n);  // as fingerprint_on_device() gives it
    return check_gemm(host_a_.get(), host_b_.get(), host_c_.get(), s_.m, s_.n, s_.k, mode_, seed_);
  }
  // Runs again: C must be the last checked C bit for bit.
  GemmCheck run_again(const GemmRun& run, cudaStream_t stream) {
    launch_into(run, a(), b(), host_again_.get(), stream);
    return same_as_checked();
  }
  // A probe: this bench's full-mantissa operand times a selection matrix (or the other way round).
  GemmCheck run_probe(const GemmRun& run, GemmProbe probe, cudaStream_t stream) {
    const bool of_a = probe == GemmProbe::kA;
    const std::uint64_t count = of_a ? s_.k * s_.n : s_.m * s_.k;
    selection_ = std::make_unique<DeviceBuffer<float>>(kGuard + count + kGuard);
    selection_->poison(stream);  // the guards; in stream order before the zeros and the scatter
    CUDA_CHECK(cudaMemsetAsync(selection(), 0, count * sizeof(float), stream));
    const auto ones = selection_ones(probe, s_.m, s_.n, s_.k);
    scatter(selection(), ones, std::vector<float>(ones.size(), 1.0f), stream);
    launch_into(run, of_a ? a() : selection(), of_a ? selection() : b(), host_again_.get(), stream);
    return check_gemm_probe(probe, of_a ? host_a_.get() : host_b_.get(), host_again_.get(), s_.m, s_.n, s_.k);
  }
  // Times run: every launch's fingerprint of C must be the checked C's, and the last C the checked C bit for bit.
  TimingStats time(GpuTimer& timer, const GemmRun& run, int warmup, int reps, GemmCheck* after) {
    const Deadline deadline((GpuTimer::warmups(warmup) + reps) * (work() + timer.flush_bytes()),
                            "the warm-ups and timed repetitions of " + shape());
    const Kept<unsigned long long> kept(warmup, reps);
    const TimingStats t = timer.time(
        [&](cudaStream_t st) { run(a(), b(), c(), st); }, warmup, reps,
        {[&](cudaStream_t st) { c_.poison(st); },
         [&](cudaStream_t st, int l) { fingerprint_on_device(c(), s_.m * s_.n, kept.slot(l), st); }});
    const std::vector<unsigned long long> prints = kept.read(timer.stream());
    keep_canary(timer.stream());
    CUDA_CHECK(cudaMemcpy(host_again_.get(), c(), s_.m * s_.n * sizeof(float), cudaMemcpyDeviceToHost));
    *after = same_as_checked();
    for (std::size_t l = 0; l < prints.size() && after->pass; ++l) {
      if (prints[l] == checked_print_) continue;
      after->pass = false;
      after->reason = fmt::format("{}: C's fingerprint {:016x} is not the checked C's {:016x}: a deterministic kernel "
                                  "must give the same bits every launch",
                                  launch_name(static_cast<int>(l), warmup, reps), prints[l], checked_print_);
    }
    return t;
  }
  InputMode mode() const { return mode_; }
  // The first change to the guards since the last call ("" if none), forgotten.
  std::string take_canary() { return std::exchange(canary_found_, ""); }
  std::uint64_t fingerprint_ab() const {
    return fingerprint(host_a_.get(), s_.m * s_.k) ^ (fingerprint(host_b_.get(), s_.k * s_.n) * 3);
  }

 private:
  void launch_into(const GemmRun& run, const float* A, const float* B, float* host, cudaStream_t stream) {
    const Deadline deadline(work(), "a checked launch of " + shape());
    c_.poison(stream);
    if (poison_shared_) poison_shared_memory(stream);
    run(A, B, c(), stream);
    keep_canary(stream);
    CUDA_CHECK(cudaMemcpy(host, c(), s_.m * s_.n * sizeof(float), cudaMemcpyDeviceToHost));
  }
  // A launch's work for its Deadline: its flops at 10 GFLOP/s, counted as bytes at 1 GB/s.
  double work() const { return 2.0 * s_.m * s_.n * s_.k / 10; }
  std::string shape() const { return fmt::format("the GEMM, M = {}, N = {}, K = {}", s_.m, s_.n, s_.k); }
  // The canary after a launch: keeps the first guard of A, B, C or the selection matrix that no longer holds its NaN.
  void keep_canary(cudaStream_t stream) {
    std::vector<Guarded> buffers = {{a_.get(), kGuard, s_.m * s_.k, a_.count(), "A"},
                                    {b_.get(), kGuard, s_.k * s_.n, b_.count(), "B"},
                                    {c_.get(), kGuard, s_.m * s_.n, c_.count(), "C"}};
    if (selection_) {
      buffers.push_back({selection_->get(), kGuard, selection_->count() - 2 * kGuard, selection_->count(),
                         "the probe's selection matrix"});
    }
    const std::string changed = changed_poison(buffers, stream);  // waits for the stream
    if (canary_found_.empty()) canary_found_ = changed;
  }
  float* a() const { return a_.get() + kGuard; }
  float* b() const { return b_.get() + kGuard; }
  float* c() const { return c_.get() + kGuard; }
  float* selection() const { return selection_->get() + kGuard; }
  GemmCheck same_as_checked() const {
    GemmCheck same;  // only pass and reason: a repeated launch is judged against the checked C, not the oracle
    const float* again = host_again_.get();
    same.pass = std::memcmp(again, host_c_.get(), s_.m * s_.n * sizeof(float)) == 0;
    if (same.pass) return same;
    std::uint64_t e = 0;  // the first element that differs (memcmp saw one)
    while (std::memcmp(&again[e], &host_c_[e], sizeof(float)) == 0) ++e;
    same.reason = fmt::format("C[{}][{}] = {:.9g} where the checked launch gave {:.9g}: a deterministic kernel must "
                              "give the same bits", e / s_.n, e % s_.n, again[e], host_c_[e]);
    return same;
  }
  Shape s_;
  InputMode mode_;
  std::uint64_t seed_;
  std::unique_ptr<float[]> host_a_, host_b_, host_c_, host_again_;
  DeviceBuffer<float> a_, b_, c_;
  std::unique_ptr<DeviceBuffer<float>> selection_;
  bool poison_shared_;                    // NaN in every SM's shared memory before each checked launch
  unsigned long long checked_print_ = 0;  // the fingerprint of the last checked C
  std::string canary_found_;              // the first changed guard not yet taken
};

// One GEMM kernel of the run: a tiled variant, the naive kernel or cuBLAS, its checks and its timing.
struct Kernel {
  std::string name;
  GemmRun run;
  bool is_stage = false, pad = false;  // a tiled variant (the stage's own kernel); its tile rows padded
  Verdict v{};
  GemmCheck exact{}, measured{}, timed{};
  TimingStats t{};
  // The canary of this kernel's launches on `bench` since the last look: every NaN guard still NaN.
  void add_canary(GemmBench& bench, const std::string& launches) {
    const std::string changed = bench.take_canary();
    v.add("canary", changed.empty(), changed.empty() ? "" : launches + ": " + changed);
  }
};

// The kernels of a run: the tiled variants, then the naive kernel (with_naive) and cuBLAS (where `blas` is given).
std::vector<Kernel> kernels_for(const Shape& s, GemmFn gemm, const std::vector<GemmLaunch>& variants, bool with_naive,
                                CublasSgemm* blas) {
  const int m = static_cast<int>(s.m), n = static_cast<int>(s.n), k = static_cast<int>(s.k);
  std::vector<Kernel> kernels;
  for (const GemmLaunch& l : variants) {
    kernels.push_back({fmt::format("tiled {}x{}{}", l.tile, l.tile + (l.pad ? 1 : 0), l.pad ? " (padded)" : ""),
                       [=](auto A, auto B, auto C, auto st) { gemm(A, B, C, m, n, k, l, st); }, true, l.pad});
  }
  if (with_naive) {
    kernels.push_back({"naive", [=](auto A, auto B, auto C, auto st) { gemm_naive(A, B, C, m, n, k, st); }});
  }
  if (blas) kernels.push_back({"cuBLAS", [=](auto A, auto B, auto C, auto st) { blas->run(A, B, C, m, n, k, st); }});
  return kernels;
}

// 1. and 2.: the exact inputs on the tiled variants (every kernel in the self-test), the probes on every kernel.
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
    k.add_canary(exact_bench, "the exact input");
  }
  for (auto probe : {GemmProbe::kA, GemmProbe::kB}) {
    for (auto& k : kernels) {
      const GemmCheck c = float_bench.run_probe(k.run, probe, stream);
      k.v.add(probe == GemmProbe::kA ? "probe_a" : "probe_b", c.pass, c.reason);
      k.add_canary(float_bench, probe == GemmProbe::kA ? "the probe of A" : "the probe of B");
    }
  }
}

// 3.: the measured input, checked, then timed and checked again, its rate against the FP32 peak.
void measure(std::vector<Kernel>& kernels, GemmBench& bench, GpuTimer& timer, const GemmOptions& o, bool timing,
             const Shape& s, double peak_gflops) {
  for (auto& k : kernels) {
    progress(fmt::format("checking{} {}", timing ? " and timing" : "", k.name));
    k.measured = bench.run_checked(k.run, timer.stream());
    k.v.add(to_string(bench.mode()), k.measured.pass, k.measured.reason);
    k.add_canary(bench, fmt::format("the {} input", to_string(bench.mode())));
    if (!timing) continue;
    k.t = bench.time(timer, k.run, o.warmup, o.reps, &k.timed);
    k.v.add("timed", k.timed.pass, k.timed.pass ? "" : "the warm-up and timed launches: " + k.timed.reason);
    k.add_canary(bench, "the warm-up and timed launches");
    rate_above_peak(k.v, k.name, gflops(s, k.t.median_ms), peak_gflops, "GFLOP/s");
  }
}

Record make_record(const Kernel& k, const Verdict& v, const Kernel* naive, const Kernel* cublas, const Shape& s,
                   const char* stage, const GemmOptions& o, const DeviceInfo& d, const std::string& fp) {
  const bool timing = cublas != nullptr;
  const double ms = k.t.median_ms, naive_ms = timing ? naive->t.median_ms : NAN, peak = d.fp32_peak_gflops();
  const double cublas_ms = timing ? cublas->t.median_ms : NAN, cublas_gflops = gflops(s, cublas_ms);
  const auto if_timed = [&](double value) { return timing ? value : NAN; };
  // Repetitions not held behind the stream hold to the end, here and in the references' series (GpuTimer::time).
  const int unheld = timing ? k.t.hold_timeouts + naive->t.hold_timeouts + cublas->t.hold_timeouts : 0;
  Record r;
  add_context_fields(r, stage, d, o);
  r.add("m", s.m).add("n", s.n).add("k", s.k).add("tile", o.tile).add("pad", k.pad).add("fingerprint", fp);
  r.add("exact_check", v.field("exact")).add("exact_method", k.exact.method);
  r.add("probe_a_check", v.field("probe_a")).add("probe_b_check", v.field("probe_b"));
  r.add("float_check", o.input == InputMode::kExact ? "exact" : v.field("float")).add("timed_check", v.field("timed"));
  r.add("timing_check", timing_check(timing, unheld)).add("check", v.word());
  r.add("check_method", k.measured.method).add("checked_elements", k.measured.elements);
  r.add("worst_error_ratio", k.measured.worst, 3).add("mean_error_sigma", k.measured.mean_z, 3);
  r.add("launches_checked", kCheckedLaunches + 2 + 1 + (timing ? GpuTimer::warmups(o.warmup) + o.reps : 0));
  r.add("ms_median", if_timed(ms)).add("ms_min", if_timed(k.t.min_ms)).add("ms_max", if_timed(k.t.max_ms));
  r.add("gflops", if_timed(gflops(s, ms))).add("gbps", if_timed(gbps(s, ms)));
  add_clock_fields(r, k.t, timing);
  r.add("naive_ms_median", naive_ms).add("naive_gflops", gflops(s, naive_ms)).add("naive_check", v.field("naive"));
  r.add("cublas_ms_median", cublas_ms).add("cublas_gflops", cublas_gflops).add("cublas_check", v.field("cublas"));
  r.add("cublas_math", CublasSgemm::math_mode()).add("pct_cublas", 100 * cublas_ms / ms, 4);
  r.add("x_naive", naive_ms / ms, 4).add("pct_fp32_peak", if_timed(100 * gflops(s, ms) / peak), 4);
  return r.add("cublas_pct_fp32_peak", 100 * cublas_gflops / peak, 4);
}

void print_header(const char* stage, const Shape& s, const GemmOptions& o, const DeviceInfo& d,
                  const std::string& fp, bool timing) {
  fmt::print("{}: C = A * B in float (row-major), checked against the CPU oracle{}\n  device   {}\n", stage,
             timing ? ", timed beside cuBLAS and a naive kernel" : "", device_line(d));
  fmt::print("  shape    M = {}, N = {}, K = {}: A, B and C together {}; {:.1f} GFLOP per product\n  input    {}, seed "
             "{}, fingerprint {}\n", s.m, s.n, s.k, human_bytes((s.m * s.k + s.k * s.n + s.m * s.n) * sizeof(float)),
             2.0 * s.m * s.n * s.k / 1e9,
             o.input == InputMode::kFloat ? "float: uniform in [0,1)" : "exact: random values k/4, k in [-4,4], not 0",
             o.seed, fp);
  const char* floats = o.input != InputMode::kFloat ? "" : ", float (every element checked within its probabilistic "
      "bound, and their mean error centred: a rounding that leans one way fails)";
  const std::string timed = !timing ? "" : fmt::format(", every warm-up and timed launch (C poisoned before each, its "
      "fingerprint equal to the checked C's) and the naive kernel's and cuBLAS's, and none of their GFLOP/s more than "
      "{:g}% above the FP32 peak", 100 * kRateMargin);
  fmt::print("  check    PASS = every check passed: exact (the same launch, {} times, on values k/4 whose products and "
             "sums are exact in float: a wrong element of C fails it, and several in one row of a sampled check slip "
             "through with probability at most 2^-16), probes (A times a selection matrix and a selection matrix "
             "times B, with full-mantissa float A and B: C must be their selected elements bit for bit, so a TF32, "
             "bf16 or fp16 read fails), the canary (the NaN guards around A, B and C unchanged after every launch)"
             "{}{}\n", kCheckedLaunches, floats, timed);
  if (!timing) return;
  fmt::print("  timing   {}\n  cuBLAS   cublasSgemm, {}\n  GFLOP/s  2 M N K / median time; GB/s = bytes of A, B and C "
             "once / median time\n  FP32     {:.0f} GFLOP/s theoretical: {} SMs x {} FMA lanes x 2 FLOP x {} MHz, from "
             "device attributes\n", timing_line(o, d), CublasSgemm::math_mode(), d.fp32_peak_gflops(), d.sm_count,
             d.fp32_lanes_per_sm(), d.clock_khz / 1000);
}

int bench(const char* stage, GemmFn gemm, const GemmOptions& o, const DeviceInfo& d) {
  const Shape s{o.m, o.n, o.k};  // K <= 10^6 (the options' limit), so the exact inputs stay exact (K <= 2^20)
  const bool timing = !o.check_only;
  const Flush flush_mode = timing ? o.flush : Flush::kNone;
  const std::size_t flush = GpuTimer::flush_bytes(d.l2_bytes, flush_mode);
  const std::string dims = fmt::format("-m {} -n {} -k {}", s.m, s.n, s.k);
  const int benches = o.input == InputMode::kFloat ? 2 : 3;  // exact, measured, and float operands for the probes
  const std::size_t operands = benches * GemmBench::device_bytes(s);
  require_device_memory(d, operands + flush,
                        fmt::format("A, B, C and the probes' selection matrices, for {} inputs {}, L2 flush buffer {}",
                                    benches, human_bytes(operands), human_bytes(flush)), dims);
  GpuTimer timer(d.l2_bytes, flush_mode);
  std::unique_ptr<CublasSgemm> cublas = timing ? std::make_unique<CublasSgemm>() : nullptr;
  std::vector<GemmLaunch> variants;
  for (bool pad : o.pads) variants.push_back({o.tile, pad});
  std::vector<Kernel> kernels = kernels_for(s, gemm, variants, timing, cublas.get());
  progress(fmt::format("{}: generating A ({} x {}) and B ({} x {})", stage, s.m, s.k, s.k, s.n));
  GemmBench bench(s, o.input, o.seed, dims, o.shared_poison);
  {  // The probes need full-mantissa operands: the measured input's, or float ones made for them.
    const auto floats = o.input == InputMode::kFloat ? nullptr
                                                     : std::make_unique<GemmBench>(s, InputMode::kFloat, o.seed, dims,
                                                                                   o.shared_poison);
    progress(fmt::format("{}: exact check and precision probes", stage));
    check_exact_and_probes(kernels, s, o, floats ? *floats : bench, timer.stream(), dims);
  }
  measure(kernels, bench, timer, o, timing, s, d.fp32_peak_gflops());
  const std::string fp = fingerprint_hex(bench.fingerprint_ab());
  const Kernel* naive = timing ? &kernels[kernels.size() - 2] : nullptr;
  const Kernel* cublas_kernel = timing ? &kernels.back() : nullptr;
  const auto ms = [&](double v) { return timing ? fmt::format("{:.3f}", v) : std::string("-"); };
  Report report;
  report.table.push_back({"kernel", "exact", "probes", "float", "check", "ms", "min", "max", "GFLOP/s", "GB/s",
                          "% cuBLAS", "x naive"});
  for (const auto& k : kernels) {
    // A tiled variant's verdict: its own checks and those of the references it is compared with.
    Verdict v = k.v;
    for (const Kernel* ref : {naive, cublas_kernel}) {
      if (!k.is_stage || !ref) continue;
      v.add(ref == naive ? "naive" : "cublas", ref->v.pass(), ref->v.pass() ? "" : ref->v.failures().front());
    }
    report.pass = report.pass && v.pass();
    const double t = k.t.median_ms;
    report.table.push_back({k.name, k.v.field("exact"), k.v.field({"probe_a", "probe_b"}),
                            o.input == InputMode::kExact ? "exact" : k.v.field("float"), v.word(), ms(t),
                            ms(k.t.min_ms), ms(k.t.max_ms), timing ? fmt::format("{:.0f}", gflops(s, t)) : "-",
                            timing ? fmt::format("{:.1f}", gbps(s, t)) : "-",
                            timing ? fmt::format("{:.1f}", 100 * cublas_kernel->t.median_ms / t) : "-",
                            timing ? fmt::format("{:.2f}", naive->t.median_ms / t) : "-"});
    for (const auto& failure : k.v.failures()) report.notes.push_back(fmt::format("FAIL {}: {}", k.name, failure));
    if (timing) report.series.push_back(k.t);
    if (!k.is_stage) continue;
    report.records.push_back(make_record(k, v, naive, cublas_kernel, s, stage, o, d, fp));
    if (v.pass() && o.pads.size() == 1) {
      report.notes.push_back(fmt::format("exact check: PASS ({}; {} elements compared one by one)", k.exact.method,
                                         k.exact.elements));
      if (o.input == InputMode::kFloat) {
        report.notes.push_back(fmt::format("float input: PASS ({}; the largest error is {:.2g} of its element's "
                                           "bound)", k.measured.method, k.measured.worst));
      }
    }
  }
  return report.print(stage, o.format, [&] { print_header(stage, s, o, d, fp, timing); });
}

// --self-test: awkward shapes, both tiles, padded and not, every input and probe.
int self_test(const char* stage, GemmFn gemm, const GemmOptions& o, const DeviceInfo& d) {
  const bool full = o.self_test == SelfTest::kFull;
  const std::vector<Shape> shapes = full ? std::vector<Shape>{{1, 1, 1}, {17, 33, 65}, {255, 257, 129}, {1000, 17, 300},
                                                             {17, 1000, 300}, {1024, 1024, 1024}, {o.m, o.n, o.k}}
                                         : std::vector<Shape>{{1, 1, 1}, {17, 33, 65}, {40, 70, 33}};
  std::size_t largest = 0;
  for (const auto& s : shapes) largest = std::max(largest, 2 * GemmBench::device_bytes(s));  // exact and float
  require_device_memory(d, largest, "A, B, C and the selection matrices of the largest shape, twice", "--self-test");
  GpuTimer timer(d.l2_bytes, Flush::kNone);
  std::unique_ptr<CublasSgemm> cublas = full ? std::make_unique<CublasSgemm>() : nullptr;
  std::size_t runs = 0, failures = 0;
  Verdict all;  // every kernel's checks at every shape: the self-test's one verdict
  fmt::print("{} self-test ({}): {} shapes x tiles 16, 32 x padded and not, plus the naive kernel{}: the exact "
             "inputs, both probes{}\n",
             stage, full ? "full" : "quick", shapes.size(), full ? " and cuBLAS" : "",
             full ? " and the float inputs" : "");
  for (const auto& s : shapes) {
    std::vector<Kernel> kernels = kernels_for(s, gemm, {{16, false}, {16, true}, {32, false}, {32, true}}, true,
                                              cublas.get());
    GemmBench floats(s, InputMode::kFloat, o.seed, "--self-test", o.shared_poison);
    check_exact_and_probes(kernels, s, o, floats, timer.stream(), "--self-test");
    if (full) measure(kernels, floats, timer, o, false, s, NAN);  // untimed: no rate to judge
    for (const auto& k : kernels) {
      ++runs;
      all.add_all(k.v);
      if (k.v.pass()) continue;
      ++failures;
      for (const auto& why : k.v.failures()) fmt::print("  FAIL {} x {} x {}, {}: {}\n", s.m, s.n, s.k, k.name, why);
    }
    fmt::print("  {} x {} x {}: done\n", s.m, s.n, s.k);
  }
  fmt::print("{} self-test: {} kernels x shapes, {} failed: {}\n", stage, runs, failures, all.word());
  return all.pass() ? 0 : 1;
}
}  // namespace

int run_gemm_stage(int argc, char** argv, const char* stage, GemmFn gemm) {
  GemmOptions o;
  if (const auto parsed = parse_gemm_options(stage, argc, argv, o); parsed.exit_status) return print_outcome(parsed);
  return run_program(stage, o, [&](const DeviceInfo& d) {
    return o.self_test != SelfTest::kNone ? self_test(stage, gemm, o, d) : bench(stage, gemm, o, d);
  });
}
}  // namespace ladder
