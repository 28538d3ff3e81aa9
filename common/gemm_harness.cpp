// run_gemm_stage(): everything the GEMM stage does besides its kernel and launcher.
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "device_buffer.hpp"
#include "gemm_stage.hpp"
#include "harness.hpp"
#include "input.hpp"
#include "oracle.hpp"
#include "references.hpp"
#include "report.hpp"
#include "timer.hpp"

namespace ladder {

namespace {

struct Shape {
  std::uint64_t m, n, k;
};

double gflops(const Shape& s, double ms) { return ms > 0 ? 2.0 * s.m * s.n * s.k / (ms * 1e6) : NAN; }
double gbps(const Shape& s, double ms) {
  return ms > 0 ? static_cast<double>(s.m * s.k + s.k * s.n + s.m * s.n) * sizeof(float) / (ms * 1e6) : NAN;
}

std::string variant_name(const GemmLaunch& l) {
  return fmt::format("tiled {}x{}{}", l.tile, l.tile + (l.pad ? 1 : 0), l.pad ? " (padded)" : "");
}

// Host and device copies of A, B and C for one shape and input mode.
class GemmBench {
 public:
  GemmBench(const Shape& s, InputMode mode, std::uint64_t seed, const std::string& option)
      : s_(s),
        host_a_(host_floats(s.m * s.k, option)),
        host_b_(host_floats(s.k * s.n, option)),
        host_c_(host_floats(s.m * s.n, option)),
        a_(s.m * s.k),
        b_(s.k * s.n),
        c_(s.m * s.n) {
    generate_input(seed, 1, mode, host_a_.get(), s.m * s.k);
    generate_input(seed, 2, mode, host_b_.get(), s.k * s.n);
    CUDA_CHECK(cudaMemcpy(a_.get(), host_a_.get(), a_.bytes(), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(b_.get(), host_b_.get(), b_.bytes(), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaDeviceSynchronize());  // a copy from pageable memory may still be in flight when it returns
  }

  static std::size_t device_bytes(const Shape& s) { return (s.m * s.k + s.k * s.n + s.m * s.n) * sizeof(float); }

  // Poisons C, runs, copies C back and checks it against the CPU oracle.
  template <typename Run>
  GemmCheck run_checked(Run run, InputMode mode, std::uint64_t seed, cudaStream_t stream) {
    c_.poison(stream);
    run(a_.get(), b_.get(), c_.get(), stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaMemcpy(host_c_.get(), c_.get(), c_.bytes(), cudaMemcpyDeviceToHost));
    return check_gemm(host_a_.get(), host_b_.get(), host_c_.get(), s_.m, s_.n, s_.k, mode, seed);
  }

  template <typename Run>
  TimingStats time(GpuTimer& timer, Run run, int warmup, int reps) {
    return timer.time([&](cudaStream_t st) { run(a_.get(), b_.get(), c_.get(), st); }, warmup, reps);
  }

  std::uint64_t fingerprint_ab() const {
    return fingerprint(host_a_.get(), s_.m * s_.k) ^ (fingerprint(host_b_.get(), s_.k * s_.n) * 3);
  }

 private:
  Shape s_;
  std::unique_ptr<float[]> host_a_, host_b_, host_c_;
  DeviceBuffer<float> a_, b_, c_;
};

int as_int(std::uint64_t v) { return static_cast<int>(v); }

int bench(const GemmStage& stage, GemmFn gemm, const GemmOptions& o, const DeviceInfo& d) {
  const Shape s{o.m, o.n, o.k};
  const bool timing = !o.check_only;
  if (s.k > (1u << 20)) {  // the exact check runs on int inputs whatever --input says
    throw UsageError(fmt::format("-k {}: the exact check's int input is exact in float only up to K = 2^20", s.k));
  }
  const std::size_t flush = GpuTimer::flush_bytes_for(d, timing ? o.flush : Flush::kNone);
  require_device_memory(d, GemmBench::device_bytes(s) + flush,
                        fmt::format("A, B and C {}, L2 flush buffer {}",
                                    human_bytes(static_cast<double>(GemmBench::device_bytes(s))),
                                    human_bytes(static_cast<double>(flush))),
                        fmt::format("-m {} -n {} -k {}", s.m, s.n, s.k));

  GpuTimer timer(d, timing ? o.flush : Flush::kNone);
  const cudaStream_t stream = timer.stream();
  const std::string dims = fmt::format("-m {} -n {} -k {}", s.m, s.n, s.k);
  auto stage_run_for = [&](bool pad) {
    return [&, pad](const float* A, const float* B, float* C, cudaStream_t st) {
      gemm(A, B, C, as_int(s.m), as_int(s.n), as_int(s.k), GemmLaunch{o.tile, pad}, st);
    };
  };

  // 1. The exact check: every variant on int inputs, whose products and sums are exact in float, compared
  //    exactly (in full or, at large sizes, sampled and by Freivalds' test: see oracle.hpp).
  std::vector<GemmCheck> exact;
  if (o.input == InputMode::kFloat) {
    progress(fmt::format("{}: exact check on int inputs", stage.name));
    GemmBench ints(s, InputMode::kInt, o.seed, dims);
    for (bool pad : o.pads) exact.push_back(ints.run_checked(stage_run_for(pad), InputMode::kInt, o.seed, stream));
  }

  progress(fmt::format("{}: generating A ({} x {}) and B ({} x {})", stage.name, s.m, s.k, s.k, s.n));
  GemmBench bench(s, o.input, o.seed, dims);
  CublasSgemm cublas;
  auto naive_run = [&](const float* A, const float* B, float* C, cudaStream_t st) {
    gemm_naive(A, B, C, as_int(s.m), as_int(s.n), as_int(s.k), st);
  };
  auto cublas_run = [&](const float* A, const float* B, float* C, cudaStream_t st) {
    cublas.run(A, B, C, as_int(s.m), as_int(s.n), as_int(s.k), st);
  };
  const std::string fp = fingerprint_hex(bench.fingerprint_ab());
  bool all_pass = true;
  GemmCheck naive_check, cublas_check;
  TimingStats naive_t, cublas_t;
  if (timing) {
    progress(fmt::format("{}: checking and timing cuBLAS and the naive kernel", stage.name));
    naive_check = bench.run_checked(naive_run, o.input, o.seed, stream);
    cublas_check = bench.run_checked(cublas_run, o.input, o.seed, stream);
    naive_t = bench.time(timer, naive_run, o.warmup, o.reps);
    cublas_t = bench.time(timer, cublas_run, o.warmup, o.reps);
    all_pass = naive_check.pass && cublas_check.pass;
  }

  TextTable table({"kernel", "exact", "float", "check", "ms", "min", "max", "GFLOP/s", "GB/s", "% cuBLAS", "x naive"});
  std::vector<Record> records;
  std::vector<std::string> notes;
  auto ms = [&](double v) { return timing ? fmt::format("{:.3f}", v) : std::string("-"); };
  for (std::size_t v = 0; v < o.pads.size(); ++v) {
    const bool pad = o.pads[v];
    const GemmLaunch launch{o.tile, pad};
    const auto stage_run = stage_run_for(pad);
    progress(fmt::format("{}: checking{} {}", stage.name, timing ? " and timing" : "", variant_name(launch)));
    const GemmCheck check = bench.run_checked(stage_run, o.input, o.seed, stream);
    const GemmCheck& exact_check = o.input == InputMode::kInt ? check : exact[v];
    const bool pass = exact_check.pass && check.pass;
    all_pass = all_pass && pass;
    const TimingStats t = timing ? bench.time(timer, stage_run, o.warmup, o.reps) : TimingStats{};
    table.add_row({variant_name(launch), exact_check.pass ? "PASS" : "FAIL",
                   o.input == InputMode::kInt ? "exact" : check.pass ? "PASS" : "FAIL", pass ? "PASS" : "FAIL",
                   ms(t.median_ms), ms(t.min_ms), ms(t.max_ms),
                   timing ? fmt::format("{:.0f}", gflops(s, t.median_ms)) : "-",
                   timing ? fmt::format("{:.1f}", gbps(s, t.median_ms)) : "-",
                   timing ? fmt::format("{:.1f}", 100 * cublas_t.median_ms / t.median_ms) : "-",
                   timing ? fmt::format("{:.2f}", naive_t.median_ms / t.median_ms) : "-"});
    if (!exact_check.pass) {
      notes.push_back(fmt::format("FAIL {}: exact check ({}): {}", variant_name(launch), exact_check.method,
                                  exact_check.reason));
    }
    if (!check.pass && o.input == InputMode::kFloat) {
      notes.push_back(fmt::format("FAIL {}: float input: {}", variant_name(launch), check.reason));
    }
    Record r;
    add_context_fields(r, stage.name, d, o);
    r.add("m", s.m)
        .add("n", s.n)
        .add("k", s.k)
        .add("tile", o.tile)
        .add("pad", pad)
        .add("fingerprint", fp)
        .add("exact_check", exact_check.pass ? "PASS" : "FAIL")
        .add("exact_method", exact_check.method)
        .add("float_check", o.input == InputMode::kInt ? "exact" : check.pass ? "PASS" : "FAIL")
        .add("check", pass ? "PASS" : "FAIL")
        .add("check_method", check.method)
        .add("checked_elements", check.elements)
        .add("ms_median", timing ? t.median_ms : NAN)
        .add("ms_min", timing ? t.min_ms : NAN)
        .add("ms_max", timing ? t.max_ms : NAN)
        .add("gflops", timing ? gflops(s, t.median_ms) : NAN)
        .add("gbps", timing ? gbps(s, t.median_ms) : NAN)
        .add("naive_ms_median", timing ? naive_t.median_ms : NAN)
        .add("naive_gflops", timing ? gflops(s, naive_t.median_ms) : NAN)
        .add("naive_check", timing ? (naive_check.pass ? "PASS" : "FAIL") : "-")
        .add("cublas_ms_median", timing ? cublas_t.median_ms : NAN)
        .add("cublas_gflops", timing ? gflops(s, cublas_t.median_ms) : NAN)
        .add("cublas_check", timing ? (cublas_check.pass ? "PASS" : "FAIL") : "-")
        .add("cublas_math", CublasSgemm::math_mode())
        .add("pct_cublas", timing ? 100 * cublas_t.median_ms / t.median_ms : NAN, 4)
        .add("x_naive", timing ? naive_t.median_ms / t.median_ms : NAN, 4)
        .add("pct_fp32_peak", timing ? 100 * gflops(s, t.median_ms) / d.fp32_peak_gflops() : NAN, 4)
        .add("cublas_pct_fp32_peak", timing ? 100 * gflops(s, cublas_t.median_ms) / d.fp32_peak_gflops() : NAN, 4);
    records.push_back(std::move(r));
    if (pass && o.pads.size() == 1) {
      notes.push_back(fmt::format("exact check: PASS on int inputs ({}; {} elements compared one by one)",
                                  exact_check.method, exact_check.elements));
      if (o.input == InputMode::kFloat) {
        notes.push_back(fmt::format("float input: PASS ({}; the largest error is {:.2g} of its element's bound)",
                                    check.method, check.worst));
      }
    }
  }
  if (timing) {
    table.add_row({"naive", "-", naive_check.pass ? "PASS" : "FAIL", naive_check.pass ? "PASS" : "FAIL",
                   ms(naive_t.median_ms), ms(naive_t.min_ms),
                   ms(naive_t.max_ms), fmt::format("{:.0f}", gflops(s, naive_t.median_ms)),
                   fmt::format("{:.1f}", gbps(s, naive_t.median_ms)),
                   fmt::format("{:.1f}", 100 * cublas_t.median_ms / naive_t.median_ms), "1.00"});
    table.add_row({"cuBLAS", "-", cublas_check.pass ? "PASS" : "FAIL", cublas_check.pass ? "PASS" : "FAIL",
                   ms(cublas_t.median_ms), ms(cublas_t.min_ms),
                   ms(cublas_t.max_ms), fmt::format("{:.0f}", gflops(s, cublas_t.median_ms)),
                   fmt::format("{:.1f}", gbps(s, cublas_t.median_ms)), "100.0",
                   fmt::format("{:.2f}", naive_t.median_ms / cublas_t.median_ms)});
    if (!naive_check.pass) notes.push_back("FAIL naive: " + naive_check.reason);
    if (!cublas_check.pass) notes.push_back("FAIL cuBLAS: " + cublas_check.reason);
  }

  if (o.format != Format::kTable) {
    print_records(o.format, records);
  } else {
    fmt::print("{}: C = A * B in float (row-major), checked against the CPU oracle{}\n", stage.name,
               timing ? ", timed beside cuBLAS and a naive kernel" : "");
    fmt::print("  device   {}\n", device_line(d));
    fmt::print("  shape    M = {}, N = {}, K = {}: A, B and C together {}; {:.1f} GFLOP per product\n", s.m, s.n,
               s.k, human_bytes(static_cast<double>(GemmBench::device_bytes(s))), 2.0 * s.m * s.n * s.k / 1e9);
    fmt::print("  input    {}, seed {}, fingerprint {}\n",
               o.input == InputMode::kFloat ? "float: uniform in [0,1)" : "int: random non-zero integers in [-4,4]",
               o.seed, fp);
    fmt::print("  check    PASS = the exact check passed (the same launch on random integers in [-4, 4], whose "
               "products and sums are exact in float: a wrong element of C fails it, and several in one row of a "
               "sampled check slip through with probability at most 2^-16){}\n",
               o.input == InputMode::kFloat ? " and every float element checked is within its bound" : "");
    if (timing) {
      fmt::print("  timing   {}\n", timing_line(o, d));
      fmt::print("  cuBLAS   cublasSgemm, {}\n", CublasSgemm::math_mode());
      fmt::print("  GFLOP/s  2 M N K / median time; GB/s = bytes of A, B and C once / median time\n");
      fmt::print("  FP32     {:.0f} GFLOP/s theoretical: {} SMs x {} FMA lanes x 2 FLOP x {} MHz, from device "
                 "attributes\n", d.fp32_peak_gflops(), d.sm_count, d.fp32_lanes_per_sm(), d.clock_khz / 1000);
    }
    fmt::print("\n{}", table.str());
    for (const auto& note : notes) fmt::print("  {}\n", note);
  }
  return all_pass ? 0 : 1;
}

// ---- --self-test: awkward shapes, both tiles, padded and not, both input modes -------------------------

int self_test(const GemmStage& stage, GemmFn gemm, const GemmOptions& o, const DeviceInfo& d) {
  const bool full = o.self_test == SelfTest::kFull;
  std::vector<Shape> shapes = {{1, 1, 1}, {17, 33, 65}, {255, 257, 129}, {1000, 17, 300}, {17, 1000, 300}};
  if (full) {
    shapes.push_back({1024, 1024, 1024});
    shapes.push_back({o.m, o.n, o.k});
  } else {
    shapes = {{1, 1, 1}, {17, 33, 65}, {40, 70, 33}};
  }
  const std::vector<InputMode> modes = full ? std::vector<InputMode>{InputMode::kInt, InputMode::kFloat}
                                            : std::vector<InputMode>{InputMode::kInt};
  std::size_t largest = 0;
  for (const auto& s : shapes) largest = std::max(largest, GemmBench::device_bytes(s));
  require_device_memory(d, largest, "A, B and C of the largest shape", "--self-test");
  GpuTimer timer(d, Flush::kNone);
  const cudaStream_t stream = timer.stream();
  std::unique_ptr<CublasSgemm> cublas;
  if (full) cublas = std::make_unique<CublasSgemm>();

  std::size_t runs = 0, failures = 0;
  fmt::print("{} self-test ({}): {} shapes x {} input modes x tiles 16, 32 x padded and not, plus the naive kernel{}\n",
             stage.name, full ? "full" : "quick", shapes.size(), modes.size(), full ? " and cuBLAS" : "");
  for (const auto& s : shapes) {
    for (auto mode : modes) {
      GemmBench bench(s, mode, o.seed, "--self-test");
      auto record = [&](const std::string& what, const GemmCheck& c) {
        ++runs;
        if (!c.pass) {
          ++failures;
          fmt::print("  FAIL {} x {} x {}, input {}, {}: {}\n", s.m, s.n, s.k, to_string(mode), what, c.reason);
        }
      };
      for (int tile : {16, 32}) {
        for (bool pad : {false, true}) {
          const GemmLaunch l{tile, pad};
          record(variant_name(l), bench.run_checked(
                                      [&](const float* A, const float* B, float* C, cudaStream_t st) {
                                        gemm(A, B, C, as_int(s.m), as_int(s.n), as_int(s.k), l, st);
                                      },
                                      mode, o.seed, stream));
        }
      }
      record("naive", bench.run_checked(
                          [&](const float* A, const float* B, float* C, cudaStream_t st) {
                            gemm_naive(A, B, C, as_int(s.m), as_int(s.n), as_int(s.k), st);
                          },
                          mode, o.seed, stream));
      if (cublas) {
        record("cuBLAS", bench.run_checked(
                             [&](const float* A, const float* B, float* C, cudaStream_t st) {
                               cublas->run(A, B, C, as_int(s.m), as_int(s.n), as_int(s.k), st);
                             },
                             mode, o.seed, stream));
      }
      fmt::print("  {} x {} x {}, input {}: done\n", s.m, s.n, s.k, to_string(mode));
    }
  }
  fmt::print("{} self-test: {} runs, {} failed: {}\n", stage.name, runs, failures, failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}

}  // namespace

int run_gemm_stage(int argc, char** argv, const GemmStage& stage, GemmFn gemm) {
  GemmOptions o;
  const ParseOutcome parsed = parse_gemm_options(stage.name, argc, argv, o);
  if (parsed.exit_status) {
    std::fputs((parsed.text + "\n").c_str(), *parsed.exit_status == 0 ? stdout : stderr);
    return *parsed.exit_status;
  }
  return run_program(stage.name, o, [&](const DeviceInfo& d) {
    if (o.determinism > 0) throw UsageError("--determinism applies to the reduce stages");
    if (o.self_test != SelfTest::kNone) return self_test(stage, gemm, o, d);
    return bench(stage, gemm, o, d);
  });
}

}  // namespace ladder
