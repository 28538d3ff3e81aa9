// What a launcher enqueued, seen by the harness rather than taken on the launcher's word: its work is captured
// into a CUDA graph, the graph's kernel nodes tell the grid and block of the kernel that reads the input, and
// launch() runs the captured graph. The checked launches run this way, so the error bound and the reported launch
// shape both rest on what was launched; the timed launches call the launcher directly (a graph launch would time
// differently), and their results are judged against the checked launch's.
#pragma once

#include <functional>

#include <cuda_runtime.h>

namespace ladder {

class CapturedLaunch {
 public:
  // Captures what enqueue() puts on `stream` (kernels, memsets, copies) without running it. A launcher must only
  // enqueue on `stream` (reduce_stage.hpp): work it does elsewhere is not in the graph. If enqueue() throws, the
  // capture is ended before the exception goes on.
  CapturedLaunch(cudaStream_t stream, const std::function<void()>& enqueue);
  ~CapturedLaunch();
  CapturedLaunch(const CapturedLaunch&) = delete;
  CapturedLaunch& operator=(const CapturedLaunch&) = delete;

  // The kernels whose first argument is the pointer `input`, and the grid and block of the first of them found.
  int kernels_reading(const void* input, dim3* grid, dim3* block) const;
  void launch(cudaStream_t stream) const;

 private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace ladder
