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
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <tuple>
#include <set>

#include <fmt/format.h>

#include "captured_launch.hpp"
#include "device_buffer.hpp"
#include "device_fill.hpp"
#include "harness.hpp"
#include "input.hpp"
#include "oracle.hpp"
#include "reduce_stage.hpp"
#include "references.hpp"
#include "report.hpp"
#include "timer.hpp"
#include "verdict.hpp"

namespace ladder {

namespace {

constexpr unsigned kMaxGrid = 2147483647u;  // gridDim.x limit
constexpr unsigned kMinBlock = 64;
constexpr unsigned kSelfTestMaxOffset = 3;
constexpr std::uint64_t kStudySeeds = 8;  // --error-study: inputs; random sizes below 2^kStudyMaxLog2
constexpr int kStudyMaxLog2 = 24;
constexpr int kStudyLargeLog2[] = {26, 28};  // and these, the published sizes' neighbourhood
// NaN floats before and after the input (256 bytes each, so the input keeps its alignment): a kernel that
// reads past either end of [in, in + n) adds a NaN, and NaN never passes a check.
constexpr std::size_t kGuard = 64;
// Launches of the exact input per configuration. A launcher or kernel that depends on what an earlier launch
// left behind (a counter not reset, a memset skipped after the first calls) goes wrong from the second or the
// third launch on; every warm-up and timed launch is checked too.
constexpr int kCheckedLaunches = 3;

// The most blocks a stage's first launch may use (what the partials buffers hold): ceil(n / block), at most
// the grid limit.
std::uint64_t max_grid(std::uint64_t n, unsigned block, unsigned limit) {
  return std::min<std::uint64_t>(ceil_div<std::uint64_t>(n, block), limit);
}

double gbps(std::uint64_t n, double ms) { return ms > 0 ? static_cast<double>(n) * sizeof(float) / (ms * 1e6) : NAN; }

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

// ---- the device side: input between NaN guards, output, scratch, the checked and the timed launches ----

class ReduceBench {
 public:
  ReduceBench(ReduceFn reduce, const DeviceInfo& d, std::uint64_t max_n, std::uint64_t max_partials,
              unsigned max_offset, Flush flush, bool poison_shared)
      : reduce_(reduce),
        poison_shared_(poison_shared),
        input_(kGuard + max_offset + max_n + kGuard),
        out_(1),
        partials0_(kGuard + max_partials + kGuard),
        partials1_(kGuard + max_partials + kGuard),
        ticket_(1),
        timer_(d, flush) {
    CUDA_CHECK(cudaMemset(ticket_.get(), 0, sizeof(unsigned)));
    CUDA_CHECK(cudaDeviceSynchronize());  // a memset on the default stream: done before any launch on ours
  }

  // Device memory this would need, itemised, so a too-large request is refused before any allocation.
  static std::pair<std::size_t, std::string> memory_needed(const ReduceOptions& o, const DeviceInfo& d,
                                                           std::uint64_t max_n, std::uint64_t max_partials,
                                                           unsigned max_offset, bool timing) {
    const std::size_t input = (max_n + max_offset + 2 * kGuard) * sizeof(float);
    const std::size_t scratch = 2 * (max_partials + 2 * kGuard) * sizeof(float);
    const std::size_t flush = GpuTimer::flush_bytes_for(d, timing ? o.flush : Flush::kNone);
    std::size_t cub = 0;
    std::size_t copy = 0;
    if (timing) {
      for (auto n : o.sizes) cub = std::max(cub, CubSum::temp_bytes(n));
      copy = SpeedOfLight::bytes(d.sm_count);
    }
    return {input + scratch + flush + cub + copy + kProbeElements * 12 + 64,
            fmt::format("input {}, partial sums {}, L2 flush buffer {}, CUB temporary storage {}, speed-of-light sums {}",
                        human_bytes(static_cast<double>(input)), human_bytes(static_cast<double>(scratch)),
                        human_bytes(static_cast<double>(flush)), human_bytes(static_cast<double>(cub)),
                        human_bytes(static_cast<double>(copy)))};
  }

