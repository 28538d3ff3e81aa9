#include <algorithm>

#include "timer.hpp"

namespace ladder {
TimingStats summarize(std::vector<double> samples_ms) {
  if (samples_ms.empty()) return {};
  std::sort(samples_ms.begin(), samples_ms.end());
  const std::size_t n = samples_ms.size();
  const double median = n % 2 ? samples_ms[n / 2] : 0.5 * (samples_ms[n / 2 - 1] + samples_ms[n / 2]);
  return {median, samples_ms.front(), samples_ms.back(), {}, {}, 0};
}

GpuTimer::GpuTimer(std::size_t l2_bytes, Flush flush)
    : l2_bytes_(l2_bytes), flush_(flush), flush_buffer_(flush_bytes(l2_bytes, flush)) {
  CUDA_CHECK(cudaMemset(flush_buffer_.get(), 0, flush_buffer_.bytes()));
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  CUDA_CHECK(cudaEventCreate(&start_));
  CUDA_CHECK(cudaEventCreate(&stop_));
  CUDA_CHECK(cudaHostAlloc(&flags_, 2 * sizeof(int), cudaHostAllocMapped));
  CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_flags_), flags_, 0));
}

GpuTimer::~GpuTimer() {
  cudaEventDestroy(start_);
  cudaEventDestroy(stop_);
  cudaStreamDestroy(stream_);
  cudaFreeHost(flags_);
}

TimingStats GpuTimer::time(const Work& work, int warmup, int reps, const EachLaunch& each) {
  // At least one untimed round of everything a repetition enqueues: with lazy module loading (the CUDA default) a
  // kernel's first launch loads its module, which waits for the GPU, so behind the hold it would wait for the timeout.
  const int untimed = warmups(warmup);
  std::vector<double> samples;
  ClockSample first, last;
  int timeouts = 0;
  for (int i = 0; i < untimed + reps; ++i) {
    const bool timed = i >= untimed;
    if (i == untimed) CUDA_CHECK(cudaStreamSynchronize(stream_));  // the warm-ups done before the first hold
    if (timed && holding_) hold();
    if (each.poison) each.poison(stream_);
    flush(stream_);
    if (timed) CUDA_CHECK(cudaEventRecord(start_, stream_));
    work(stream_);
    if (timed) CUDA_CHECK(cudaEventRecord(stop_, stream_));
    if (each.keep) each.keep(stream_, i);
    if (!timed) continue;
    if (holding_) release();
    if (i == untimed) first = read_clocks();  // just after the release: while the GPU still runs all but a tiny rep
    if (i == untimed + reps - 1) last = read_clocks();
    CUDA_CHECK(cudaEventSynchronize(stop_));
    // A hold that timed out means launches wait for the GPU here (CUDA_LAUNCH_BLOCKING=1, a profiler replaying them):
    // every later hold would cost its full timeout too, so the timer stops holding, and counts each such repetition,
    // whose interval may hold host time (the row's timing_check fails, and ./ladder saves no such row).
    if (holding_ && timed_out()) holding_ = false;
    timeouts += holding_ ? 0 : 1;
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    samples.push_back(ms);
  }
  const TimingStats s = summarize(std::move(samples));
  return {s.median_ms, s.min_ms, s.max_ms, first, last, timeouts};
}
}  // namespace ladder
