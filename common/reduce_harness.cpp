// run_reduce_stage(): everything a reduce stage does besides its kernel and launcher.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include <fmt/format.h>

#include "device_buffer.hpp"
#include "harness.hpp"
#include "input.hpp"
#include "oracle.hpp"
#include "reduce_stage.hpp"
#include "references.hpp"
#include "report.hpp"
#include "timer.hpp"

namespace ladder {

namespace {

constexpr unsigned kMaxGrid = 2147483647u;  // gridDim.x limit
constexpr unsigned kMinBlock = 64;
constexpr unsigned kSelfTestMaxOffset = 3;

// Blocks that fit on the GPU at once: SMs x (threads per SM / block), capped by the blocks-per-SM limit.
unsigned resident_grid(const DeviceInfo& d, unsigned block) {
  const int per_sm = std::max(1, std::min(d.max_threads_per_sm / static_cast<int>(block), d.max_blocks_per_sm));
  return static_cast<unsigned>(d.sm_count * per_sm);
}

unsigned grid_limit(const DeviceInfo& d, Regime regime, unsigned requested_grid, unsigned block) {
  if (regime == Regime::kTree) return kMaxGrid;
  return requested_grid ? requested_grid : resident_grid(d, block);
}

std::uint64_t first_grid(std::uint64_t n, unsigned block, unsigned limit) {
  return std::min<std::uint64_t>(ceil_div<std::uint64_t>(n, block), limit);
}

double gbps(std::uint64_t n, double ms) { return ms > 0 ? static_cast<double>(n) * sizeof(float) / (ms * 1e6) : NAN; }

// How far CUB's own summation order can be from the result (for checking the reference itself): CUB's
// 256-thread blocks read 16 items per thread per tile, at least one block per SM when there is enough work,
// and its second pass runs one block over at most 40 partial sums per SM.
std::uint64_t cub_depth(std::uint64_t n, const DeviceInfo& d) {
  return summation_depth(n, static_cast<std::uint64_t>(d.sm_count), 256, Combine::kRelaunch) + 16 +
         ceil_div<std::uint64_t>(40ull * d.sm_count, 256);
}

std::string launch_description(const ReduceOptions& o, const DeviceInfo& d) {
  if (o.regime == Regime::kTree) return "tree regime: one element per thread, grid = n / block";
  if (o.grid) return fmt::format("stream regime: grid = min(n / block, --grid {})", o.grid);
  return fmt::format("stream regime: grid = min(n / block, SMs x resident blocks = {} x (2048 threads / block))",
                     d.sm_count);
}

struct Config {
  std::uint64_t n;
  unsigned block;
  Combine combine;
  unsigned limit;  // grid limit
};

// The device side of one stage: input, output, scratch, and the checked run.
class ReduceBench {
 public:
  ReduceBench(ReduceFn reduce, const ReduceOptions& o, const DeviceInfo& d, std::uint64_t max_n,
              std::uint64_t max_partials, unsigned max_offset, bool timing)
      : reduce_(reduce),
        o_(o),
        input_(max_n + max_offset),
        out_(1),
        partials0_(max_partials),
        partials1_(max_partials),
        ticket_(1),
        timer_(d, timing ? o.flush : Flush::kNone) {
    CUDA_CHECK(cudaMemset(ticket_.get(), 0, sizeof(unsigned)));
  }

  // Device memory this would need, itemised, so a too-large request is refused before any allocation.
  static std::pair<std::size_t, std::string> memory_needed(const ReduceOptions& o, const DeviceInfo& d,
                                                           std::uint64_t max_n, std::uint64_t max_partials,
                                                           unsigned max_offset, bool timing) {
    const std::size_t input = (max_n + max_offset) * sizeof(float);
    const std::size_t scratch = 2 * max_partials * sizeof(float);
    const std::size_t flush = GpuTimer::flush_bytes_for(d, timing ? o.flush : Flush::kNone);
    std::size_t cub = 0;
    if (timing) {
      for (auto n : o.sizes) cub = std::max(cub, CubSum::temp_bytes(n));
    }
    return {input + scratch + flush + cub + 64,
            fmt::format("input {}, partial sums {}, L2 flush buffer {}, CUB temporary storage {}",
                        human_bytes(static_cast<double>(input)), human_bytes(static_cast<double>(scratch)),
                        human_bytes(static_cast<double>(flush)), human_bytes(static_cast<double>(cub)))};
  }

