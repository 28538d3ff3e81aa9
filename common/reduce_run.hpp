// The device side of a reduce stage's run (reduce_harness.cpp says what a run does): the constants of a run, a launch
// configuration, and ReduceBench, which holds the input between NaN guards, the result and the partial sums, and
// makes the checked and the timed launches. Internal to common/.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "harness.hpp"
#include "input.hpp"
#include "reduce_stage.hpp"

namespace ladder::reduce_run {

constexpr unsigned kMaxGrid = 2147483647u;  // gridDim.x limit
constexpr unsigned kMinBlock = 64;
constexpr unsigned kSelfTestMaxOffset = 3;
constexpr std::uint64_t kStudySeeds = 8;  // --error-study: inputs; random sizes below 2^kStudyMaxLog2
constexpr int kStudyMaxLog2 = 24;
constexpr int kStudyLargeLog2[] = {26, 28};  // and these, the published sizes' neighbourhood
// Launches of the exact input per configuration. A launcher or kernel that depends on what an earlier launch left
// behind (a counter not reset, a memset skipped after the first calls) goes wrong from the second or the third launch
// on; every warm-up and timed launch is checked too.
constexpr int kCheckedLaunches = 3;

// The most blocks a stage's first launch may use (what the partials buffers hold): ceil(n / block), at most the limit.
inline std::uint64_t max_grid(std::uint64_t n, unsigned block, unsigned limit) {
  return std::min<std::uint64_t>(ceil_div<std::uint64_t>(n, block), limit);
}

// One launch configuration of a stage.
struct Config {
  std::uint64_t n;
  Regime regime;
  unsigned block;
  Combine combine;
  unsigned limit;     // grid limit: the tree regime has none, --grid wins, else SMs x the stage's occupancy answer
  int blocks_per_sm;  // stream regime without --grid: what the stage's blocks_per_sm() said; else 0
};

// What a launcher enqueued, seen by the harness rather than taken on the launcher's word: its work is captured into a
// CUDA graph, whose kernel nodes tell the grid and block of the kernel that reads the input. The checked launches run
// the graph, so the error bound and the reported launch shape both rest on what was launched; the timed launches call
// the launcher directly (a graph launch would time differently), and their results are judged against the checked
// launch's.
class CapturedLaunch {
 public:
  // Captures what enqueue() puts on `stream` without running it; a launcher only enqueues on `stream`
  // (reduce_stage.hpp). Relaxed, as verified on a GPU with every stage: a first launch may load its module (lazy
  // loading) inside the capture. If enqueue() throws, the capture is ended, so the stream can report the error.
  CapturedLaunch(cudaStream_t stream, const std::function<void()>& enqueue) {
    CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed));
    try {
      enqueue();
    } catch (...) {
      cudaGraph_t partial = nullptr;
      if (cudaStreamEndCapture(stream, &partial) == cudaSuccess && partial != nullptr) cudaGraphDestroy(partial);
      (void)cudaGetLastError();
      throw;
    }
    CUDA_CHECK(cudaStreamEndCapture(stream, &graph_));
    CUDA_CHECK(cudaGraphInstantiate(&exec_, graph_, 0));
  }
  ~CapturedLaunch() {
    cudaGraphExecDestroy(exec_);
    cudaGraphDestroy(graph_);
  }
  CapturedLaunch(const CapturedLaunch&) = delete;
  CapturedLaunch& operator=(const CapturedLaunch&) = delete;
  // The kernels whose first argument is the pointer `input`, and the grid and block of the first of them found.
  int kernels_reading(const void* input, dim3* grid, dim3* block) const {
    std::size_t count = 0;
    CUDA_CHECK(cudaGraphGetNodes(graph_, nullptr, &count));
    std::vector<cudaGraphNode_t> nodes(count);
    CUDA_CHECK(cudaGraphGetNodes(graph_, nodes.data(), &count));
    int found = 0;
    for (auto node : nodes) {
      cudaGraphNodeType type;
      CUDA_CHECK(cudaGraphNodeGetType(node, &type));
      if (type != cudaGraphNodeTypeKernel) continue;
      cudaKernelNodeParams p{};
      CUDA_CHECK(cudaGraphKernelNodeGetParams(node, &p));
      // Every kernel of a stage takes a pointer first (reduce_stage.hpp): the input, or the partial sums it reduces.
      if (p.kernelParams == nullptr || *static_cast<const void* const*>(p.kernelParams[0]) != input) continue;
      if (found++ == 0) {
        *grid = p.gridDim;
        *block = p.blockDim;
      }
    }
    return found;
  }
  void launch(cudaStream_t stream) const { CUDA_CHECK(cudaGraphLaunch(exec_, stream)); }

 private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

