// run_reduce_stage(): everything a reduce stage does besides its kernel, its launcher and its occupancy query.
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
// NaN floats before and after the input (256 bytes each, so the input keeps its alignment): a kernel that
// reads past either end of [in, in + n) adds a NaN, and NaN never passes a check.
constexpr std::size_t kGuard = 64;

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

// One launch configuration of a stage, with the grid limit it resolves to.
struct Config {
  std::uint64_t n;
  Regime regime;
  unsigned block;
  Combine combine;
  unsigned limit;     // grid limit
  int blocks_per_sm;  // stream regime without --grid: what the stage's blocks_per_sm() said; else 0
};

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

// The device side of one stage: input (between NaN guards), output, scratch, and the checked run.
class ReduceBench {
 public:
  ReduceBench(ReduceFn reduce, const ReduceOptions& o, const DeviceInfo& d, std::uint64_t max_n,
              std::uint64_t max_partials, unsigned max_offset, bool timing)
      : reduce_(reduce),
        o_(o),
        input_(kGuard + max_offset + max_n + kGuard),
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
    const std::size_t input = (max_n + max_offset + 2 * kGuard) * sizeof(float);
    const std::size_t scratch = 2 * max_partials * sizeof(float);
    const std::size_t flush = GpuTimer::flush_bytes_for(d, timing ? o.flush : Flush::kNone);
    std::size_t cub = 0;
    std::size_t copy = 0;
    if (timing) {
      for (auto n : o.sizes) cub = std::max(cub, CubSum::temp_bytes(n));
      copy = SpeedOfLight::bytes(d.sm_count);
    }
    return {input + scratch + flush + cub + copy + 64,
            fmt::format("input {}, partial sums {}, L2 flush buffer {}, CUB temporary storage {}, speed-of-light sums {}",
                        human_bytes(static_cast<double>(input)), human_bytes(static_cast<double>(scratch)),
                        human_bytes(static_cast<double>(flush)), human_bytes(static_cast<double>(cub)),
                        human_bytes(static_cast<double>(copy)))};
  }

  // Fills the whole buffer with NaN, then copies count floats to input(), offset floats past its alignment.
  void upload(const float* host, std::uint64_t count, unsigned offset) {
    input_.poison(nullptr);
    CUDA_CHECK(cudaMemcpy(input_.get() + kGuard + offset, host, count * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaDeviceSynchronize());  // a copy from pageable memory may still be in flight when it returns
    host_ = host;
    uploaded_ = fenced_ = count;
    offset_ = offset;
  }

  // Makes the kGuard floats after element n - 1 NaN, for a size n below the uploaded count (the uploaded data
  // continues there), and puts back the data the previous fence covered.
  void fence(std::uint64_t n) {
    if (n == fenced_) return;
    float* in = input_.get() + kGuard + offset_;
    if (fenced_ < uploaded_) {
      const std::uint64_t count = std::min<std::uint64_t>(kGuard, uploaded_ - fenced_);
      CUDA_CHECK(cudaMemcpy(in + fenced_, host_ + fenced_, count * sizeof(float), cudaMemcpyHostToDevice));
    }
    if (n < uploaded_) {
      CUDA_CHECK(cudaMemset(in + n, 0xFF, std::min<std::uint64_t>(kGuard, uploaded_ - n) * sizeof(float)));
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    fenced_ = n;
  }
  const float* input() const { return input_.get() + kGuard + offset_; }  // where upload() put element 0

  ReduceLaunch launch(const Config& c) const {
    return ReduceLaunch{c.block, c.limit, c.combine, {partials0_.get(), partials1_.get()}, ticket_.get()};
  }

  // Poisons the output and the scratch, runs the stage once on input(), returns the result.
  float run_checked(const Config& c) {
    const cudaStream_t s = timer_.stream();
    out_.poison(s);
    const std::size_t scratch = first_grid(c.n, c.block, c.limit) * sizeof(float);
    CUDA_CHECK(cudaMemsetAsync(partials0_.get(), 0xFF, scratch, s));
    CUDA_CHECK(cudaMemsetAsync(partials1_.get(), 0xFF, scratch, s));
    reduce_(input(), c.n, out_.get(), launch(c), s);
    CUDA_CHECK(cudaStreamSynchronize(s));
    float result = 0;
    CUDA_CHECK(cudaMemcpy(&result, out_.get(), sizeof(float), cudaMemcpyDeviceToHost));
    return result;
  }

  TimingStats time_stage(const Config& c) {
    const ReduceLaunch l = launch(c);
    const float* in = input();
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
  const float* host_ = nullptr;  // what upload() copied, for fence() to put back
  std::uint64_t uploaded_ = 0, fenced_ = 0;
  unsigned offset_ = 0;
};

std::uint64_t max_partials_for(const std::vector<Config>& configs) {
  std::uint64_t most = 1;
  for (const auto& c : configs) most = std::max(most, first_grid(c.n, c.block, c.limit));
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

std::uint64_t depth_of(const Config& c) {
  return summation_depth(c.n, first_grid(c.n, c.block, c.limit), c.block, c.combine);
}

std::string input_words(InputMode mode, unsigned int_range) {
  return mode == InputMode::kFloat ? "float: uniform in [0,1)"
                                   : fmt::format("int: random non-zero integers in [-{}, {}]", int_range, int_range);
}

// What the float check says, in a table cell: error / bound, or why there is no bound.
std::string float_cell(const SumCheck& c, InputMode mode) {
  if (mode == InputMode::kInt) return "exact";
  if (!std::isfinite(c.error)) return "NaN";
  if (!c.bounded) return "no bound";
  return fmt::format("{:.2g}", c.tolerance > 0 ? c.error / c.tolerance : 0.0);
}

// ---- the benchmark: the exact check, then the float input checked and timed beside CUB, then the report --

int bench(const ReduceStage& stage, ReduceFn reduce, BlocksPerSmFn blocks_per_sm, const ReduceOptions& o,
          const DeviceInfo& d) {
  require_tree_grid(o);
  const bool timing = !o.check_only;
  const std::uint64_t max_n = *std::max_element(o.sizes.begin(), o.sizes.end());
  const unsigned int_range = exact_int_range(max_n);
  const std::vector<Config> configs = all_configs(o, blocks_per_sm, d);
  const std::uint64_t max_partials = max_partials_for(configs);
  const auto [needed, breakdown] = ReduceBench::memory_needed(o, d, max_n, max_partials, o.offset, timing);
  require_device_memory(d, needed, breakdown, fmt::format("-n {}", max_n));

  auto host = host_floats(max_n, fmt::format("-n {}", max_n));
  ReduceBench bench(reduce, o, d, max_n, max_partials, o.offset, timing);

  // 1. The exact check: every configuration on the int input, where every partial sum is exact in float.
  std::vector<SumCheck> exact(configs.size());
  std::vector<float> exact_results(configs.size());
  std::map<std::uint64_t, SumReference> exact_refs;
  if (o.input == InputMode::kFloat) {
    progress(fmt::format("{}: exact check: {} int floats (range +-{}, seed {})", stage.name, max_n, int_range, o.seed));
    generate_input(o.seed, 0, InputMode::kInt, host.get(), max_n, int_range);
    bench.upload(host.get(), max_n, o.offset);
    for (auto n : o.sizes) exact_refs.emplace(n, reference_sum(host.get(), n));
    for (std::size_t i = 0; i < configs.size(); ++i) {
      bench.fence(configs[i].n);
      exact_results[i] = bench.run_checked(configs[i]);
      exact[i] = check_sum(exact_results[i], exact_refs.at(configs[i].n), InputMode::kInt, depth_of(configs[i]));
    }
  }

  // 2. The input that is measured: float (its error against the bound) or int (then it is the exact check).
  progress(fmt::format("{}: generating {} input floats (seed {})", stage.name, max_n, o.seed));
  generate_input(o.seed, 0, o.input, host.get(), max_n, int_range);
  bench.upload(host.get(), max_n, o.offset);
  std::unique_ptr<CubSum> cub;
  std::unique_ptr<SpeedOfLight> sol;
  if (timing) {
    cub = std::make_unique<CubSum>(std::vector<std::size_t>(o.sizes.begin(), o.sizes.end()));
    sol = std::make_unique<SpeedOfLight>(d.sm_count, max_n);
  }

  // The references of one size: CUB (checked), and the speed of light (a read-only kernel and a copy).
  struct CubResult {
    TimingStats t;
    SumCheck check;
    SumCheck read_check;
    float result = NAN;
    TimingStats read, copy;
  };
  std::map<std::uint64_t, CubResult> cub_results;
  std::map<std::uint64_t, SumReference> refs;
  std::map<std::uint64_t, std::string> fingerprints;
  std::vector<Record> records;
  TextTable table({"n", "regime", "block", "grid", "combine", "exact", "error/bound", "check", "ms", "min", "max",
                   "GB/s", "% peak", "% read", "CUB ms", "CUB GB/s", "x CUB"});
  std::vector<std::string> notes;
  bool all_pass = true;

  for (std::size_t i = 0; i < configs.size(); ++i) {
    const Config& c = configs[i];
    const std::uint64_t n = c.n;
    if (!refs.count(n)) {
      refs.emplace(n, reference_sum(host.get(), n));
      fingerprints.emplace(n, fingerprint_hex(fingerprint(host.get(), n)));
    }
    const SumReference& ref = refs.at(n);
    const std::uint64_t grid = first_grid(n, c.block, c.limit);
    const std::uint64_t depth = depth_of(c);
    bench.fence(n);
    progress(fmt::format("{}: n = {}, {} regime, block {}, {}: checking{}", stage.name, n, to_string(c.regime),
                         c.block, to_string(c.combine), timing ? " and timing" : ""));
    const float result = bench.run_checked(c);
    const SumCheck check = check_sum(result, ref, o.input, depth);
    if (o.input == InputMode::kInt) {
      exact[i] = check;
      exact_results[i] = result;
      exact_refs.emplace(n, ref);
    }
    const bool pass = exact[i].pass && check.pass;
    all_pass = all_pass && pass;

    TimingStats t;
    CubResult* cr = nullptr;
    if (timing) {
      t = bench.time_stage(c);
      auto it = cub_results.find(n);
      if (it == cub_results.end()) {
        CubResult r;
        const cudaStream_t s = bench.timer().stream();
        CUDA_CHECK(cudaMemsetAsync(bench.out(), 0xFF, sizeof(float), s));
        cub->run(bench.input(), n, bench.out(), s);
        CUDA_CHECK(cudaStreamSynchronize(s));
        float cub_result = 0;
        CUDA_CHECK(cudaMemcpy(&cub_result, bench.out(), sizeof(float), cudaMemcpyDeviceToHost));
        r.check = check_sum(cub_result, ref, o.input, cub_depth(n, d));
        r.result = cub_result;
        r.t = bench.timer().time([&](cudaStream_t st) { cub->run(bench.input(), n, bench.out(), st); }, o.warmup, o.reps);
        sol->read(bench.input(), n, s);
        r.read_check = check_sum(static_cast<float>(sol->sum_of_last_read(s)), ref, o.input,
                                 (n + sol->threads() - 1) / sol->threads() + 64);
        if (!r.read_check.pass) {
          notes.push_back(fmt::format("FAIL speed-of-light read at n = {}: {}", n, r.read_check.reason));
        }
        all_pass = all_pass && r.read_check.pass;
        r.read = bench.timer().time([&](cudaStream_t st) { sol->read(bench.input(), n, st); }, o.warmup, o.reps);
        if (sol->has_copy()) {
          r.copy = bench.timer().time([&](cudaStream_t st) { sol->copy(bench.input(), n, st); }, o.warmup, o.reps);
        } else {
          r.copy.median_ms = r.copy.min_ms = r.copy.max_ms = NAN;
        }
        notes.push_back(fmt::format("speed of light at n = {}: a kernel that only reads the input {:.0f} GB/s ({:.1f}% of "
                                    "peak); cudaMemcpy device to device {:.0f} GB/s, counting bytes read and written",
                                    n, gbps(n, r.read.median_ms), 100 * gbps(n, r.read.median_ms) / d.peak_gbps(),
                                    2 * gbps(n, r.copy.median_ms)));
        if (!r.check.pass) notes.push_back(fmt::format("CUB FAILED at n = {}: {}", n, r.check.reason));
        all_pass = all_pass && r.check.pass;
        it = cub_results.emplace(n, r).first;
      }
      cr = &it->second;
    }
    const double stage_gbps = timing ? gbps(n, t.median_ms) : NAN;
    const double cub_gbps = cr ? gbps(n, cr->t.median_ms) : NAN;
    const double x_cub = cr ? cr->t.median_ms / t.median_ms : NAN;
    const double read_gbps = cr ? gbps(n, cr->read.median_ms) : NAN;
    const double copy_gbps = cr ? 2 * gbps(n, cr->copy.median_ms) : NAN;  // every byte read and written
    const double peak = d.peak_gbps();

    auto ms = [&](double v) { return timing ? fmt::format("{:.4f}", v) : std::string("-"); };
    table.add_row({std::to_string(n), to_string(c.regime), std::to_string(c.block), std::to_string(grid),
                   to_string(c.combine), exact[i].pass ? "PASS" : "FAIL", float_cell(check, o.input),
                   pass ? "PASS" : "FAIL", ms(t.median_ms), ms(t.min_ms), ms(t.max_ms),
                   timing ? fmt::format("{:.1f}", stage_gbps) : "-",
                   timing ? fmt::format("{:.1f}", 100 * stage_gbps / peak) : "-",
                   cr ? fmt::format("{:.1f}", 100 * stage_gbps / read_gbps) : "-", cr ? ms(cr->t.median_ms) : "-",
                   cr ? fmt::format("{:.1f}", cub_gbps) : "-", cr ? fmt::format("{:.2f}", x_cub) : "-"});
    const std::string where = fmt::format("n = {}, {} regime, block {}, {}", n, to_string(c.regime), c.block,
                                          to_string(c.combine));
    if (!exact[i].pass) notes.push_back(fmt::format("FAIL {}: exact check: {}", where, exact[i].reason));
    if (!check.pass && o.input == InputMode::kFloat) {
      notes.push_back(fmt::format("FAIL {}: float input: {}", where, check.reason));
    }
    if (check.pass && o.input == InputMode::kFloat && !check.bounded) {
      notes.push_back(fmt::format("{}: the float bound would exceed {:g} of sum|x| at summation depth {}, so the float "
                                  "result is not judged; the exact check decides",
                                  where, kMaxRelativeBound, depth));
    }
    if (configs.size() == 1 && pass) {
      notes.push_back(fmt::format("exact check: PASS, the same launch on the int input gave {}, the exact sum",
                                  exact_results[i]));
      if (o.input == InputMode::kFloat && check.bounded) {
        notes.push_back(fmt::format("float input: result {:.9g}, oracle {:.17g}, |error| {:.3g} = {:.2g} of the bound "
                                    "{:.3g} (10 sqrt(d) u sum|x|, summation depth d = {})",
                                    result, ref.sum, check.error, check.error / check.tolerance, check.tolerance,
                                    depth));
      }
    }

    Record r;
    add_context_fields(r, stage.name, d, o);
    r.add("regime", to_string(c.regime))
        .add("offset", o.offset)
        .add("n", n)
        .add("bytes", n * sizeof(float))
        .add("block", c.block)
        .add("grid", grid)
        .add("blocks_per_sm", c.blocks_per_sm)
        .add("combine", to_string(c.combine))
        .add("fingerprint", fingerprints.at(n))
        .add("exact_check", exact[i].pass ? "PASS" : "FAIL")
        .add("exact_result", static_cast<double>(exact_results[i]), 9)
        .add("exact_sum", exact_refs.count(n) ? exact_refs.at(n).sum : NAN, 17)
        .add("int_range", int_range)
        .add("result", static_cast<double>(result), 9)
        .add("reference", ref.sum, 17)
        .add("abs_error", check.error, 3)
        .add("summation_depth", depth)
        .add("bound", o.input == InputMode::kFloat && check.bounded ? check.tolerance : NAN, 3)
        .add("float_check", o.input == InputMode::kInt ? "exact" : !check.bounded ? "unbounded"
                                                                 : check.pass  ? "PASS"
                                                                               : "FAIL")
        .add("check", pass ? "PASS" : "FAIL")
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
        .add("cub_check", cr ? (cr->check.pass ? "PASS" : "FAIL") : "-")
        .add("cub_result", cr ? static_cast<double>(cr->result) : NAN, 9)
        .add("cub_abs_error", cr ? std::fabs(static_cast<double>(cr->result) - ref.sum) : NAN, 3)
        .add("read_check", cr ? (cr->read_check.pass ? "PASS" : "FAIL") : "-")
        .add("read_ms_median", cr ? cr->read.median_ms : NAN)
        .add("read_gbps", read_gbps)
        .add("read_pct_peak", 100 * read_gbps / peak, 4)
        .add("pct_read", 100 * stage_gbps / read_gbps, 4)
        .add("read_grid", sol ? sol->grid() : 0)
        .add("copy_ms_median", cr ? cr->copy.median_ms : NAN)
        .add("copy_gbps", copy_gbps)
        .add("copy_pct_peak", 100 * copy_gbps / peak, 4);
    records.push_back(std::move(r));
  }

  if (o.format != Format::kTable) {
    print_records(o.format, records);
  } else {
    fmt::print("{}: float sum reduction, checked against the CPU oracle{}\n", stage.name,
               timing ? ", timed beside cub::DeviceReduce::Sum" : "");
    fmt::print("  device   {}\n", device_line(d));
    fmt::print("  peak     {:.0f} GB/s theoretical: 2 x {} MHz x {}-bit bus / 8, from device attributes\n",
               d.peak_gbps(), d.mem_clock_khz / 1000, d.bus_width_bits);
    fmt::print("  input    {}, seed {}, at a 256-byte aligned address + {} floats, NaN before and after\n",
               input_words(o.input, int_range), o.seed, o.offset);
    std::set<std::string> launches;
    for (const auto& c : configs) {
      const std::string line = fmt::format("{} regime, block {}: {}", to_string(c.regime), c.block, launch_words(c, o.grid, d));
      if (launches.insert(line).second) fmt::print("  launch   {}\n", line);
    }
    fmt::print("  check    PASS = the exact check passed (the same launch on random integers in [-{}, {}], whose sum "
               "is exact in float, equals the exact sum){}\n",
               int_range, int_range,
               o.input == InputMode::kFloat ? " and the float result is within its bound (error/bound <= 1)" : "");
    if (timing) {
      fmt::print("  timing   {}\n", timing_line(o, d));
      fmt::print("  GB/s     bytes read (4 n) / median time, 1 GB = 1e9 B; x CUB = CUB time / stage time "
                 "(above 1: faster than CUB)\n");
      fmt::print("  % read   the stage's GB/s over a kernel that only reads the same bytes ({} blocks of 512 threads, "
                 "four 16-byte loads in flight each), timed alike: the speed of light a sum can reach here\n",
                 sol->grid());
    }
    fmt::print("\n{}", table.str());
    for (const auto& note : notes) fmt::print("  {}\n", note);
  }
  return all_pass ? 0 : 1;
}

// ---- --self-test: every awkward size, block, input mode, launch, alignment and combine ------------------

int self_test(const ReduceStage& stage, ReduceFn reduce, BlocksPerSmFn blocks_per_sm, const ReduceOptions& o,
              const DeviceInfo& d) {
  const bool full = o.self_test == SelfTest::kFull;
  const std::vector<std::uint64_t> sizes =
      full ? std::vector<std::uint64_t>{1, 2, 31, 32, 33, 255, 256, 257, 4097, 1000003, (1u << 24) + 1}
           : std::vector<std::uint64_t>{1, 2, 3, 4, 33, 4097, 4098, 4099, 4100};  // every n mod 4, small and large
  const std::vector<unsigned> blocks = full ? std::vector<unsigned>{64, 128, 256, 512, 1024}
                                            : std::vector<unsigned>{64, 1024};
  const std::vector<InputMode> modes = {InputMode::kInt, InputMode::kFloat};
  const std::vector<unsigned> offsets = {0, 1, 2, 3};  // every alignment of a float pointer to 16 bytes
  // Stream-regime grids: from the occupancy API, and two small ones that make each thread walk far.
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
  const unsigned int_range = exact_int_range(max_n);
  std::uint64_t max_partials = 1;
  for (auto n : sizes) max_partials = std::max(max_partials, ceil_div<std::uint64_t>(n, kMinBlock));
  ReduceOptions sized = o;
  sized.sizes = {max_n};
  const auto [needed, breakdown] = ReduceBench::memory_needed(sized, d, max_n, max_partials, kSelfTestMaxOffset, false);
  require_device_memory(d, needed, breakdown, "--self-test");
  ReduceBench bench(reduce, o, d, max_n, max_partials, kSelfTestMaxOffset, false);
  auto host = host_floats(max_n, "--self-test");

  std::size_t runs = 0, failures = 0, unbounded = 0;
  fmt::print("{} self-test ({}): {} sizes x {} blocks x {} input modes x {} launches x {} offsets x {} combines\n",
             stage.name, full ? "full" : "quick", sizes.size(), blocks.size(), modes.size(), launches.size(),
             offsets.size(), stage.combines.size());
  for (auto mode : modes) {
    generate_input(o.seed, 0, mode, host.get(), max_n, int_range);
    std::vector<SumReference> refs;
    for (auto n : sizes) refs.push_back(reference_sum(host.get(), n));
    for (auto offset : offsets) {
      bench.upload(host.get(), max_n, offset);
      for (std::size_t si = 0; si < sizes.size(); ++si) {
        const std::uint64_t n = sizes[si];
        bench.fence(n);
        std::size_t local_runs = 0, local_failures = 0;
        for (auto block : blocks) {
          for (const auto& l : launches) {
            for (auto combine : stage.combines) {
              const Config c = make_config(n, l.regime, block, combine, l.grid, blocks_per_sm, d);
              const float result = bench.run_checked(c);
              const SumCheck check = check_sum(result, refs[si], mode, depth_of(c));
              ++local_runs;
              unbounded += check.bounded ? 0 : 1;
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
  fmt::print("{} self-test: {} runs ({} float runs without a bound, judged by their int twins), {} failed: {}\n",
             stage.name, runs, unbounded, failures, failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
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

int determinism(const ReduceStage& stage, ReduceFn reduce, BlocksPerSmFn blocks_per_sm, const ReduceOptions& o,
                const DeviceInfo& d) {
  require_tree_grid(o);
  const std::uint64_t n = o.sizes.front();
  ReduceOptions one = o;
  one.sizes = {n};
  one.blocks = {o.blocks.front()};
  const std::vector<Config> configs = all_configs(one, blocks_per_sm, d);
  const std::uint64_t max_partials = max_partials_for(configs);
  const auto [needed, breakdown] = ReduceBench::memory_needed(o, d, n, max_partials, o.offset, false);
  require_device_memory(d, needed, breakdown, fmt::format("-n {}", n));
  auto host = host_floats(n, fmt::format("-n {}", n));
  ReduceBench bench(reduce, o, d, n, max_partials, o.offset, false);
  // The exact check first, as in the default run: a float result without a bound proves nothing.
  std::vector<bool> exact_pass;
  generate_input(o.seed, 0, InputMode::kInt, host.get(), n, exact_int_range(n));
  const SumReference exact_ref = reference_sum(host.get(), n);
  bench.upload(host.get(), n, o.offset);
  for (const auto& c : configs) {
    exact_pass.push_back(
        check_sum(bench.run_checked(c), exact_ref, InputMode::kInt, depth_of(c)).pass);
  }
  generate_input(o.seed, 0, o.input, host.get(), n, exact_int_range(n));
  const SumReference ref = reference_sum(host.get(), n);
  bench.upload(host.get(), n, o.offset);

  std::vector<Record> records;
  bool ok = true;
  for (std::size_t ci = 0; ci < configs.size(); ++ci) {
    const Config& c = configs[ci];
    std::set<std::uint32_t> distinct;
    float lo = INFINITY, hi = -INFINITY;
    bool all_pass = exact_pass[ci];
    for (int r = 0; r < o.determinism; ++r) {
      const float result = bench.run_checked(c);
      std::uint32_t bits;
      std::memcpy(&bits, &result, sizeof bits);
      distinct.insert(bits);
      lo = std::min(lo, result);
      hi = std::max(hi, result);
      all_pass = all_pass && check_sum(result, ref, o.input, depth_of(c)).pass;
    }
    const bool by_design = c.combine != Combine::kAtomic;  // atomics add partial sums in arrival order
    const bool identical = distinct.size() == 1;
    ok = ok && all_pass && (identical || !by_design);
    Record rec;
    add_context_fields(rec, stage.name, d, o);
    rec.add("regime", to_string(c.regime))
        .add("n", n)
        .add("block", c.block)
        .add("grid", first_grid(n, c.block, c.limit))
        .add("combine", to_string(c.combine))
        .add("runs", o.determinism)
        .add("distinct_results", static_cast<std::uint64_t>(distinct.size()))
        .add("min_result", static_cast<double>(lo), 9)
        .add("max_result", static_cast<double>(hi), 9)
        .add("reference", ref.sum, 17)
        .add("max_abs_error", std::max(std::fabs(lo - ref.sum), std::fabs(hi - ref.sum)), 3)
        .add("spread_ulps", ulps_between(lo, hi))
        .add("bitwise_identical", identical)
        .add("deterministic_by_design", by_design)
        .add("check", all_pass ? "PASS" : "FAIL");
    records.push_back(std::move(rec));
    if (o.format == Format::kTable) {
      fmt::print("{}: n = {}, {} regime, block {}, {}: {} runs, {} distinct result{}: {}{}{}\n", stage.name, n,
                 to_string(c.regime), c.block, to_string(c.combine), o.determinism, distinct.size(),
                 distinct.size() == 1 ? "" : "s", identical ? "bitwise identical" : "NOT bitwise identical",
                 by_design ? "" : " (atomic adds arrive in any order; not deterministic by design)",
                 all_pass ? "" : "; a result FAILED the check");
    }
  }
  if (o.format != Format::kTable) print_records(o.format, records);
  return ok ? 0 : 1;
}

}  // namespace

int run_reduce_stage(int argc, char** argv, const ReduceStage& stage, ReduceFn reduce, BlocksPerSmFn blocks_per_sm) {
  ReduceOptions o;
  const ParseOutcome parsed = parse_reduce_options(stage, argc, argv, o);
  if (parsed.exit_status) {
    std::fputs((parsed.text + "\n").c_str(), *parsed.exit_status == 0 ? stdout : stderr);
    return *parsed.exit_status;
  }
  return run_program(stage.name, o, [&](const DeviceInfo& d) {
    if (o.self_test != SelfTest::kNone) return self_test(stage, reduce, blocks_per_sm, o, d);
    if (o.determinism > 0) return determinism(stage, reduce, blocks_per_sm, o, d);
    return bench(stage, reduce, blocks_per_sm, o, d);
  });
}

}  // namespace ladder
