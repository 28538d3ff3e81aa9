// Timing on the GPU with CUDA events: warm-up runs, then repetitions each timed on its own, with the L2
// cache flushed before each one (L2Flush) unless asked not to. Each repetition is enqueued behind a stream
// hold (StreamHold), so the interval between its events holds only the GPU's work, never the host's time to
// submit it, with or without a flush (docs/method.md, "What the interval holds").
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "cuda_check.hpp"
#include "device.hpp"
#include "device_buffer.hpp"
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

  // What the harness enqueues around every launch, warm-ups and timed repetitions alike, outside the interval:
  // poison before the flush (the buffers the launch writes, so a launch that writes nothing cannot pass), keep
  // after the stop event (the launch's result, or a value computed from it on the device, such as a fingerprint
  // of C, into slot `launch`: warm-ups are slots 0..warmups(w)-1, the timed repetitions the slots after them), so
  // every launch is checked afterwards.
  struct EachLaunch {
    Work poison;
    std::function<void(cudaStream_t, int launch)> keep;
  };
  static int warmups(int warmup) { return warmup < 1 ? 1 : warmup; }

  // Runs work(stream) warmups(warmup) times untimed, then `reps` times, each between two events. Per repetition
  // the stream is held, then the poison, the flush, the start event, the work, the stop event and the keep are
  // enqueued, then released: the events bracket only the work. The SM and memory clocks are read at the first
  // and the last repetition.
  TimingStats time(const Work& work, int warmup, int reps, const EachLaunch& each = {});

  // Device memory the timer needs for a given device and flush setting (for the memory check).
  static std::size_t flush_bytes_for(const DeviceInfo& device, Flush flush);

 private:
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  std::unique_ptr<L2Flush> flush_;
  StreamHold hold_;
  bool holding_ = true;  // false once a hold has timed out
};

// One value per launch of a timed series (GpuTimer::EachLaunch::keep), kept on the device and read back once.
template <typename T>
class Kept {
 public:
  Kept(int warmup, int reps) : slots_(static_cast<std::size_t>(GpuTimer::warmups(warmup) + reps)) {}
  T* slot(int launch) const { return slots_.get() + launch; }
  int launches() const { return static_cast<int>(slots_.count()); }
  // A keep that copies the launch's result (at `value`, on the device) into its slot.
  std::function<void(cudaStream_t, int)> copy_of(const T* value) const {
    return [this, value](cudaStream_t s, int launch) {
      CUDA_CHECK(cudaMemcpyAsync(slot(launch), value, sizeof(T), cudaMemcpyDeviceToDevice, s));
    };
  }
  // Waits for `stream`, returns every launch's value.
  std::vector<T> read(cudaStream_t stream) const {
    CUDA_CHECK(cudaStreamSynchronize(stream));
    std::vector<T> host(slots_.count());
    CUDA_CHECK(cudaMemcpy(host.data(), slots_.get(), slots_.bytes(), cudaMemcpyDeviceToHost));
    return host;
  }
 private:
  DeviceBuffer<T> slots_;
};

inline std::string launch_name(int launch, int warmup, int reps) {
  const int w = GpuTimer::warmups(warmup);
  return launch < w ? "warm-up " + std::to_string(launch + 1) + " of " + std::to_string(w)
                    : "timed repetition " + std::to_string(launch - w + 1) + " of " + std::to_string(reps);
}

}  // namespace ladder