class ReduceBench {
 public:
  ReduceBench(ReduceFn reduce, const DeviceInfo& d, std::uint64_t max_n, std::uint64_t max_partials,
              unsigned max_offset, Flush flush, bool poison_shared)
      : reduce_(reduce),
        poison_shared_(poison_shared),
        input_(kGuard + max_offset + max_n + kGuard),
        out_(kGuard + 1 + kGuard),
        partials0_(kGuard + max_partials + kGuard),
        partials1_(kGuard + max_partials + kGuard),
        ticket_(1),
        timer_(d.l2_bytes, flush) {
    CUDA_CHECK(cudaMemset(ticket_.get(), 0, sizeof(unsigned)));
    CUDA_CHECK(cudaDeviceSynchronize());  // a memset on the default stream: done before any launch on ours
  }
  // NaN in the whole input buffer, then the first n elements of the input `spec` at input(), offset floats past its
  // alignment: made on the GPU, bitwise what the host makes of it, so no copy of the input crosses the bus.
  void upload(const InputSpec& spec, std::uint64_t n, unsigned offset) {
    input_.poison(nullptr);
    make_input_on_device(spec.key, spec.exact_bits, input_.get() + kGuard + offset, n, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    n_ = n;
    offset_ = offset;
  }
  // The precision probe of size n at `offset`: NaN everywhere, zeros in [0, n), the probe's values scattered.
  void upload_probe(const ProbeInput& p, std::uint64_t n, unsigned offset) {
    input_.poison(nullptr);
    CUDA_CHECK(cudaMemset(input_.get() + kGuard + offset, 0, n * sizeof(float)));
    scatter(input_.get() + kGuard + offset, p.positions, p.values, nullptr);
    n_ = n;
    offset_ = offset;
  }
  const float* input() const { return input_.get() + kGuard + offset_; }  // where element 0 is
  struct Result {
    float value;
    FirstLaunch first;   // the shape of the first launch, as the stage reported it and the harness saw it
    std::string canary;  // the first poisoned word the launch changed but may not write ("" if none)
  };
  // Poisons the result, both partials buffers and the shared memory of every SM, captures what the stage enqueues
  // for one reduction of input(), checks the shape of the kernel that reads the input against what the stage
  // reported, runs the captured work and returns its result and that shape.
  Result run_checked(const Config& c) {
    const cudaStream_t s = timer_.stream();
    out_.poison(s);
    partials0_.poison(s);
    partials1_.poison(s);
    if (poison_shared_) poison_shared_memory(s);
    FirstLaunch reported{0, 0};
    const CapturedLaunch captured(s, [&] { reported = reduce_(input(), c.n, out(), launch(c), s); });
    ++launches_;
    const FirstLaunch first = seen_first_launch(captured, c, reported);
    captured.launch(s);
    const float value = read_out(s);
    return {value, first, changed_poison(c, first)};
  }
  // The canary: every poisoned word a launch of c (whose first kernel had first.grid blocks) may not write, still
  // poisoned: the NaN guards around the result and around the input, and the partial sums past those its grids write
  // (first.grid in the first buffer; in the second, the blocks of a launch over first.grid values). The first word
  // changed, named ("" if none). After a timed series it covers the last launch's writes, and every earlier launch's
  // outside what each one's poisoning refills.
  std::string changed_poison(const Config& c, const FirstLaunch& first) const {
    const std::size_t in0 = kGuard + offset_;
    return ladder::changed_poison(
        {{out_.get(), kGuard, 1, out_.count(), "the result (*out)"},
         {input_.get(), in0, n_, in0 + n_ + kGuard, "the input"},
         {partials0_.get(), kGuard, first.grid, partials0_.count(), "launch.partials[0]"},
         {partials1_.get(), kGuard, max_grid(first.grid, c.block, c.limit), partials1_.count(), "launch.partials[1]"}},
        canary_.get(), timer_.stream());
  }
  // Times the stage on input(). Every launch, warm-ups included, starts from a poisoned result and partial sums
  // (outside its interval); each launch's result is kept, and all of them are returned in *results.
  TimingStats time_stage(const Config& c, int warmup, int reps, std::vector<float>* results) {
    const ReduceLaunch l = launch(c);
    const float* in = input();
    const Kept<float> kept(warmup, reps);
    // Before each launch: the result and the partial sums this configuration can use, with their guards (not the
    // whole buffers, which a larger configuration sized: their memset would evict a --flush none input).
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
  // Waits for `stream` and returns *out.
  float read_out(cudaStream_t stream) const {
    CUDA_CHECK(cudaStreamSynchronize(stream));
    float result = 0;
    CUDA_CHECK(cudaMemcpy(&result, out(), sizeof(float), cudaMemcpyDeviceToHost));
    return result;
  }

 private:
  // The partials a stage sees start kGuard floats into their buffers, so that reading one before the first or past
  // the last finds NaN too.
  ReduceLaunch launch(const Config& c) const {
    return ReduceLaunch{c.block, c.limit, c.combine, {partials0_.get() + kGuard, partials1_.get() + kGuard},
                        ticket_.get()};
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
    const std::uint64_t most = max_grid(c.n, c.block, c.limit);
    if (grid.y != 1 || grid.z != 1 || block.y != 1 || block.z != 1 || seen.grid > most || seen.block > c.block) {
      throw StageFailure(fmt::format("{}: the kernel that reads the input was launched with {}x{}x{} blocks of "
                                     "{}x{}x{} threads; at most {} blocks (what its partial sums buffers hold) of "
                                     "at most {} threads, in x only",
                                     where, grid.x, grid.y, grid.z, block.x, block.y, block.z, most, c.block));
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
  DeviceBuffer<unsigned long long> canary_{kMaxPoisonSpans};  // changed_poison()'s answers
  GpuTimer timer_;
  std::uint64_t n_ = 0;  // the input's elements
  unsigned offset_ = 0;
  long long launches_ = 0;
};

}  // namespace ladder::reduce_run
