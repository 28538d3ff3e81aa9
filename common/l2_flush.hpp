// The L2 flush run before each timed repetition (see docs/method.md).
#pragma once

#include <cstddef>

#include <cuda_runtime.h>

namespace ladder {

class L2Flush {
 public:
  L2Flush(std::size_t l2_bytes, bool clean);
  ~L2Flush();
  L2Flush(const L2Flush&) = delete;
  L2Flush& operator=(const L2Flush&) = delete;

  // Enqueues the flush on `stream`: overwrite 4x the L2 size, then (clean) read 2x the L2 size of other data.
  void run(cudaStream_t stream) const;

  // What it overwrites, what it then reads, and the device memory it holds, for an L2 of `l2_bytes`.
  static std::size_t write_bytes(std::size_t l2_bytes) { return 4 * l2_bytes; }
  static std::size_t read_bytes(std::size_t l2_bytes) { return 2 * l2_bytes; }
  static std::size_t device_bytes(std::size_t l2_bytes) {
    return write_bytes(l2_bytes) + read_bytes(l2_bytes) + sizeof(float4);
  }

 private:
  void* buffer_ = nullptr;
  std::size_t write_bytes_, read_bytes_;
  bool clean_;
};

}  // namespace ladder
