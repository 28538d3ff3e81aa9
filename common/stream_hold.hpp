// Holding a stream while work is enqueued behind it, so that the events around that work time the GPU alone.
//
// Without it, the start event is recorded on an idle GPU as soon as the host enqueues it, and the interval
// to the stop event then also holds the host's time to submit the launches that follow (microseconds, with
// jitter). hold() enqueues a one-thread kernel that spins until release(); while it spins, the host enqueues
// the flush, the start event, the work and the stop event, so when it ends the GPU finds all of them queued.
// This is nvbench's blocking kernel (nvbench/blocking_kernel.cuh), written here in a few lines because the
// project takes no dependency beyond the CUDA Toolkit, CLI11 and fmt.
#pragma once

#include <cuda_runtime.h>

namespace ladder {

class StreamHold {
 public:
  StreamHold();
  ~StreamHold();
  StreamHold(const StreamHold&) = delete;
  StreamHold& operator=(const StreamHold&) = delete;

  void hold(cudaStream_t stream);  // enqueues the spinning kernel
  void release();                  // lets it end
  // Whether the last hold ended by its timeout (a second) instead of release(): the host then took too long
  // to enqueue the work, and the interval may hold host time after all.
  bool timed_out() const;

 private:
  int* flags_ = nullptr;         // [0]: released, [1]: timed out; mapped host memory
  int* device_flags_ = nullptr;  // the same memory as the GPU addresses it
};

}  // namespace ladder
