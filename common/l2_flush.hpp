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

  std::size_t bytes() const { return write_bytes_ + read_bytes_; }

 private:
  void* buffer_ = nullptr;
  std::size_t write_bytes_, read_bytes_;
  bool clean_;
};

}  // namespace ladder
