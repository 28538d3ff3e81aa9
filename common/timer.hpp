// Timing on the GPU with CUDA events (docs/method.md, "What the interval holds"): warm-ups, then repetitions each timed
// on its own, the L2 flushed before each, each behind a stream hold so that the interval holds only the GPU's work.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "device_fill.hpp"
#include "options.hpp"

namespace ladder {
// The clocks at the start and the end of a timed series, from NVML (timer.cu; loaded at run time).
struct ClockSample {
  bool known = false;         // false where NVML is not there (no driver) or does not answer for this GPU
  unsigned sm_mhz = 0, mem_mhz = 0;
  std::uint64_t reasons = 0;  // NVML's clocks event (throttle) reasons, a bit mask
};
bool throttled(std::uint64_t reasons);  // held down during work: power cap, thermal or hardware slowdown
std::string reason_names(std::uint64_t reasons);  // joined with '+', or "none"
void open_clocks(int device);  // opens NVML on a thread of its own (it can take a while) while the input is made
ClockSample read_clocks();  // of the device open_clocks() opened (waiting for it); nothing known without it

struct TimingStats {
  double median_ms = 0, min_ms = 0, max_ms = 0;
  ClockSample clocks_start, clocks_end;  // at the first and the last timed repetition
  int hold_timeouts = 0;                 // repetitions not held to the end (a hold timed out; see GpuTimer::time)
};
TimingStats summarize(std::vector<double> samples_ms);  // median (of the middle two for an even count), min, max

// The L2 flush before each timed rep (timer.cu): overwrite 4x the L2, then (clean) read 2x the L2 of other data.
inline std::size_t l2_write_bytes(std::size_t l2_bytes) { return 4 * l2_bytes; }
inline std::size_t l2_read_bytes(std::size_t l2_bytes) { return 2 * l2_bytes; }

class GpuTimer {  // not copyable (its buffer is not)
 public:
  GpuTimer(std::size_t l2_bytes, Flush flush);
  ~GpuTimer();
  cudaStream_t stream() const { return stream_; }
  static std::size_t flush_bytes(std::size_t l2_bytes, Flush flush) {
    return flush == Flush::kNone ? 0 : l2_write_bytes(l2_bytes) + l2_read_bytes(l2_bytes) + sizeof(float4);
  }
  std::size_t flush_bytes() const { return flush_bytes(l2_bytes_, flush_); }  // what each repetition's flush moves
  static int warmups(int warmup) { return warmup < 1 ? 1 : warmup; }
  using Work = std::function<void(cudaStream_t)>;
  // Around every launch, outside the interval: poison before the flush (a launch that writes nothing cannot pass), keep
  // after the stop event (its result, or a fingerprint of it, into slot `launch`, warm-ups first): each one checked.
  struct EachLaunch {
    Work poison;
    std::function<void(cudaStream_t, int launch)> keep;
  };
  // Runs work(stream) warmups(warmup) times untimed, then `reps` times, each held: the poison, the flush, the start
  // event, the work, the stop event and the keep enqueued, then released. Clocks read at the first and last rep.
  TimingStats time(const Work& work, int warmup, int reps, const EachLaunch& each = {});

 private:
  void flush(cudaStream_t stream) const;
  // The stream hold (timer.cu; nvbench's blocking kernel): a one-thread kernel spins until time() releases it, while
  // the host enqueues the flush, the start event, the work and the stop event behind it.
  void hold();
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  std::size_t l2_bytes_;
  Flush flush_;
  DeviceBuffer<unsigned char> flush_buffer_;
  int* flags_ = nullptr;         // the hold's: [0] released, [1] timed out; mapped host memory
  int* device_flags_ = nullptr;  // the same memory as the GPU addresses it
  bool holding_ = true;  // false once a hold has timed out
};

// One value per launch of a timed series (GpuTimer::EachLaunch::keep), kept on the device and read back once.
template <typename T>
class Kept {
 public:
  Kept(int warmup, int reps) : slots_(static_cast<std::size_t>(GpuTimer::warmups(warmup) + reps)) {}
  T* slot(int launch) const { return slots_.get() + launch; }
  // A keep that copies the launch's result (at `value`, on the device) into its slot.
  std::function<void(cudaStream_t, int)> copy_of(const T* value) const {
    return [this, value](cudaStream_t s, int launch) {
      CUDA_CHECK(cudaMemcpyAsync(slot(launch), value, sizeof(T), cudaMemcpyDeviceToDevice, s));
    };
  }
  std::vector<T> read(cudaStream_t stream) const {
    CUDA_CHECK(cudaStreamSynchronize(stream));
    std::vector<T> host(slots_.count());
    CUDA_CHECK(cudaMemcpy(host.data(), slots_.get(), slots_.bytes(), cudaMemcpyDeviceToHost));
    return host;
  }

 private:
  DeviceBuffer<T> slots_;
};

// "warm-up 2 of 5", "timed repetition 7 of 50": launch `launch` of a series, as messages name it.
inline std::string launch_name(int launch, int warmup, int reps) {
  const int w = GpuTimer::warmups(warmup);
  return launch < w ? "warm-up " + std::to_string(launch + 1) + " of " + std::to_string(w)
                    : "timed repetition " + std::to_string(launch - w + 1) + " of " + std::to_string(reps);
}
}  // namespace ladder
