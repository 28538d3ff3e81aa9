// Timing on the GPU with CUDA events: warm-up runs, then repetitions each timed on its own, with the L2
// cache flushed before each one (L2Flush) unless asked not to. Each repetition is enqueued behind a stream
// hold (StreamHold), so the interval between its events holds only the GPU's work, never the host's time to
// submit it, with or without a flush (docs/method.md, "What the interval holds").
#pragma once

#include <cstddef>
#include <functional>
#include <memory>

#include <cuda_runtime.h>

#include "device.hpp"
#include "l2_flush.hpp"
#include "options.hpp"
#include "stats.hpp"
#include "stream_hold.hpp"

namespace ladder {

class GpuTimer {
 public:
  GpuTimer(const DeviceInfo& device, Flush flush);
  ~GpuTimer();
  GpuTimer(const GpuTimer&) = delete;
  GpuTimer& operator=(const GpuTimer&) = delete;

  cudaStream_t stream() const { return stream_; }

  using Work = std::function<void(cudaStream_t)>;

  // Runs work(stream) `warmup` times (at least once) untimed, then `reps` times, each between two events. Per repetition the
  // stream is held, then the flush, the start event, the work and the stop event are enqueued, then released:
  // the events bracket only the work. before_last, if given, is enqueued before the last repetition's flush
  // (outside the interval): the harness poisons the buffers there, so the last timed result can be checked.
  // The SM and memory clocks are read at the first and the last repetition.
  TimingStats time(const Work& work, int warmup, int reps, const Work& before_last = {});

  // Device memory the timer needs for a given device and flush setting (for the memory check).
  static std::size_t flush_bytes_for(const DeviceInfo& device, Flush flush);

 private:
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  std::unique_ptr<L2Flush> flush_;
  StreamHold hold_;
  bool holding_ = true;  // false once a hold has timed out
};

}  // namespace ladder
