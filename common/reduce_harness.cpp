// run_reduce_stage(): everything a reduce stage does besides its kernel, launcher and occupancy query. For every
// configuration: 1. the exact input, kCheckedLaunches launches, each equal to the exact sum; 2. the precision probe;
// 3. the measured input: one checked launch, then every warm-up and timed repetition kept and checked; CUB and the
// read-only kernel beside it, checked alike. A configuration's Verdict holds every check; --self-test makes the same
// checked launches.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <tuple>
#include <type_traits>

#include <fmt/format.h>

#include "harness.hpp"
#include "input.hpp"
#include "oracle.hpp"
#include "reduce_stage.hpp"
#include "references.hpp"

namespace ladder {
constexpr unsigned kMaxGrid = 2147483647u;  // gridDim.x limit
constexpr unsigned kMinBlock = 64;
constexpr unsigned kSelfTestMaxOffset = 3;
// Launches of the exact input per configuration. A launcher or kernel that depends on what an earlier launch left
// behind (a counter not reset, a memset skipped after the first calls) goes wrong from the second or the third launch
// on; every warm-up and timed launch is checked too.
constexpr int kCheckedLaunches = 3;

namespace {
// The most blocks a stage's first launch may use (what the partials buffers hold): ceil(n / block), at most the limit.
std::uint64_t max_grid(std::uint64_t n, unsigned block, unsigned limit) {
  return std::min<std::uint64_t>(ceil_div<std::uint64_t>(n, block), limit);
}

struct Config {  // one launch configuration of a stage
  std::uint64_t n;
  Regime regime;
  unsigned block;
  Combine combine;
  unsigned limit;     // grid limit: the tree regime has none, --grid wins, else SMs x the stage's occupancy answer
  int blocks_per_sm;  // stream regime without --grid: what the stage's blocks_per_sm() said; else 0
};

std::string where(const Config& c) {
  return fmt::format("n = {}, {} regime, block {}, {}", c.n, to_string(c.regime), c.block, to_string(c.combine));
}
SumShape shape_of(const Config& c, const FirstLaunch& f) { return stage_shape(c.n, f.grid, f.block, c.combine); }
template <typename Handle>  // a CUDA graph handle, destroyed at the end of its scope
using Owned = std::unique_ptr<std::remove_pointer_t<Handle>, cudaError_t (*)(Handle)>;

class ReduceBench {
 public:
  ReduceBench(ReduceFn reduce, const DeviceInfo& d, std::uint64_t max_n, std::uint64_t max_partials,
              unsigned max_offset, Flush flush, bool poison_shared)
      : reduce_(reduce), poison_shared_(poison_shared), input_(kGuard + max_offset + max_n + kGuard),
        out_(kGuard + 1 + kGuard), partials0_(kGuard + max_partials + kGuard),
        partials1_(kGuard + max_partials + kGuard), ticket_(1), timer_(d.l2_bytes, flush) {
    CUDA_CHECK(cudaMemset(ticket_.get(), 0, sizeof(unsigned)));
    CUDA_CHECK(cudaDeviceSynchronize());  // a memset on the default stream: done before any launch on ours
  }
  // The first n elements of the input `spec`, `offset` floats past alignment, NaN around them, made on the GPU.
  void upload(const InputSpec& spec, std::uint64_t n, unsigned offset) {
    make_input_on_device(spec.key, spec.exact_bits, place(n, offset), n, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  // The precision probe of size n at `offset`, NaN around it; returns its exact sum.
  double upload_probe(std::uint64_t seed, std::uint64_t n, unsigned offset) {
    const ProbeInput p = precision_probe(seed, n);
    float* in = place(n, offset);
    CUDA_CHECK(cudaMemset(in, 0, n * sizeof(float)));
    scatter(in, p.positions, p.values, nullptr);
    return p.sum;
  }
  const float* input() const { return input_.get() + kGuard + offset_; }  // where element 0 is
  struct Result {
    float value;
    FirstLaunch first;   // the first launch's shape, as the stage reported it and the harness saw it
    std::string canary;  // changed_poison()'s answer
    SumCheck check;      // the value against `ref`
  };
  // Poisons the result, partials and shared memory; captures one reduction in a CUDA graph (relaxed: a first launch
  // may load its module), which gives the shape; runs it, checks the result. (A graph would time differently.)
  Result run_checked(const Config& c, const SumReference& ref, InputMode mode) {
    const cudaStream_t s = timer_.stream();
    for (const auto* b : {&out_, &partials0_, &partials1_}) b->poison(s);
    if (poison_shared_) poison_shared_memory(s);
    FirstLaunch reported{0, 0};
    cudaGraph_t graph = nullptr;
    CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
    try {
      reported = reduce_(input(), c.n, out(), launch(c), s);  // a launcher only enqueues on s (reduce_stage.hpp)
    } catch (...) {  // the capture ended, so the stream can report the error
      if (cudaStreamEndCapture(s, &graph) == cudaSuccess && graph != nullptr) cudaGraphDestroy(graph);
      (void)cudaGetLastError();
      throw;
    }
    CUDA_CHECK(cudaStreamEndCapture(s, &graph));
    const Owned<cudaGraph_t> owned(graph, cudaGraphDestroy);
    ++launches_;
    const FirstLaunch first = seen_first_launch(graph, c, reported);
    cudaGraphExec_t exec = nullptr;
    CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    const Owned<cudaGraphExec_t> owned_exec(exec, cudaGraphExecDestroy);
    const Deadline deadline(4.0 * c.n, "the checked launch of " + where(c));
    CUDA_CHECK(cudaGraphLaunch(exec, s));
    const float value = read_out(s);
    return {value, first, changed_poison(c, first), check_sum(value, ref, mode, shape_of(c, first), c.n)};
  }
  // The canary: every poisoned word a launch of c may not write: the guards around the result and the input, and the
  // partial sums past those its grids write (first.grid, then the blocks of a launch over first.grid values).
  std::string changed_poison(const Config& c, const FirstLaunch& first) const {
    const std::size_t in0 = kGuard + offset_;
    return ladder::changed_poison(
        {{out_.get(), kGuard, 1, out_.count(), "the result (*out)"},
         {input_.get(), in0, n_, in0 + n_ + kGuard, "the input"},
         {partials0_.get(), kGuard, first.grid, partials0_.count(), "launch.partials[0]"},
         {partials1_.get(), kGuard, max_grid(first.grid, c.block, c.limit), partials1_.count(), "launch.partials[1]"}},
        timer_.stream());
  }
  // Times the stage on input(), each launch from a poisoned result and partials, each result kept in *results.
  TimingStats time_stage(const Config& c, int warmup, int reps, std::vector<float>* results) {
    const Deadline deadline((GpuTimer::warmups(warmup) + reps) * (4.0 * c.n + timer_.flush_bytes()),
                            "the warm-ups and timed repetitions of " + where(c));
    const ReduceLaunch l = launch(c);
    const float* in = input();
    const Kept<float> kept(warmup, reps);
    // What this configuration can use, guards included: a memset of whole buffers would evict a --flush none input.
    const auto poison_live = [&](cudaStream_t s) {
      out_.poison(s);
      const std::size_t live = (max_grid(c.n, c.block, c.limit) + 2 * kGuard) * sizeof(float);
      for (const auto* p : {&partials0_, &partials1_}) CUDA_CHECK(cudaMemsetAsync(p->get(), 0xFF, live, s));
    };
    const auto run = [&](cudaStream_t s) {
      ++launches_;
      reduce_(in, c.n, out(), l, s);
    };
    const TimingStats t = timer_.time(run, warmup, reps, {poison_live, kept.copy_of(out())});
    *results = kept.read(timer_.stream());
    return t;
  }
  long long launches() const { return launches_; }  // of the stage so far, checked and timed
  GpuTimer& timer() { return timer_; }
  float* out() const { return out_.get() + kGuard; }  // the result, between NaN guards
  float read_out(cudaStream_t stream) const {         // waits for `stream`
    CUDA_CHECK(cudaStreamSynchronize(stream));
    float result = 0;
    CUDA_CHECK(cudaMemcpy(&result, out(), sizeof(float), cudaMemcpyDeviceToHost));
    return result;
  }

 private:
  float* place(std::uint64_t n, unsigned offset) {  // poisons the whole input buffer; where element 0 goes
    input_.poison(nullptr);
    n_ = n;
    offset_ = offset;
    return input_.get() + kGuard + offset;
  }
  // The partials a stage sees start kGuard floats into their buffers: reading before the first finds NaN too.
  ReduceLaunch launch(const Config& c) const {
    return ReduceLaunch{c.block, c.limit, c.combine, {partials0_.get() + kGuard, partials1_.get() + kGuard},
                        ticket_.get()};
  }
  // The grid and block of the one kernel in the graph whose first argument is the input: the stage's report must
  // agree, and the grid fit the partials.
  FirstLaunch seen_first_launch(cudaGraph_t graph, const Config& c, const FirstLaunch& reported) const {
    std::size_t count = 0;
    CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &count));
    std::vector<cudaGraphNode_t> nodes(count);
    CUDA_CHECK(cudaGraphGetNodes(graph, nodes.data(), &count));
    dim3 grid, block;
    int readers = 0;
    for (auto node : nodes) {
      cudaGraphNodeType type;
      cudaKernelNodeParams p{};
      CUDA_CHECK(cudaGraphNodeGetType(node, &type));
      if (type != cudaGraphNodeTypeKernel) continue;
      CUDA_CHECK(cudaGraphKernelNodeGetParams(node, &p));
      if (p.kernelParams == nullptr || *static_cast<const void* const*>(p.kernelParams[0]) != input()) continue;
      if (readers++ == 0) std::tie(grid, block) = std::tie(p.gridDim, p.blockDim);
    }
    if (readers != 1) {
      throw StageFailure(fmt::format("{}: the stage launched {} kernels whose first argument is the input; the "
                                     "harness checks a reduction of one kernel over the input, then its combine",
                                     where(c), readers));
    }
    const FirstLaunch seen{grid.x, block.x};
    const std::uint64_t most = max_grid(c.n, c.block, c.limit);
    if (grid.y != 1 || grid.z != 1 || block.y != 1 || block.z != 1 || seen.grid > most || seen.block > c.block) {
      throw StageFailure(fmt::format("{}: the kernel that reads the input was launched with {}x{}x{} blocks of "
                                     "{}x{}x{} threads; at most {} blocks (what its partial sums buffers hold) of "
                                     "at most {} threads, in x only",
                                     where(c), grid.x, grid.y, grid.z, block.x, block.y, block.z, most, c.block));
    }
    if (reported.grid != seen.grid || reported.block != seen.block) {
      throw StageFailure(fmt::format("{}: the stage reported a first launch of {} blocks of {} threads, but the "
                                     "kernel that reads the input was launched with {} blocks of {} threads",
                                     where(c), reported.grid, reported.block, seen.grid, seen.block));
    }
    return seen;
  }
  ReduceFn reduce_;
  bool poison_shared_;
  DeviceBuffer<float> input_, out_, partials0_, partials1_;
  DeviceBuffer<unsigned> ticket_;
  GpuTimer timer_;
  std::uint64_t n_ = 0;  // the input's elements
  unsigned offset_ = 0;
  long long launches_ = 0;
};

Config make_config(std::uint64_t n, Regime regime, unsigned block, Combine combine, unsigned requested_grid,
                   BlocksPerSmFn blocks_per_sm, const DeviceInfo& d) {
  Config c{n, regime, block, combine, kMaxGrid, 0};
  if (regime == Regime::kTree && ceil_div<std::uint64_t>(n, block) > kMaxGrid) {
    throw UsageError(fmt::format("-n {}: the tree regime would launch {} blocks of {} threads; a grid holds at most "
                                 "2^31-1 blocks (use a larger --block or the stream regime)",
                                 n, ceil_div<std::uint64_t>(n, block), block));
  }
  if (regime == Regime::kTree) return c;
  if (requested_grid) return {n, regime, block, combine, requested_grid, 0};
  c.blocks_per_sm = blocks_per_sm(ReduceLaunch{block, 0, combine, {nullptr, nullptr}, nullptr});
  if (c.blocks_per_sm < 1) {
    throw UsageError(fmt::format("--block {}: the occupancy API says no block of {} threads of this kernel fits on an "
                                 "SM", block, block));
  }
  c.limit = static_cast<unsigned>(std::min<long long>(static_cast<long long>(d.sm_count) * c.blocks_per_sm, kMaxGrid));
  return c;
}

// The same bits every launch: every combine but atomic (block sums arrive in any order), and atomic with one block.
bool deterministic(Combine combine, const FirstLaunch& first) { return combine != Combine::kAtomic || first.grid == 1; }
std::uint64_t largest(const std::vector<std::uint64_t>& sizes) { return *std::max_element(sizes.begin(), sizes.end()); }
double gbps(std::uint64_t n, double ms) { return ms > 0 ? static_cast<double>(n) * sizeof(float) / (ms * 1e6) : NAN; }

// A bench for n <= max_n, offsets <= max_offset, grids <= max_partials; refused, naming `option`, unless it fits.
ReduceBench make_bench(ReduceFn reduce, const ReduceOptions& o, const DeviceInfo& d, std::uint64_t max_n,
                       std::uint64_t max_partials, unsigned max_offset, bool timing, const std::string& option) {
  const Flush flush = timing ? o.flush : Flush::kNone;
  const std::size_t input = (max_n + max_offset + 2 * kGuard) * sizeof(float);
  const std::size_t scratch = 2 * (max_partials + 2 * kGuard) * sizeof(float);
  const std::size_t flush_bytes = GpuTimer::flush_bytes(d.l2_bytes, flush);
  const std::size_t cub = timing ? CubSum::temp_bytes(o.sizes) : 0;
  const std::size_t sol = timing ? SpeedOfLight::bytes(d.sm_count) : 0;
  require_device_memory(d, input + scratch + flush_bytes + cub + sol + kProbeElements * 12 + 64,
                        fmt::format("input {}, partial sums {}, L2 flush buffer {}, CUB temporary storage {}, "
                                    "speed-of-light sums {}", human_bytes(input), human_bytes(scratch),
                                    human_bytes(flush_bytes), human_bytes(cub), human_bytes(sol)), option);
  return ReduceBench(reduce, d, max_n, max_partials, max_offset, flush, o.shared_poison);
}

struct Run {  // one configuration's checks and times
  Config c;
  FirstLaunch first{0, 0};           // the first launch, as the harness saw it (and the stage reported it)
  Verdict inputs;                    // the checks every mode makes first: the exact input's launches and the probe
  SumReference exact_ref, ref;       // the exact input's, the measured input's
  float exact_result = NAN, probe_result = NAN, result = NAN;  // the first exact launch's, the probe's, the measured
  double probe_sum = NAN;
  SumCheck measured, timed;          // the measured input: its checked launch, every warm-up and timed launch
  TimingStats t;
  bool timing = false;
  long long launches = 0, checked = 0;  // the stage's launches for this configuration; of them, those judged
  float lo = NAN, hi = NAN;             // the measured input's results (checked, warm-up and timed launches): range,
  long long distinct = 0, runs = 0;     // how many differ, and of how many launches (atomic's arrive in any order)
  std::string canary;                // the first poisoned word a launch changed but may not write ("" if none)
  std::string fingerprint;           // of the measured input on the GPU
  void keep_canary(const std::string& found, const std::string& launch) {
    if (canary.empty() && !found.empty()) canary = fmt::format("{}: {}", launch, found);
  }
};

// The references of one size on the measured input: CUB and the speed of light, every CUB and read-only launch checked.
struct References {
  int read_grid = 0;  // the read-only kernel's blocks
  TimingStats cub, read, copy, empty, memset;
  float cub_result = NAN;
  SumCheck cub_check, cub_timed, read_check;
};

// A run's one verdict: every check it made, and the rates (the stage's, CUB's, the read-only kernel's) against peak.
Verdict verdict_of(const Run& r, const References* refs, InputMode mode, double peak_gbps) {
  Verdict v = r.inputs;
  record(v, to_string(mode), r.measured);
  if (r.timing) record(v, "timed", r.timed);
  v.add("canary", r.canary.empty(), r.canary);
  v.add("launches", r.checked == r.launches,
        fmt::format("{} of the stage's {} launches were checked", r.checked, r.launches));
  if (r.timing) rate_above_peak(v, "the stage", gbps(r.c.n, r.t.median_ms), peak_gbps, "GB/s");
  if (refs) {
    record(v, "cub", refs->cub_check);
    record(v, "cub", refs->cub_timed);
    record(v, "read", refs->read_check);
    rate_above_peak(v, "CUB", gbps(r.c.n, refs->cub.median_ms), peak_gbps, "GB/s");
    rate_above_peak(v, "the read-only kernel", gbps(r.c.n, refs->read.median_ms), peak_gbps, "GB/s");
  }
  return v;
}

// Every kept launch of a series: bit for bit the checked launch's result where the series is deterministic, else each
// within the float bound (or exact) like the checked one. The reason names the first launch that failed.
template <typename T>
SumCheck check_launches(const std::vector<T>& kept, T checked, bool deterministic, const SumReference& ref,
                        InputMode mode, const SumShape& shape, std::uint64_t n, int warmup, int reps) {
  SumCheck all;
  all.pass = true;
  for (std::size_t i = 0; i < kept.size(); ++i) {
    SumCheck c = deterministic ? SumCheck{} : check_sum(kept[i], ref, mode, shape, n);
    if (deterministic) {  // bit for bit the checked launch: a launch that loses even one element's worth fails
      c.pass = std::memcmp(&kept[i], &checked, sizeof(T)) == 0;
      c.reason = c.pass ? "" : fmt::format("gave {:.9g}, the checked launch {:.9g}: a deterministic launch must give "
                                           "the same bits", static_cast<double>(kept[i]), static_cast<double>(checked));
    }
    if (!c.bounded) {  // not judged: the exact check carries the verdict (NaN is still a failure, bounded)
      all = c;
    } else if (!c.pass) {
      c.reason = fmt::format("{}: {}", launch_name(static_cast<int>(i), warmup, reps), c.reason);
      return c;
    }
  }
  return all;
}

// 1. and 2.: at every configuration, the exact input (kCheckedLaunches launches), then the precision probe.
void check_inputs(ReduceBench& bench, const ReduceOptions& o, std::vector<Run>& runs, const char* stage) {
  const std::uint64_t max_n = largest(o.sizes);
  const unsigned range = exact_range(max_n);
  progress(fmt::format("{}: exact check: {} dyadic floats k/{} (seed {})", stage, max_n, range, o.seed));
  const InputSpec exact(o.seed, 0, InputMode::kExact, range);  // made on the GPU, and as the oracle sums it
  std::map<std::uint64_t, SumReference> refs;
  for (auto& r : runs) {
    if (!refs.count(r.c.n)) refs.emplace(r.c.n, reference_sum(exact, r.c.n));
    r.exact_ref = refs.at(r.c.n);
    bench.upload(exact, r.c.n, o.offset);
    const long long before = bench.launches();
    for (int l = 1; l <= kCheckedLaunches; ++l) {
      const auto got = bench.run_checked(r.c, r.exact_ref, InputMode::kExact);
      r.first = got.first;
      if (l == 1) r.exact_result = got.value;
      r.keep_canary(got.canary, fmt::format("exact input, launch {} of {}", l, kCheckedLaunches));
      r.inputs.add("exact", got.check.pass,
                   got.check.pass ? "" : fmt::format("launch {} of {}: {}", l, kCheckedLaunches, got.check.reason));
    }
    r.probe_sum = bench.upload_probe(o.seed, r.c.n, o.offset);
    const auto got = bench.run_checked(r.c, {r.probe_sum, r.probe_sum}, InputMode::kExact);
    r.probe_result = got.value;
    r.keep_canary(got.canary, "precision probe");
    r.inputs.add("probe", got.check.pass, got.check.reason);
    r.checked += kCheckedLaunches + 1;
    r.launches += bench.launches() - before;
  }
}

References time_references(ReduceBench& bench, CubSum& cub, SpeedOfLight& sol, std::uint64_t n,
                           const SumReference& ref, const ReduceOptions& o, const DeviceInfo& d) {
  References r;
  r.read_grid = sol.grid();
  const cudaStream_t s = bench.timer().stream();
  const float* in = bench.input();
  // CUB's shape: 256-thread blocks of 16 items per thread, then one block; at most one block per SM (the loosest).
  const SumShape cub_shape = stage_shape(n, std::min<std::uint64_t>(ceil_div<std::uint64_t>(n, 4096), d.sm_count),
                                         256, Combine::kTwoPass);
  // The read-only kernel's: each thread's chain of floats; the kept per-thread sums are then added in double.
  std::uint64_t per_thread = 0, busy = 0;
  const SumShape read_shape = SumShape().chains(n, 1, sol.threads(), &per_thread, &busy);
  const auto poison_out = [&](cudaStream_t st) { CUDA_CHECK(cudaMemsetAsync(bench.out(), 0xFF, sizeof(float), st)); };
  poison_out(s);
  cub.run(in, n, bench.out(), s);
  r.cub_result = bench.read_out(s);
  r.cub_check = check_sum(r.cub_result, ref, o.input, cub_shape, n);
  const Kept<float> cub_kept(o.warmup, o.reps);
  r.cub = bench.timer().time([&](cudaStream_t st) { cub.run(in, n, bench.out(), st); }, o.warmup, o.reps,
                             {poison_out, cub_kept.copy_of(bench.out())});
  // Each launch within the bound (CUB documents run-to-run determinism: bit for bit would be stricter, not yet tried).
  r.cub_timed = check_launches(cub_kept.read(s), r.cub_result, false, ref, o.input, cub_shape, n, o.warmup, o.reps);
  const Kept<double> read_kept(o.warmup, o.reps);
  r.read = bench.timer().time([&](cudaStream_t st) { sol.read(in, n, st); }, o.warmup, o.reps,
                              {[&](cudaStream_t st) { sol.poison_sums(st); },
                               [&](cudaStream_t st, int l) { sol.keep_sum(read_kept.slot(l), st); }});
  const std::vector<double> reads = read_kept.read(s);
  // The first launch against the oracle, then every launch bit for bit that one (the kernel is deterministic).
  r.read_check = check_sum(reads.front(), ref, o.input, read_shape, n);
  if (r.read_check.pass) {
    r.read_check = check_launches(reads, reads.front(), true, ref, o.input, read_shape, n, o.warmup, o.reps);
  }
  r.copy = sol.has_copy() ? bench.timer().time([&](cudaStream_t st) { sol.copy(in, n, st); }, o.warmup, o.reps)
                          : TimingStats{NAN, NAN, NAN, {}, {}, 0};  // no room for a second input-sized buffer
  r.empty = bench.timer().time([&](cudaStream_t st) { sol.empty_launch(st); }, o.warmup, o.reps);
  r.memset = bench.timer().time(poison_out, o.warmup, o.reps);  // a 4-byte memset
  return r;
}

// 3. The measured input: each configuration checked, then timed, every launch checked; CUB and the rest once per size.
void measure(ReduceBench& bench, const ReduceOptions& o, const DeviceInfo& d, std::vector<Run>& runs,
             std::map<std::uint64_t, References>& refs, const char* stage) {
  const bool timing = !o.check_only;
  const std::uint64_t max_n = largest(o.sizes);
  const InputSpec input(o.seed, 0, o.input, exact_range(max_n));  // made on the GPU, and as the oracle sums it
  const auto cub = timing ? std::make_unique<CubSum>(o.sizes) : nullptr;
  const auto sol = timing ? std::make_unique<SpeedOfLight>(d.sm_count, max_n) : nullptr;
  std::map<std::uint64_t, SumReference> sums;
  for (auto& r : runs) {
    if (!sums.count(r.c.n)) sums[r.c.n] = o.input == InputMode::kFloat ? reference_sum(input, r.c.n) : r.exact_ref;
    r.ref = sums.at(r.c.n);
    bench.upload(input, r.c.n, o.offset);
    r.fingerprint = fingerprint_hex(device_fingerprint(bench.input(), r.c.n));  // of what the kernel reads
    progress(fmt::format("{}: {}: checking{}", stage, where(r.c), timing ? " and timing" : ""));
    const long long before = bench.launches();
    const auto got = bench.run_checked(r.c, r.ref, o.input);
    r.result = got.value;
    r.measured = got.check;
    r.keep_canary(got.canary, fmt::format("{} input", to_string(o.input)));
    ++r.checked;
    std::vector<float> kept;  // every warm-up and timed launch's result, in order
    if (timing) {
      r.timing = true;
      r.t = bench.time_stage(r.c, o.warmup, o.reps, &kept);
      r.keep_canary(bench.changed_poison(r.c, r.first), "after the warm-up and timed launches");
      r.timed = check_launches(kept, r.result, deterministic(r.c.combine, r.first), r.ref, o.input,
                               shape_of(r.c, r.first), r.c.n, o.warmup, o.reps);
      r.checked += static_cast<long long>(kept.size());
    }
    kept.push_back(r.result);  // and the checked launch's: their distinct bit patterns, their range (NaN if any is)
    std::vector<std::uint32_t> bits(kept.size());
    std::memcpy(bits.data(), kept.data(), kept.size() * sizeof(float));
    r.runs = static_cast<long long>(kept.size()), r.distinct = std::set<std::uint32_t>(bits.begin(), bits.end()).size();
    const auto [lo, hi] = std::minmax_element(kept.begin(), kept.end());
    const bool nan = std::any_of(kept.begin(), kept.end(), [](float x) { return std::isnan(x); });
    r.lo = nan ? NAN : *lo, r.hi = nan ? NAN : *hi;
    r.launches += bench.launches() - before;
    if (timing && !refs.count(r.c.n)) refs.emplace(r.c.n, time_references(bench, *cub, *sol, r.c.n, r.ref, o, d));
  }
}

// The notes under the table: every check failed or not judged, atomic's distinct results, and for a single passing
// configuration the float input's error against its bound.
void add_notes(const Run& r, const Verdict& v, const ReduceOptions& o, bool single, std::vector<std::string>& notes) {
  for (const auto& failure : v.failures()) notes.push_back(fmt::format("FAIL {}: {}", where(r.c), failure));
  for (const auto& skipped : v.skipped()) notes.push_back(fmt::format("not judged {}: {}", where(r.c), skipped));
  if (r.distinct > 1) {
    notes.push_back(fmt::format("{}: {} distinct results in {} launches on the measured input, {:.9g} to {:.9g}",
                                where(r.c), r.distinct, r.runs, r.lo, r.hi));
  }
  if (single && v.pass() && o.input == InputMode::kFloat && r.measured.bounded) {
    notes.push_back(fmt::format("float input: result {:.9g}, oracle {:.17g}, |error| {:.3g} = {:.2g} of the bound "
                                "{:.3g} ({:g} u mean|x| sqrt(sum of the squared partial sums this launch of {} x {} "
                                "threads, {}, forms))",
                                r.result, r.ref.sum, r.measured.error, r.measured.error / r.measured.tolerance,
                                r.measured.tolerance, kSumLambda, r.first.grid, r.first.block, to_string(r.c.combine)));
  }
}

std::vector<std::string> table_row(const Run& r, const References* refs, const Verdict& v, const ReduceOptions& o,
                                   double peak) {
  const SumCheck& m = r.measured;  // the error / bound cell: "skipped" where record() skipped the check
  const std::string error_bound = o.input == InputMode::kExact ? "exact" : !m.bounded ? "skipped"
                                  : !std::isfinite(m.error) ? "NaN"
                                  : fmt::format("{:.2g}", m.tolerance > 0 ? m.error / m.tolerance : 0.0);
  const auto ms = [&](double x) { return r.timing ? fmt::format("{:.4f}", x) : std::string("-"); };
  const double g = gbps(r.c.n, r.t.median_ms);
  const std::string grid = r.first.block == r.c.block ? std::to_string(r.first.grid)
                                                      : fmt::format("{} x {} threads", r.first.grid, r.first.block);
  return {std::to_string(r.c.n), to_string(r.c.regime), std::to_string(r.c.block), grid,
          to_string(r.c.combine), v.field("exact"), v.field("probe"), error_bound,
          fmt::format("{}/{}", r.checked, r.launches), v.word(),
          ms(r.t.median_ms), ms(r.t.min_ms), ms(r.t.max_ms), r.timing ? fmt::format("{:.1f}", g) : "-",
          r.timing ? fmt::format("{:.1f}", 100 * g / peak) : "-",
          refs ? fmt::format("{:.1f}", 100 * refs->read.median_ms / r.t.median_ms) : "-",
          refs ? ms(refs->cub.median_ms) : "-", refs ? fmt::format("{:.1f}", gbps(r.c.n, refs->cub.median_ms)) : "-",
          refs ? fmt::format("{:.2f}", refs->cub.median_ms / r.t.median_ms) : "-"};
}

Record make_record(const Run& r, const References* refs, const Verdict& v, const ReduceStage& stage,
                   const ReduceOptions& o, const DeviceInfo& d, int read_grid) {
  const bool bounded = o.input == InputMode::kFloat && r.measured.bounded;
  const double peak = d.peak_gbps();
  const double stage_gbps = r.timing ? gbps(r.c.n, r.t.median_ms) : NAN;
  static const References kNone;
  const References& f = refs ? *refs : kNone;
  const auto of_refs = [&](double value) { return refs ? value : NAN; };  // NaN where nothing was timed beside it
  const double cub_gbps = of_refs(gbps(r.c.n, f.cub.median_ms));
  const double read_gbps = of_refs(gbps(r.c.n, f.read.median_ms));
  const double copy_gbps = of_refs(2 * gbps(r.c.n, f.copy.median_ms));  // every byte read and written
  // Repetitions not held to the end (GpuTimer::time), here and in the references': the timing_check, not the verdict.
  int unheld = r.t.hold_timeouts;
  for (const auto* t : {&f.cub, &f.read, &f.copy, &f.empty, &f.memset}) unheld += t->hold_timeouts;
  const auto if_timed = [&](double value) { return r.timing ? value : NAN; };
  Record rec;
  add_context_fields(rec, stage.name, d, o);
  rec.add("regime", to_string(r.c.regime)).add("offset", o.offset).add("n", r.c.n).add("bytes", r.c.n * sizeof(float));
  rec.add("block", r.c.block).add("grid", r.first.grid).add("threads", r.first.block);
  rec.add("blocks_per_sm", r.c.blocks_per_sm).add("combine", to_string(r.c.combine)).add("fingerprint", r.fingerprint);
  rec.add("exact_check", v.field("exact")).add("exact_result", r.exact_result, 9).add("exact_sum", r.exact_ref.sum, 17);
  rec.add("exact_range", exact_range(largest(o.sizes))).add("checked_launches", kCheckedLaunches);
  rec.add("probe_check", v.field("probe")).add("probe_result", r.probe_result, 9).add("probe_sum", r.probe_sum, 17);
  rec.add("result", r.result, 9).add("reference", r.ref.sum, 17).add("abs_error", r.measured.error, 3);
  rec.add("bound", bounded ? r.measured.tolerance : NAN, 3);
  rec.add("error_bound_ratio", bounded ? r.measured.error / r.measured.tolerance : NAN, 3);
  rec.add("float_check", o.input == InputMode::kExact ? "exact" : v.field("float"));
  rec.add("timed_check", v.field("timed")).add("launches", r.launches).add("launches_checked", r.checked);
  rec.add("timing_check", timing_check(r.timing, unheld)).add("check", v.word());
  rec.add("ms_median", if_timed(r.t.median_ms)).add("ms_min", if_timed(r.t.min_ms)).add("ms_max", if_timed(r.t.max_ms));
  rec.add("gbps", stage_gbps).add("pct_peak", 100 * stage_gbps / peak, 4);
  add_clock_fields(rec, r.t, r.timing);
  rec.add("cub_ms_median", of_refs(f.cub.median_ms)).add("cub_ms_min", of_refs(f.cub.min_ms));
  rec.add("cub_ms_max", of_refs(f.cub.max_ms)).add("cub_gbps", cub_gbps).add("cub_pct_peak", 100 * cub_gbps / peak, 4);
  rec.add("x_cub", of_refs(f.cub.median_ms / r.t.median_ms), 4).add("cub_check", v.field("cub"));
  rec.add("cub_result", of_refs(f.cub_result), 9).add("cub_abs_error", of_refs(std::fabs(f.cub_result - r.ref.sum)), 3);
  rec.add("read_check", v.field("read")).add("read_ms_median", of_refs(f.read.median_ms)).add("read_gbps", read_gbps);
  rec.add("read_pct_peak", 100 * read_gbps / peak, 4).add("pct_read", 100 * stage_gbps / read_gbps, 4);
  rec.add("read_grid", read_grid).add("copy_ms_median", of_refs(f.copy.median_ms)).add("copy_gbps", copy_gbps);
  rec.add("copy_pct_peak", 100 * copy_gbps / peak, 4).add("empty_launch_ms", of_refs(f.empty.median_ms));
  rec.add("runs", r.runs);  // one launch (--check-only) says nothing of the bits from run to run: null
  if (r.runs > 1) rec.add("distinct_results", r.distinct).add("bitwise_identical", r.distinct == 1);
  if (r.runs < 2) rec.add("distinct_results", NAN).add("bitwise_identical", NAN);
  rec.add("min_result", r.lo, 9).add("max_result", r.hi, 9);
  rec.add("max_abs_error", std::max(std::fabs(r.lo - r.ref.sum), std::fabs(r.hi - r.ref.sum)), 3);
  return rec.add("memset4_ms", of_refs(f.memset.median_ms));
}

void print_header(const ReduceStage& stage, const ReduceOptions& o, const DeviceInfo& d, const std::vector<Run>& runs,
                  int read_grid) {
  const bool timing = !o.check_only;
  const unsigned range = exact_range(largest(o.sizes));
  fmt::print("{}: float sum reduction, checked against the CPU oracle{}\n  device   {}\n  peak     {:.0f} GB/s "
             "theoretical: 2 x {} MHz x {}-bit bus / 8, from device attributes\n", stage.name,
             timing ? ", timed beside cub::DeviceReduce::Sum" : "", device_line(d), d.peak_gbps(),
             d.mem_clock_khz / 1000, d.bus_width_bits);
  fmt::print("  input    {}, seed {}, at a 256-byte aligned address + {} floats, NaN before and after\n",
             o.input == InputMode::kFloat ? "float: uniform in [0,1)"
             : fmt::format("exact: random dyadic values k/{} in [-1, 1], k a non-zero integer", range),
             o.seed, o.offset);
  std::set<std::string> launches;
  for (const auto& r : runs) {
    const std::string words =
        r.c.regime == Regime::kTree ? "one element per thread, grid = n / block"
        : o.grid                    ? fmt::format("grid = min(n / block, --grid {})", o.grid)
                                    : fmt::format("grid = min(n / block, {} SMs x {} blocks per SM from the occupancy "
                                                  "API)", d.sm_count, r.c.blocks_per_sm);
    const std::string line = fmt::format("{} regime, block {}: {}", to_string(r.c.regime), r.c.block, words);
    if (launches.insert(line).second) fmt::print("  launch   {}\n", line);
  }
  const std::string floats = o.input != InputMode::kFloat ? "" : fmt::format(
      ", float (error/bound <= 1, the bound {:g} u mean|x| sqrt(sum of the squared partial sums the launch forms): "
      "under the rounding model a correct kernel exceeds it with probability below 3e-8)", kSumLambda);
  const std::string rates = o.flush == Flush::kNone ? "" : fmt::format(
      ", and none of their GB/s more than {:g}% above the theoretical peak", 100 * kRateMargin);
  const std::string timed = !timing ? "" : ", every warm-up and timed launch (each started from a poisoned result; "
      "bit for bit the checked launch where the combine is deterministic, else within the bound) and every launch of "
      "CUB and of the read-only kernel" + rates;
  fmt::print("  check    PASS = every check passed: exact (the same launch, {} times, on dyadic values k/{} whose "
             "every partial sum is exact in float, equals the exact sum), probe ({} values of 13 significant bits "
             "among zeros: a read or partial sum kept in 12 bits or fewer changes the sum){}{}; before every checked "
             "launch the result, the partial sums{} are NaN, and the harness takes the launch's grid from the launch "
             "itself (a captured graph)\n", kCheckedLaunches, range, kProbeElements, floats, timed,
             o.shared_poison ? " and the shared memory of every SM" : " (not the shared memory: --no-shared-poison)");
  fmt::print("  not seen the memory-model bugs one GPU hides (a relaxed ticket, a non-coherent read of what the launch "
             "wrote, a block-scope atomic): the machine-code test (scripts/sass.py) reads them\n");
  if (!timing) return;
  fmt::print("  timing   {}\n  GB/s     bytes read (4 n) / median time, 1 GB = 1e9 B; x CUB = CUB time / stage time "
             "(above 1: faster than CUB)\n  % read   the stage's GB/s over a kernel that only reads the same bytes ({} "
             "blocks of 512 threads, four 16-byte loads in flight each), timed alike: the speed of light a sum can "
             "reach here\n", timing_line(o, d), read_grid);
}

// The default run: the exact check and probe, then the measured input checked and timed.
int bench(const ReduceStage& stage, ReduceFn reduce, BlocksPerSmFn blocks_per_sm, const ReduceOptions& o,
          const DeviceInfo& d) {
  std::vector<Run> runs;  // every configuration the options ask for, in the order of the table
  std::uint64_t max_partials = 1;
  for (auto n : o.sizes) {
    for (auto regime : o.regimes) {
      for (auto block : o.blocks) {
        for (auto combine : o.combines) {
          const Config& c = runs.emplace_back().c = make_config(n, regime, block, combine, o.grid, blocks_per_sm, d);
          max_partials = std::max(max_partials, max_grid(c.n, c.block, c.limit));
        }
      }
    }
  }
  const std::uint64_t max_n = largest(o.sizes);
  const bool timing = !o.check_only;
  ReduceBench bench = make_bench(reduce, o, d, max_n, max_partials, o.offset, timing, fmt::format("-n {}", max_n));
  check_inputs(bench, o, runs, stage.name);
  std::map<std::uint64_t, References> refs;
  measure(bench, o, d, runs, refs, stage.name);
  const int read_grid = refs.empty() ? 0 : refs.begin()->second.read_grid;
  // The DRAM peak the rates are judged against; not under --flush none, where an input in L2 is read faster.
  const double judged_peak = o.flush == Flush::kNone ? NAN : d.peak_gbps();
  Report report;
  report.table.push_back({"n", "regime", "block", "grid", "combine", "exact", "probe", "error/bound", "launches",
                          "check", "ms", "min", "max", "GB/s", "% peak", "% read", "CUB ms", "CUB GB/s", "x CUB"});
  for (const auto& r : runs) {
    const References* ref = refs.count(r.c.n) ? &refs.at(r.c.n) : nullptr;
    const Verdict v = verdict_of(r, ref, o.input, judged_peak);
    report.pass = report.pass && v.pass();
    report.table.push_back(table_row(r, ref, v, o, d.peak_gbps()));
    add_notes(r, v, o, runs.size() == 1, report.notes);
    report.records.push_back(make_record(r, ref, v, stage, o, d, read_grid));
    if (r.timing) report.series.push_back(r.t);
  }
  for (const auto& [n, ref] : refs) {
    for (const auto* t : {&ref.cub, &ref.read, &ref.copy, &ref.empty, &ref.memset}) report.series.push_back(*t);
  }
  return report.print(stage.name, o.format, [&] { print_header(stage, o, d, runs, read_grid); });
}

int self_test(const ReduceStage& stage, ReduceFn reduce, BlocksPerSmFn blocks_per_sm, const ReduceOptions& o,
              const DeviceInfo& d) {
  const bool full = o.self_test == SelfTest::kFull;
  using Sizes = std::vector<std::uint64_t>;
  using Counts = std::vector<unsigned>;
  const Sizes sizes = full ? Sizes{1, 2, 31, 32, 33, 255, 256, 257, 4097, 1000003, (1u << 24) + 1}
                           : Sizes{1, 2, 3, 4, 33, 4097, 4098, 4099, 4100};
  const Counts blocks = full ? Counts{64, 128, 256, 512, 1024} : Counts{64, 1024};
  // Stream-regime grids from the occupancy API (0), and small ones that make each thread walk far (to kFarthestWalk).
  const Counts stream_grids = full ? Counts{0, 1, 7} : Counts{0, 3};
  constexpr std::uint64_t kFarthestWalk = 1000003;  // at 2^24 + 1 a lone block's walk took most of the self-test's time
  std::vector<std::pair<Regime, unsigned>> launches;  // regime, --grid
  for (auto regime : stage.regimes) {
    for (auto grid : regime == Regime::kTree ? Counts{0} : stream_grids) launches.push_back({regime, grid});
  }
  // The quick self-test runs under compute-sanitizer, whose tools judge accesses, not values: the exact input alone.
  const std::vector<std::string> inputs = full ? std::vector<std::string>{"exact", "probe", "float"}
                                               : std::vector<std::string>{"exact"};
  const std::uint64_t max_n = sizes.back();
  ReduceBench bench = make_bench(reduce, o, d, max_n, ceil_div<std::uint64_t>(max_n, kMinBlock), kSelfTestMaxOffset,
                                 false, "--self-test");
  auto host = host_floats(max_n, "--self-test");
  fmt::print("{} self-test ({}): {} sizes x {} blocks x {} x {} launches x {} offsets x {} combines\n", stage.name,
             full ? "full" : "quick", sizes.size(), blocks.size(),
             full ? "3 inputs (exact, probe, float)" : "1 input (exact)", launches.size(), kSelfTestMaxOffset + 1,
             stage.combines.size());
  Verdict all;  // every check of every run: the self-test's one verdict
  std::size_t runs = 0, failures = 0;
  for (const std::string& input : inputs) {
    const InputMode mode = input == "float" ? InputMode::kFloat : InputMode::kExact;
    if (input != "probe") generate_input(o.seed, 0, mode, host.get(), max_n, exact_range(max_n));
    for (unsigned offset = 0; offset <= kSelfTestMaxOffset; ++offset) {  // every alignment of a float to 16 bytes
      for (const std::uint64_t n : sizes) {
        SumReference ref;
        if (input == "probe") {
          ref.sum = ref.abs_sum = bench.upload_probe(o.seed, n, offset);  // every probe value is positive
        } else {
          bench.upload(InputSpec(o.seed, 0, mode, exact_range(max_n)), n, offset);
          all.add("input", device_fingerprint(bench.input(), n) == fingerprint(host.get(), n),
                  fmt::format("offset {}: the {} input the GPU made differs from the host's", offset, input));
          ref = reference_sum(host.get(), n);
        }
        const std::size_t runs_before = runs, failures_before = failures;
        for (auto block : blocks) {
          for (const auto& [regime, grid] : launches) {
            if (grid != 0 && n > kFarthestWalk) continue;
            for (auto combine : stage.combines) {
              const Config c = make_config(n, regime, block, combine, grid, blocks_per_sm, d);
              const auto got = bench.run_checked(c, ref, mode);
              Verdict v;
              record(v, input, got.check);
              v.add("canary", got.canary.empty(), got.canary);
              // A deterministic combine gives the float input's sum the same bits on a second launch.
              if (mode == InputMode::kFloat && deterministic(combine, got.first)) {
                const auto again = bench.run_checked(c, ref, mode);
                v.add("deterministic", std::memcmp(&again.value, &got.value, sizeof(float)) == 0,
                      fmt::format("a second launch gave {:.9g}, the first {:.9g}: a deterministic combine must give "
                                  "the same bits", again.value, got.value));
                v.add("canary", again.canary.empty(), again.canary);
              }
              all.add_all(v);
              ++runs;
              if (v.failures().empty()) continue;
              ++failures;
              fmt::print("  FAIL n = {}, block {}, {} regime{}, input {}, offset {}, combine {}: {}\n", n, block,
                         to_string(regime), grid ? fmt::format(" (grid {})", grid) : "", input, offset,
                         to_string(combine), v.failures().front());
            }
          }
        }
        fmt::print("  input {}, offset {}, n = {:>8}: {:>4} runs, {}\n", input, offset, n, runs - runs_before,
                   failures > failures_before ? fmt::format("{} FAILED", failures - failures_before) : "all PASS");
      }
    }
  }
  fmt::print("{} self-test: {} runs ({} float runs not judged, their bound too loose: their exact twins decide), {} "
             "failed: {}\n", stage.name, runs, all.skipped().size(), failures, all.word());
  return all.pass() ? 0 : 1;
}
}  // namespace

int run_reduce_stage(int argc, char** argv, const ReduceStage& stage, ReduceFn reduce, BlocksPerSmFn blocks_per_sm) {
  ReduceOptions o;
  if (const auto parsed = parse_reduce_options(stage, argc, argv, o); parsed.exit_status) return print_outcome(parsed);
  return run_program(stage.name, o, [&](const DeviceInfo& d) {
    return o.self_test != SelfTest::kNone ? self_test(stage, reduce, blocks_per_sm, o, d)
                                          : bench(stage, reduce, blocks_per_sm, o, d);
  });
}
}  // namespace ladder
