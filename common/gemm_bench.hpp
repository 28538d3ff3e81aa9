// The device side of a GEMM run (gemm_harness.cpp says what a run does): A, B and C of one shape and input
// mode between NaN guards, the probes' selection matrices, the checked, repeated and timed launches, and the canary
// over the guards after each. Internal to common/.
#pragma once

#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "device_buffer.hpp"
#include "device_fill.hpp"
#include "gemm_stage.hpp"
#include "harness.hpp"
#include "input.hpp"
#include "oracle.hpp"
#include "timer.hpp"

namespace ladder::gemm_run {

struct Shape {
  std::uint64_t m, n, k;
};

using GemmRun = std::function<void(const float* A, const float* B, float* C, cudaStream_t stream)>;

// Host and device copies of A, B and C for one shape and input mode, and the selection matrices of the probes.
class GemmBench {
 public:
  GemmBench(const Shape& s, InputMode mode, std::uint64_t seed, const std::string& option, bool poison_shared)
      : s_(s),
        mode_(mode),
        seed_(seed),
        host_a_(host_floats(s.m * s.k, option)),
        host_b_(host_floats(s.k * s.n, option)),
        host_c_(host_floats(s.m * s.n, option)),
        host_again_(host_floats(s.m * s.n, option)),
        a_(kGuard + s.m * s.k + kGuard),
        b_(kGuard + s.k * s.n + kGuard),
        c_(kGuard + s.m * s.n + kGuard),
        poison_shared_(poison_shared) {
    generate_input(seed, 1, mode, host_a_.get(), s.m * s.k);
    generate_input(seed, 2, mode, host_b_.get(), s.k * s.n);
    a_.poison(nullptr);  // the guards
    b_.poison(nullptr);
    CUDA_CHECK(cudaMemcpy(a(), host_a_.get(), s.m * s.k * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(b(), host_b_.get(), s.k * s.n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaDeviceSynchronize());  // a copy from pageable memory may still be in flight when it returns
  }

  // A, B, C, and the probes' selection matrices (K x N and M x K), each between its guards.
  static std::size_t device_bytes(const Shape& s) {
    return (2 * (s.m * s.k + s.k * s.n) + s.m * s.n + 10 * kGuard) * sizeof(float);
  }

  // Poisons C, runs, copies C back (it stays in host_c_) and checks it against the CPU oracle.
  GemmCheck run_checked(const GemmRun& run, cudaStream_t stream) {
    launch_into(run, a(), b(), host_c_.get(), stream);
    const DeviceBuffer<unsigned long long> print(1);
    fingerprint_on_device(c(), s_.m * s_.n, print.get(), stream);
    CUDA_CHECK(cudaMemcpyAsync(&checked_print_, print.get(), sizeof checked_print_, cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    return check_gemm(host_a_.get(), host_b_.get(), host_c_.get(), s_.m, s_.n, s_.k, mode_, seed_);
  }

  // Runs again and compares C with the last checked C bit for bit (every kernel here must give the same bits).
  GemmCheck run_again(const GemmRun& run, cudaStream_t stream) {
    launch_into(run, a(), b(), host_again_.get(), stream);
    return same_as_checked(host_again_.get());
  }

  // One probe: the full-mantissa operand of this bench times a selection matrix (or the other way round).
  GemmCheck run_probe(const GemmRun& run, GemmProbe probe, cudaStream_t stream) {
    const std::uint64_t rows = probe == GemmProbe::kA ? s_.k : s_.m, cols = probe == GemmProbe::kA ? s_.n : s_.k;
    if (!selection_ || selection_probe_ != probe) {
      selection_ = std::make_unique<DeviceBuffer<float>>(kGuard + rows * cols + kGuard);
      selection_->poison(stream);  // the guards; in stream order before the zeros and the scatter
      CUDA_CHECK(cudaMemsetAsync(selection(), 0, rows * cols * sizeof(float), stream));
      const auto ones = selection_ones(probe, s_.m, s_.n, s_.k);
      scatter(selection(), ones, std::vector<float>(ones.size(), 1.0f), stream);
      selection_probe_ = probe;
    }
    const float* A = probe == GemmProbe::kA ? a() : selection();
    const float* B = probe == GemmProbe::kA ? selection() : b();
    launch_into(run, A, B, host_again_.get(), stream);
    return check_gemm_probe(probe, probe == GemmProbe::kA ? host_a_.get() : host_b_.get(), host_again_.get(), s_.m,
                            s_.n, s_.k);
  }

  // Times run, C poisoned before every launch and its fingerprint kept after each; every fingerprint must be the
  // checked C's, and the C the last launch left must be the checked C bit for bit.
  TimingStats time(GpuTimer& timer, const GemmRun& run, int warmup, int reps, GemmCheck* after) {
    const Kept<unsigned long long> kept(warmup, reps);
    const TimingStats t = timer.time(
        [&](cudaStream_t st) { run(a(), b(), c(), st); }, warmup, reps,
        {[&](cudaStream_t st) { c_.poison(st); },
         [&](cudaStream_t st, int l) { fingerprint_on_device(c(), s_.m * s_.n, kept.slot(l), st); }});
    launches_ = kept.launches();
    const std::vector<unsigned long long> prints = kept.read(timer.stream());
    keep_canary(timer.stream());
    CUDA_CHECK(cudaMemcpy(host_again_.get(), c(), s_.m * s_.n * sizeof(float), cudaMemcpyDeviceToHost));
    *after = same_as_checked(host_again_.get());
    for (std::size_t l = 0; l < prints.size() && after->pass; ++l) {
      if (prints[l] == checked_print_) continue;
      after->pass = false;
      after->reason = fmt::format("{}: C's fingerprint {:016x} is not the checked C's {:016x}: a deterministic kernel "
                                  "must give the same bits every launch",
                                  launch_name(static_cast<int>(l), warmup, reps), prints[l], checked_print_);
    }
    return t;
  }
  int timed_launches() const { return launches_; }

  // The first change to the guards since the last call (see keep_canary), and forgets it: "" if none.
  std::string take_canary() { return std::exchange(canary_found_, ""); }

  std::uint64_t fingerprint_ab() const {
    return fingerprint(host_a_.get(), s_.m * s_.k) ^ (fingerprint(host_b_.get(), s_.k * s_.n) * 3);
  }

 private:
  void launch_into(const GemmRun& run, const float* A, const float* B, float* host, cudaStream_t stream) {
    c_.poison(stream);
    if (poison_shared_) poison_shared_memory(stream);
    run(A, B, c(), stream);
    keep_canary(stream);
    CUDA_CHECK(cudaMemcpy(host, c(), s_.m * s_.n * sizeof(float), cudaMemcpyDeviceToHost));
  }

  // The canary after a launch: keeps the first guard of A, B, C or the selection matrix that no longer holds its
  // NaN (C's are poisoned again before each launch, the others only when made).
  void keep_canary(cudaStream_t stream) {
    std::vector<Guarded> buffers = {{a_.get(), kGuard, s_.m * s_.k, a_.count(), "A"},
                                    {b_.get(), kGuard, s_.k * s_.n, b_.count(), "B"},
                                    {c_.get(), kGuard, s_.m * s_.n, c_.count(), "C"}};
    if (selection_) {
      buffers.push_back({selection_->get(), kGuard, selection_->count() - 2 * kGuard, selection_->count(),
                         "the probe's selection matrix"});
    }
    const std::string changed = changed_poison(buffers, canary_.get(), stream);  // waits for the stream
    if (canary_found_.empty()) canary_found_ = changed;
  }

  float* a() const { return a_.get() + kGuard; }
  float* b() const { return b_.get() + kGuard; }
  float* c() const { return c_.get() + kGuard; }
  float* selection() const { return selection_->get() + kGuard; }

  GemmCheck same_as_checked(const float* again) const {
    GemmCheck same;
    same.method = "bit for bit the C that was checked";
    same.elements = s_.m * s_.n;
    same.pass = std::memcmp(again, host_c_.get(), s_.m * s_.n * sizeof(float)) == 0;
    if (same.pass) return same;
    std::uint64_t e = 0;  // the first element that differs (memcmp saw one)
    while (std::memcmp(&again[e], &host_c_[e], sizeof(float)) == 0) ++e;
    same.reason = fmt::format("C[{}][{}] = {:.9g} where the checked launch gave {:.9g}: a deterministic kernel must "
                              "give the same bits",
                              e / s_.n, e % s_.n, again[e], host_c_[e]);
    return same;
  }

  Shape s_;
  InputMode mode_;
  std::uint64_t seed_;
  std::unique_ptr<float[]> host_a_, host_b_, host_c_, host_again_;
  DeviceBuffer<float> a_, b_, c_;
  std::unique_ptr<DeviceBuffer<float>> selection_;
  GemmProbe selection_probe_ = GemmProbe::kA;
  bool poison_shared_;                   // NaN in every SM's shared memory before each checked launch
  unsigned long long checked_print_ = 0;  // the fingerprint of the last checked C
  int launches_ = 0;                     // of the last timed series
  DeviceBuffer<unsigned long long> canary_{kMaxPoisonSpans};  // changed_poison()'s answers
  std::string canary_found_;             // the first changed guard not yet taken
};

}  // namespace ladder::gemm_run
