// Timing on the GPU with CUDA events: warm-up runs, then repetitions each timed on its own, with the L2
// cache flushed before each one (L2Flush) unless asked not to.
#pragma once

#include <cstddef>
#include <functional>

#include <cuda_runtime.h>

#include <memory>

#include "device.hpp"
#include "l2_flush.hpp"
#include "options.hpp"
#include "stats.hpp"

namespace ladder {

class GpuTimer {
 public:
  GpuTimer(const DeviceInfo& device, Flush flush);
  ~GpuTimer();
  GpuTimer(const GpuTimer&) = delete;
  GpuTimer& operator=(const GpuTimer&) = delete;

  cudaStream_t stream() const { return stream_; }

  // Runs work(stream) `warmup` times untimed, then `reps` times, each between two events. The events
  // bracket only the work: the flush is enqueued before the start event.
  TimingStats time(const std::function<void(cudaStream_t)>& work, int warmup, int reps);

  // Device memory the timer needs for a given device and flush setting (for the memory check).
  static std::size_t flush_bytes_for(const DeviceInfo& device, Flush flush);

 private:
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  std::unique_ptr<L2Flush> flush_;
};

}  // namespace ladder