  void upload(const float* host, std::uint64_t count, unsigned offset) {
    CUDA_CHECK(cudaMemcpy(input_.get() + offset, host, count * sizeof(float), cudaMemcpyHostToDevice));
  }
  const float* input(unsigned offset) const { return input_.get() + offset; }

  ReduceLaunch launch(const Config& c) const {
    return ReduceLaunch{c.block, c.limit, c.combine, {partials0_.get(), partials1_.get()}, ticket_.get()};
  }

  // Poisons the output and the scratch, runs the stage once, returns the result.
  float run_checked(const float* in, const Config& c) {
    const cudaStream_t s = timer_.stream();
    out_.poison(s);
    const std::size_t scratch = first_grid(c.n, c.block, c.limit) * sizeof(float);
    CUDA_CHECK(cudaMemsetAsync(partials0_.get(), 0xFF, scratch, s));
    CUDA_CHECK(cudaMemsetAsync(partials1_.get(), 0xFF, scratch, s));
    reduce_(in, c.n, out_.get(), launch(c), s);
    CUDA_CHECK(cudaStreamSynchronize(s));
    float result = 0;
    CUDA_CHECK(cudaMemcpy(&result, out_.get(), sizeof(float), cudaMemcpyDeviceToHost));
    return result;
  }

  TimingStats time_stage(const float* in, const Config& c) {
    const ReduceLaunch l = launch(c);
    return timer_.time([&](cudaStream_t s) { reduce_(in, c.n, out_.get(), l, s); }, o_.warmup, o_.reps);
  }

  GpuTimer& timer() { return timer_; }
  float* out() const { return out_.get(); }

