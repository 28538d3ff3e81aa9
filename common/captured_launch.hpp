// What a launcher enqueued, seen by the harness rather than taken on the launcher's word: its work is captured
// into a CUDA graph, the graph's kernel nodes tell the grid and block of the kernel that reads the input, and
// launch() then runs exactly what was captured. The error bound and the reported launch shape both rest on it.
#pragma once

#include <functional>

#include <cuda_runtime.h>

namespace ladder {

class CapturedLaunch {
 public:
  // Captures enqueue(stream) (every kernel, memset and copy it puts on `stream`) without running it.
  CapturedLaunch(cudaStream_t stream, const std::function<void()>& enqueue);
  ~CapturedLaunch();
  CapturedLaunch(const CapturedLaunch&) = delete;
  CapturedLaunch& operator=(const CapturedLaunch&) = delete;

  // The kernels whose first argument is `input`, and the grid and block (x) of the first of them found.
  int kernels_reading(const void* input, dim3* grid, dim3* block) const;
  void launch(cudaStream_t stream) const;

 private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace ladder