  // Fills the whole buffer with NaN, then makes count floats of the input `spec` at input(), offset floats past its
  // alignment: on the GPU, bitwise what the host made of it in `host` (the oracle's copy, kept for fence()), so no
  // copy of the input crosses the bus.
  void upload(const float* host, const InputSpec& spec, std::uint64_t count, unsigned offset) {
    input_.poison(nullptr);
    make_input_on_device(spec.key, spec.exact_bits, input_.get() + kGuard + offset, count, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    host_ = host;
    uploaded_ = fenced_ = count;
    offset_ = offset;
  }

  // Whether the GPU's input is bitwise the host's (their fingerprints agree): what the self-test asks of upload().
  bool input_is_hosts() const {
    DeviceBuffer<unsigned long long> print(1);
    fingerprint_on_device(input(), uploaded_, print.get(), nullptr);
    unsigned long long on_device = 0;
    CUDA_CHECK(cudaMemcpy(&on_device, print.get(), sizeof on_device, cudaMemcpyDeviceToHost));
    return host_ != nullptr && on_device == fingerprint_on_host(host_, uploaded_);
  }

  // The precision probe of size n at `offset`: NaN everywhere, zeros in [0, n), the probe's values scattered.
  void upload_probe(const ProbeInput& p, std::uint64_t n, unsigned offset) {
    input_.poison(nullptr);
    CUDA_CHECK(cudaMemset(input_.get() + kGuard + offset, 0, n * sizeof(float)));
    scatter(input_.get() + kGuard + offset, p.positions, p.values, nullptr);
    host_ = nullptr;
    uploaded_ = fenced_ = n;
    offset_ = offset;
  }

  // Makes the kGuard floats after element n - 1 NaN, for a size n below the uploaded count (the uploaded data
  // continues there), and puts back the data the previous fence covered.
  void fence(std::uint64_t n) {
    if (n == fenced_) return;
    if (host_ == nullptr) throw std::logic_error("fence() after upload_probe(): upload the input first");
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

  struct Result {
    float value;
    FirstLaunch first;  // the shape of the first launch, as the stage reported it
  };

  // Poisons the result, both partials buffers and the shared memory of every SM, captures what the stage
  // enqueues for one reduction of input(), checks the shape of the kernel that reads the input against what the
  // stage reported, runs the captured work and returns its result and that shape.
  Result run_checked(const Config& c) {
    const cudaStream_t s = timer_.stream();
    poison(s);
    if (poison_shared_) poison_shared_memory(s);
    FirstLaunch reported{0, 0};
    const CapturedLaunch captured(s, [&] { reported = reduce_(input(), c.n, out_.get(), launch(c), s); });
    ++launches_;
    const FirstLaunch first = seen_first_launch(captured, c, reported);
    captured.launch(s);
    return {read_out(s), first};
  }

  // Times the stage on input(). Every launch, warm-ups included, starts from a poisoned result and partial sums
  // (outside its interval); each launch's result is kept, and all of them are returned in *results.
  TimingStats time_stage(const Config& c, int warmup, int reps, std::vector<float>* results) {
    const ReduceLaunch l = launch(c);
    const float* in = input();
    const Kept<float> kept(warmup, reps);
    const TimingStats t = timer_.time(
        [&](cudaStream_t s) {
          ++launches_;
          reduce_(in, c.n, out_.get(), l, s);
        },
        warmup, reps, {[&](cudaStream_t s) { poison_live(c, s); }, kept.copy_of(out_.get())});
    *results = kept.read(timer_.stream());
    return t;
  }

  // Launches of the stage so far (checked and timed): the count every run's checks must match.
  long long launches() const { return launches_; }

  GpuTimer& timer() { return timer_; }
  float* out() const { return out_.get(); }

  // Waits for `stream` and returns *out.
  float read_out(cudaStream_t stream) const {
    CUDA_CHECK(cudaStreamSynchronize(stream));
    float result = 0;
    CUDA_CHECK(cudaMemcpy(&result, out_.get(), sizeof(float), cudaMemcpyDeviceToHost));
    return result;
  }

 private:
  // The partials a stage sees start kGuard floats into their buffers, so that reading one before the first or
  // past the last finds NaN too.
  ReduceLaunch launch(const Config& c) const {
    return ReduceLaunch{c.block, c.limit, c.combine, {partials0_.get() + kGuard, partials1_.get() + kGuard},
                        ticket_.get()};
  }
  // Everything a launch writes or may read besides its input, whole: a value it never wrote is NaN.
  void poison(cudaStream_t s) const {
    out_.poison(s);
    partials0_.poison(s);
    partials1_.poison(s);
  }
  // Before each timed launch: the result and the partial sums this configuration can use, with their fences
  // (not the whole buffers, which a larger configuration sized: their memset would evict a --flush none input).
  void poison_live(const Config& c, cudaStream_t s) const {
    out_.poison(s);
    const std::size_t live = (max_grid(c.n, c.block, c.limit) + 2 * kGuard) * sizeof(float);
    for (const auto* p : {&partials0_, &partials1_}) CUDA_CHECK(cudaMemsetAsync(p->get(), 0xFF, live, s));
  }

  // The grid and block of the one kernel that reads the input, from the captured graph; the stage's report must
  // agree, and the grid must fit the partial sums it was given.
  FirstLaunch seen_first_launch(const CapturedLaunch& captured, const Config& c, const FirstLaunch& reported) const {
    dim3 grid, block;
    const int readers = captured.kernels_reading(input(), &grid, &block);
    const std::string where = fmt::format("n = {}, block {}, {} regime, {}", c.n, c.block, to_string(c.regime),
                                          to_string(c.combine));
    if (readers != 1) {
      throw StageFailure(fmt::format("{}: the stage launched {} kernels whose first argument is the input; the "
                                     "harness checks a reduction of one kernel over the input, then its combine",
                                     where, readers));
    }
    const FirstLaunch seen{grid.x, block.x};
    if (grid.y != 1 || grid.z != 1 || block.y != 1 || block.z != 1 || seen.grid > max_grid(c.n, c.block, c.limit) ||
        seen.block > c.block) {
      throw StageFailure(fmt::format("{}: the kernel that reads the input was launched with {}x{}x{} blocks of "
                                     "{}x{}x{} threads; at most {} blocks (what its partial sums buffers hold) of "
                                     "at most {} threads, in x only",
                                     where, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                     max_grid(c.n, c.block, c.limit), c.block));
    }
    if (reported.grid != seen.grid || reported.block != seen.block) {
      throw StageFailure(fmt::format("{}: the stage reported a first launch of {} blocks of {} threads, but the "
                                     "kernel that reads the input was launched with {} blocks of {} threads",
                                     where, reported.grid, reported.block, seen.grid, seen.block));
    }
    return seen;
  }

  ReduceFn reduce_;
  bool poison_shared_;
  DeviceBuffer<float> input_, out_, partials0_, partials1_;
  DeviceBuffer<unsigned> ticket_;
  GpuTimer timer_;
  const float* host_ = nullptr;  // what upload() copied, for fence() to put back
  std::uint64_t uploaded_ = 0, fenced_ = 0;
  unsigned offset_ = 0;
  long long launches_ = 0;
};

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

// ---- the checks every run makes -------------------------------------------------------------------------

// What one configuration's run found and measured.
struct Run {
  Config c;
  FirstLaunch first{0, 0};           // the first launch, as the harness saw it (and the stage reported it)
  SumReference exact_ref;
  std::vector<float> exact_results;  // the exact input, one per checked launch
  std::vector<SumCheck> exact;
  double probe_sum = NAN;
  float probe_result = NAN;
  SumCheck probe;
  SumReference ref;                  // the measured input's
  float result = NAN;
  std::vector<float> timed_results;  // every warm-up and timed launch's, in order
  SumCheck measured, timed;          // the measured input: its checked launch, every warm-up and timed launch
  TimingStats t;
  bool timing = false;
  long long launches = 0;            // launches of the stage this configuration made
  long long checked = 0;             // of them, launches whose result was judged
};

// The references of one size on the measured input: CUB and the speed of light (a read-only kernel and a
// device-to-device copy). Every launch of CUB and of the read-only kernel is checked.
struct References {
  int read_grid = 0;  // the read-only kernel's blocks
  TimingStats cub, read, copy, empty, memset;
  float cub_result = NAN;
  SumCheck cub_check, cub_timed, read_check;
  int cub_launches = 0, read_launches = 0;
};

// The name a check of the measured input goes by: "float", or "exact" when the measured input is the exact one.
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

// The one verdict of a run: every check it made, by name.
Verdict verdict_of(const Run& r, const References* refs, InputMode mode) {
  Verdict v;
  add_input_checks(v, r);
  record(v, measured_name(mode), r.measured);
  if (r.timing) record(v, "timed", r.timed);
  v.add("launches", r.checked == r.launches,
        fmt::format("{} of the stage's {} launches were checked", r.checked, r.launches));
  if (refs) {
    record(v, "cub", refs->cub_check);
    record(v, "cub", refs->cub_timed);
    record(v, "read", refs->read_check);
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
    ++r.checked;
    if (timing) {
      r.timing = true;
      r.t = bench.time_stage(r.c, o.warmup, o.reps, &r.timed_results);
      r.timed = check_launches(r.timed_results, r.result, deterministic(r), r.ref, o.input, shape_of(r.c, r.first),
                               r.c.n, o.warmup, o.reps);
      r.checked += static_cast<long long>(r.timed_results.size());
    }
    r.launches += bench.launches() - before;
    if (timing && !refs.count(r.c.n)) refs.emplace(r.c.n, time_references(bench, *cub, *sol, r.c.n, r.ref, o, d));
  }
}

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

Record make_record(const Run& r, const References* refs, const Verdict& v, const ReduceStage& stage,
                   const ReduceOptions& o, const DeviceInfo& d, const std::string& fingerprint, int read_grid) {
  const double peak = d.peak_gbps();
  const double stage_gbps = r.timing ? gbps(r.c.n, r.t.median_ms) : NAN;
  const double cub_gbps = refs ? gbps(r.c.n, refs->cub.median_ms) : NAN;
  const double read_gbps = refs ? gbps(r.c.n, refs->read.median_ms) : NAN;
  const double copy_gbps = refs ? 2 * gbps(r.c.n, refs->copy.median_ms) : NAN;  // every byte read and written
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
      .add("fingerprint", fingerprint)
      .add("exact_check", v.field("exact"))
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
      .add("bound", o.input == InputMode::kFloat && r.measured.bounded ? r.measured.tolerance : NAN, 3)
      .add("error_bound_ratio",
           o.input == InputMode::kFloat && r.measured.bounded ? r.measured.error / r.measured.tolerance : NAN, 3)
      .add("float_check", o.input == InputMode::kExact ? "exact" : v.field("float"))
      .add("timed_check", v.field("timed"))
      .add("launches", static_cast<std::uint64_t>(r.launches))
      .add("launches_checked", static_cast<std::uint64_t>(r.checked))
      .add("timing_check", !r.timing ? "-" : held_verdict(unheld(r, refs)).word())
      .add("check", v.word())
      .add("ms_median", r.timing ? r.t.median_ms : NAN)
      .add("ms_min", r.timing ? r.t.min_ms : NAN)
      .add("ms_max", r.timing ? r.t.max_ms : NAN)
      .add("gbps", stage_gbps)
      .add("pct_peak", 100 * stage_gbps / peak, 4);
  add_clock_fields(rec, r.t, r.timing);
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
             timing ? ", every warm-up and timed launch (each started from a poisoned result; bit for bit the "
                      "checked launch where the combine is deterministic, else within the bound) and every launch "
                      "of CUB and of the read-only kernel"
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
    const Verdict v = verdict_of(r, ref, o.input);
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

  std::size_t runs = 0, failures = 0, unbounded = 0;
  Verdict all;  // every run's check: the self-test's one verdict
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
        all.add("input", bench.input_is_hosts(), fmt::format("offset {}: the {} input the GPU made differs from the "
                                                              "host's", offset, to_string(input)));
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
        std::size_t local_runs = 0, local_failures = 0;
        for (auto block : plan.blocks) {
          for (const auto& l : plan.launches) {
            for (auto combine : stage.combines) {
              const Config c = make_config(n, l.regime, block, combine, l.grid, blocks_per_sm, d);
              const auto got = bench.run_checked(c);
              const SumCheck check = check_sum(got.value, ref, mode, shape_of(c, got.first), n);
              Verdict v;
              record(v, to_string(input), check);
              all.add_all(v);
              ++local_runs;
              unbounded += v.skipped().size();
              if (!v.failures().empty()) {
                ++local_failures;
                fmt::print("  FAIL n = {}, block {}, {} regime{}, input {}, offset {}, combine {}: {}\n", n, block,
                           to_string(l.regime), l.grid ? fmt::format(" (grid {})", l.grid) : "", to_string(input),
                           offset, to_string(combine), check.reason);
              }
            }
          }
        }
        runs += local_runs;
        failures += local_failures;
        fmt::print("  input {}, offset {}, n = {:>8}: {:>4} runs, {}\n", to_string(input), offset, n, local_runs,
                   local_failures ? fmt::format("{} FAILED", local_failures) : std::string("all PASS"));
      }
    }
  }
  fmt::print("{} self-test: {} runs ({} float runs not judged, their bound too loose: their exact twins decide), {} "
             "failed: {}\n",
             stage.name, runs, unbounded, failures, all.word());
  return all.pass() ? 0 : 1;
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
    all.add_all(v);
    const double ratio = check.bounded && check.tolerance > 0 ? check.error / check.tolerance : NAN;
    const double z = std::isfinite(ratio) ? (got.value - ref.sum) / (check.tolerance / kSumLambda) : NAN;
    if (std::isfinite(ratio)) {
      ratios.push_back(ratio);
      z_sum += z;
    }
    Record rec;
    rec.add("stage", stage.name).add("seed", sc.seed).add("n", sc.n).add("offset", sc.offset)
        .add("block", sc.block).add("regime", to_string(sc.regime)).add("grid_option", sc.grid)
        .add("grid", got.first.grid).add("threads", got.first.block).add("combine", to_string(sc.combine))
        .add("abs_error", check.error, 3).add("bound", check.bounded ? check.tolerance : NAN, 3)
        .add("error_bound_ratio", ratio, 3).add("error_sigmas", z, 3).add("check", v.field("float"));
    records.push_back(std::move(rec));
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

}  // namespace

int run_reduce_stage(int argc, char** argv, const ReduceStage& stage, ReduceFn reduce, BlocksPerSmFn blocks_per_sm) {
  ReduceOptions o;
  const ParseOutcome parsed = parse_reduce_options(stage, argc, argv, o);
  if (parsed.exit_status) return print_outcome(parsed);
  return run_program(stage.name, o, [&](const DeviceInfo& d) {
    if (o.self_test != SelfTest::kNone) return self_test(stage, reduce, blocks_per_sm, o, d);
    if (o.determinism > 0) return determinism(stage, reduce, blocks_per_sm, o, d);
    if (o.error_study > 0) return error_study(stage, reduce, blocks_per_sm, o, d);
    return bench(stage, reduce, blocks_per_sm, o, d);
  });
}

}  // namespace ladder