 private:
  ReduceFn reduce_;
  const ReduceOptions& o_;
  DeviceBuffer<float> input_, out_, partials0_, partials1_;
  DeviceBuffer<unsigned> ticket_;
  GpuTimer timer_;
};

std::uint64_t max_partials_for(const std::vector<std::uint64_t>& sizes, const std::vector<unsigned>& blocks,
                               const std::vector<unsigned>& limits) {
  std::uint64_t most = 1;
  for (auto n : sizes) {
    for (std::size_t i = 0; i < blocks.size(); ++i) most = std::max(most, first_grid(n, blocks[i], limits[i]));
  }
  return most;
}

void require_tree_grid(const ReduceOptions& o) {
  for (auto n : o.sizes) {
    for (auto b : o.blocks) {
      if (o.regime == Regime::kTree && ceil_div<std::uint64_t>(n, b) > kMaxGrid) {
        throw UsageError(fmt::format("-n {}: the tree regime would launch {} blocks of {} threads; a grid holds at "
                                     "most 2^31-1 blocks (use a larger --block or the stream regime)",
                                     n, ceil_div<std::uint64_t>(n, b), b));
      }
    }
  }
}

// ---- the benchmark: check, then time the stage and CUB, then report ------------------------------------

int bench(const ReduceStage& stage, ReduceFn reduce, const ReduceOptions& o, const DeviceInfo& d) {
  require_tree_grid(o);
  const bool timing = !o.check_only;
  const std::uint64_t max_n = *std::max_element(o.sizes.begin(), o.sizes.end());
  std::vector<unsigned> limits;
  for (auto b : o.blocks) limits.push_back(grid_limit(d, o.regime, o.grid, b));
  const std::uint64_t max_partials = max_partials_for(o.sizes, o.blocks, limits);
  const auto [needed, breakdown] = ReduceBench::memory_needed(o, d, max_n, max_partials, o.offset, timing);
  require_device_memory(d, needed, breakdown, fmt::format("-n {}", max_n));

  progress(fmt::format("{}: generating {} input floats (seed {})", stage.name, max_n, o.seed));
  auto host = host_floats(max_n, fmt::format("-n {}", max_n));
  generate_input(o.seed, 0, o.input, host.get(), max_n);

  ReduceBench bench(reduce, o, d, max_n, max_partials, o.offset, timing);
  bench.upload(host.get(), max_n, o.offset);
  const float* in = bench.input(o.offset);
  std::unique_ptr<CubSum> cub;
  if (timing) cub = std::make_unique<CubSum>(std::vector<std::size_t>(o.sizes.begin(), o.sizes.end()));

  struct CubResult {
    TimingStats t;
    SumCheck check;
  };
  std::map<std::uint64_t, CubResult> cub_results;
  std::vector<Record> records;
  TextTable table({"n", "block", "grid", "combine", "fingerprint", "check", "ms", "min", "max", "GB/s", "% peak",
                   "CUB ms", "CUB GB/s", "x CUB"});
  std::vector<std::string> notes;
  bool all_pass = true;

  for (auto n : o.sizes) {
    const std::string fp = fingerprint_hex(fingerprint(host.get(), n));
    const SumReference ref = reference_sum(host.get(), n);
    for (std::size_t bi = 0; bi < o.blocks.size(); ++bi) {
      for (auto combine : o.combines) {
        const Config c{n, o.blocks[bi], combine, limits[bi]};
        const std::uint64_t grid = first_grid(n, c.block, c.limit);
        progress(fmt::format("{}: n = {}, block {}, {}: checking{}", stage.name, n, c.block, to_string(combine),
                             timing ? " and timing" : ""));
        const float result = bench.run_checked(in, c);
        const SumCheck check = check_sum(result, ref, o.input, summation_depth(n, grid, c.block, combine));
        all_pass = all_pass && check.pass;

        TimingStats t;
        CubResult* cr = nullptr;
        if (timing) {
          t = bench.time_stage(in, c);
          auto it = cub_results.find(n);
          if (it == cub_results.end()) {
            CubResult r;
            const cudaStream_t s = bench.timer().stream();
            CUDA_CHECK(cudaMemsetAsync(bench.out(), 0xFF, sizeof(float), s));
            cub->run(in, n, bench.out(), s);
            CUDA_CHECK(cudaStreamSynchronize(s));
            float cub_result = 0;
            CUDA_CHECK(cudaMemcpy(&cub_result, bench.out(), sizeof(float), cudaMemcpyDeviceToHost));
            r.check = check_sum(cub_result, ref, o.input, cub_depth(n, d));
            r.t = bench.timer().time([&](cudaStream_t st) { cub->run(in, n, bench.out(), st); }, o.warmup, o.reps);
            if (!r.check.pass) notes.push_back(fmt::format("CUB FAILED at n = {}: {}", n, r.check.reason));
            all_pass = all_pass && r.check.pass;
            it = cub_results.emplace(n, r).first;
          }
          cr = &it->second;
        }
        const double stage_gbps = timing ? gbps(n, t.median_ms) : NAN;
        const double cub_gbps = cr ? gbps(n, cr->t.median_ms) : NAN;
        const double x_cub = cr ? cr->t.median_ms / t.median_ms : NAN;
        const double peak = d.peak_gbps();

        auto ms = [&](double v) { return timing ? fmt::format("{:.4f}", v) : std::string("-"); };
        table.add_row({std::to_string(n), std::to_string(c.block), std::to_string(grid), to_string(combine), fp,
                       check.pass ? "PASS" : "FAIL", ms(t.median_ms), ms(t.min_ms), ms(t.max_ms),
                       timing ? fmt::format("{:.1f}", stage_gbps) : "-",
                       timing ? fmt::format("{:.1f}", 100 * stage_gbps / peak) : "-", cr ? ms(cr->t.median_ms) : "-",
                       cr ? fmt::format("{:.1f}", cub_gbps) : "-", cr ? fmt::format("{:.2f}", x_cub) : "-"});
        if (!check.pass) {
          notes.push_back(fmt::format("FAIL n = {}, block {}, {}: {}", n, c.block, to_string(combine), check.reason));
        } else if (o.sizes.size() * o.blocks.size() * o.combines.size() == 1) {
          notes.push_back(o.input == InputMode::kInt
                              ? fmt::format("check: PASS, result {} equals the exact sum", result)
                              : fmt::format("check: PASS, result {:.9g}, oracle {:.17g}, |error| {:.3g} <= "
                                            "tolerance {:.3g} (summation depth {})",
                                            result, ref.sum, check.error, check.tolerance,
                                            summation_depth(n, grid, c.block, combine)));
        }

        Record r;
        add_context_fields(r, stage.name, d, o);
        r.add("regime", to_string(o.regime))
            .add("offset", o.offset)
            .add("n", n)
            .add("bytes", n * sizeof(float))
            .add("block", c.block)
            .add("grid", grid)
            .add("combine", to_string(combine))
            .add("fingerprint", fp)
            .add("result", static_cast<double>(result), 9)
            .add("reference", ref.sum, 17)
            .add("abs_error", check.error, 3)
            .add("tolerance", check.tolerance, 3)
            .add("check", check.pass ? "PASS" : "FAIL")
            .add("ms_median", timing ? t.median_ms : NAN)
            .add("ms_min", timing ? t.min_ms : NAN)
            .add("ms_max", timing ? t.max_ms : NAN)
            .add("gbps", stage_gbps)
            .add("pct_peak", 100 * stage_gbps / peak, 4)
            .add("cub_ms_median", cr ? cr->t.median_ms : NAN)
            .add("cub_ms_min", cr ? cr->t.min_ms : NAN)
            .add("cub_ms_max", cr ? cr->t.max_ms : NAN)
            .add("cub_gbps", cub_gbps)
            .add("cub_pct_peak", 100 * cub_gbps / peak, 4)
            .add("x_cub", x_cub, 4)
            .add("cub_check", cr ? (cr->check.pass ? "PASS" : "FAIL") : "-");
        records.push_back(std::move(r));
      }
    }
  }

  if (o.format != Format::kTable) {
    print_records(o.format, records);
  } else {
    fmt::print("{}: float sum reduction, checked against the CPU oracle{}\n", stage.name,
               timing ? ", timed beside cub::DeviceReduce::Sum" : "");
    fmt::print("  device   {}\n", device_line(d));
    fmt::print("  peak     {:.0f} GB/s theoretical: 2 x {} MHz x {}-bit bus / 8, from device attributes\n",
               d.peak_gbps(), d.mem_clock_khz / 1000, d.bus_width_bits);
    fmt::print("  input    {}, seed {}, at a 256-byte aligned address + {} floats\n",
               o.input == InputMode::kFloat ? "float: uniform in [0,1)" : "int: random non-zero integers in [-4,4]",
               o.seed, o.offset);
    fmt::print("  launch   {}\n", launch_description(o, d));
    if (timing) {
      fmt::print("  timing   {}\n", timing_line(o, d));
      fmt::print("  GB/s     bytes read (4 n) / median time, 1 GB = 1e9 B; x CUB = CUB time / stage time "
                 "(above 1: faster than CUB)\n");
    }
    fmt::print("\n{}", table.str());
    for (const auto& note : notes) fmt::print("  {}\n", note);
  }
  return all_pass ? 0 : 1;
}

// ---- --self-test: every awkward size, block, input mode, launch, alignment and combine ------------------

int self_test(const ReduceStage& stage, ReduceFn reduce, const ReduceOptions& o, const DeviceInfo& d) {
  const bool full = o.self_test == SelfTest::kFull;
  const std::vector<std::uint64_t> sizes =
      full ? std::vector<std::uint64_t>{1, 2, 31, 32, 33, 255, 256, 257, 4097, 1000003, (1u << 24) + 1}
           : std::vector<std::uint64_t>{1, 2, 3, 4, 33, 4097, 4098, 4099, 4100};  // every n mod 4, small and large
  const std::vector<unsigned> blocks = full ? std::vector<unsigned>{64, 128, 256, 512, 1024}
                                            : std::vector<unsigned>{64, 1024};
  const std::vector<InputMode> modes = full ? std::vector<InputMode>{InputMode::kInt, InputMode::kFloat}
                                            : std::vector<InputMode>{InputMode::kInt};
  const std::vector<unsigned> offsets = {0, 1, 2, 3};  // every alignment of a float pointer to 16 bytes
  // Stream-regime grids: from the device, and two small ones that make each thread walk far.
  const std::vector<unsigned> stream_grids = full ? std::vector<unsigned>{0, 1, 7} : std::vector<unsigned>{0, 3};

  struct Launch {
    Regime regime;
    unsigned grid;
  };
  std::vector<Launch> launches;
  for (auto regime : stage.regimes) {
    if (regime == Regime::kTree) {
      launches.push_back({Regime::kTree, 0});
    } else {
      for (auto g : stream_grids) launches.push_back({Regime::kStream, g});
    }
  }

  const std::uint64_t max_n = sizes.back();
  std::uint64_t max_partials = 1;
  for (auto n : sizes) max_partials = std::max(max_partials, ceil_div<std::uint64_t>(n, kMinBlock));
  ReduceOptions sized = o;
  sized.sizes = {max_n};
  const auto [needed, breakdown] = ReduceBench::memory_needed(sized, d, max_n, max_partials, kSelfTestMaxOffset, false);
  require_device_memory(d, needed, breakdown, "--self-test");
  ReduceBench bench(reduce, o, d, max_n, max_partials, kSelfTestMaxOffset, false);
  auto host = host_floats(max_n, "--self-test");

  std::size_t runs = 0, failures = 0;
  fmt::print("{} self-test ({}): {} sizes x {} blocks x {} input modes x {} launches x {} offsets x {} combines\n",
             stage.name, full ? "full" : "quick", sizes.size(), blocks.size(), modes.size(), launches.size(),
             offsets.size(), stage.combines.size());
  for (auto mode : modes) {
    generate_input(o.seed, 0, mode, host.get(), max_n);
    std::vector<SumReference> refs;
    for (auto n : sizes) refs.push_back(reference_sum(host.get(), n));
    for (auto offset : offsets) {
      bench.upload(host.get(), max_n, offset);
      for (std::size_t si = 0; si < sizes.size(); ++si) {
        const std::uint64_t n = sizes[si];
        std::size_t local_runs = 0, local_failures = 0;
        for (auto block : blocks) {
          for (const auto& l : launches) {
            for (auto combine : stage.combines) {
              const Config c{n, block, combine, grid_limit(d, l.regime, l.grid, block)};
              const float result = bench.run_checked(bench.input(offset), c);
              const SumCheck check =
                  check_sum(result, refs[si], mode, summation_depth(n, first_grid(n, block, c.limit), block, combine));
              ++local_runs;
              if (!check.pass) {
                ++local_failures;
                fmt::print("  FAIL n = {}, block {}, {} regime{}, input {}, offset {}, combine {}: {}\n", n, block,
                           to_string(l.regime), l.grid ? fmt::format(" (grid {})", l.grid) : "", to_string(mode),
                           offset, to_string(combine), check.reason);
              }
            }
          }
        }
        runs += local_runs;
        failures += local_failures;
        fmt::print("  input {}, offset {}, n = {:>8}: {:>4} runs, {}\n", to_string(mode), offset, n, local_runs,
                   local_failures ? fmt::format("{} FAILED", local_failures) : std::string("all PASS"));
      }
    }
  }
  fmt::print("{} self-test: {} runs, {} failed: {}\n", stage.name, runs, failures, failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}

// ---- --determinism R: the same reduction R times, compared bit for bit ----------------------------------

int determinism(const ReduceStage& stage, ReduceFn reduce, const ReduceOptions& o, const DeviceInfo& d) {
  require_tree_grid(o);
  const std::uint64_t n = o.sizes.front();
  const unsigned block = o.blocks.front();
  const unsigned limit = grid_limit(d, o.regime, o.grid, block);
  const std::uint64_t max_partials = first_grid(n, block, limit);
  const auto [needed, breakdown] = ReduceBench::memory_needed(o, d, n, max_partials, o.offset, false);
  require_device_memory(d, needed, breakdown, fmt::format("-n {}", n));
  auto host = host_floats(n, fmt::format("-n {}", n));
  generate_input(o.seed, 0, o.input, host.get(), n);
  const SumReference ref = reference_sum(host.get(), n);
  ReduceBench bench(reduce, o, d, n, max_partials, o.offset, false);
  bench.upload(host.get(), n, o.offset);

  std::vector<Record> records;
  bool ok = true;
  for (auto combine : o.combines) {
    const Config c{n, block, combine, limit};
    std::set<std::uint32_t> distinct;
    bool all_pass = true;
    for (int r = 0; r < o.determinism; ++r) {
      const float result = bench.run_checked(bench.input(o.offset), c);
      std::uint32_t bits;
      std::memcpy(&bits, &result, sizeof bits);
      distinct.insert(bits);
      all_pass = all_pass &&
                 check_sum(result, ref, o.input, summation_depth(n, first_grid(n, block, limit), block, combine)).pass;
    }
    const bool by_design = combine != Combine::kAtomic;  // atomics add partial sums in arrival order
    const bool identical = distinct.size() == 1;
    ok = ok && all_pass && (identical || !by_design);
    Record rec;
    add_context_fields(rec, stage.name, d, o);
    rec.add("regime", to_string(o.regime))
        .add("n", n)
        .add("block", block)
        .add("grid", first_grid(n, block, limit))
        .add("combine", to_string(combine))
        .add("runs", o.determinism)
        .add("distinct_results", static_cast<std::uint64_t>(distinct.size()))
        .add("bitwise_identical", identical)
        .add("deterministic_by_design", by_design)
        .add("check", all_pass ? "PASS" : "FAIL");
    records.push_back(std::move(rec));
    if (o.format == Format::kTable) {
      fmt::print("{}: n = {}, block {}, {}: {} runs, {} distinct result{}: {}{}{}\n", stage.name, n, block,
                 to_string(combine), o.determinism, distinct.size(), distinct.size() == 1 ? "" : "s",
                 identical ? "bitwise identical" : "NOT bitwise identical",
                 by_design ? "" : " (atomic adds arrive in any order; not deterministic by design)",
                 all_pass ? "" : "; a result FAILED the check");
    }
  }
  if (o.format != Format::kTable) print_records(o.format, records);
  return ok ? 0 : 1;
}

}  // namespace

int run_reduce_stage(int argc, char** argv, const ReduceStage& stage, ReduceFn reduce) {
  ReduceOptions o;
  const ParseOutcome parsed = parse_reduce_options(stage, argc, argv, o);
  if (parsed.exit_status) {
    std::fputs((parsed.text + "\n").c_str(), *parsed.exit_status == 0 ? stdout : stderr);
    return *parsed.exit_status;
  }
  return run_program(stage.name, o, [&](const DeviceInfo& d) {
    if (o.self_test != SelfTest::kNone) return self_test(stage, reduce, o, d);
    if (o.determinism > 0) return determinism(stage, reduce, o, d);
    return bench(stage, reduce, o, d);
  });
}

}  // namespace ladder
