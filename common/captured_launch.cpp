#include "captured_launch.hpp"

#include <vector>

#include "cuda_check.hpp"

namespace ladder {

CapturedLaunch::CapturedLaunch(cudaStream_t stream, const std::function<void()>& enqueue) {
  // Relaxed, as verified on a GPU with every stage: a first launch may load its module (lazy loading) inside the
  // capture. The stage's contract (reduce_stage.hpp) is to enqueue only on `stream`.
  CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed));
  try {
    enqueue();
  } catch (...) {  // end the capture, so that the stream is usable for whatever reports the error
    cudaGraph_t partial = nullptr;
    if (cudaStreamEndCapture(stream, &partial) == cudaSuccess && partial != nullptr) cudaGraphDestroy(partial);
    (void)cudaGetLastError();
    throw;
  }
  CUDA_CHECK(cudaStreamEndCapture(stream, &graph_));
  CUDA_CHECK(cudaGraphInstantiate(&exec_, graph_, 0));
}

CapturedLaunch::~CapturedLaunch() {
  cudaGraphExecDestroy(exec_);
  cudaGraphDestroy(graph_);
}

int CapturedLaunch::kernels_reading(const void* input, dim3* grid, dim3* block) const {
  std::size_t count = 0;
  CUDA_CHECK(cudaGraphGetNodes(graph_, nullptr, &count));
  std::vector<cudaGraphNode_t> nodes(count);
  CUDA_CHECK(cudaGraphGetNodes(graph_, nodes.data(), &count));
  int found = 0;
  for (auto node : nodes) {
    cudaGraphNodeType type;
    CUDA_CHECK(cudaGraphNodeGetType(node, &type));
    if (type != cudaGraphNodeTypeKernel) continue;
    cudaKernelNodeParams p{};
    CUDA_CHECK(cudaGraphKernelNodeGetParams(node, &p));
    // Every kernel of a stage takes a pointer first (reduce_stage.hpp): the input, or the partial sums it reduces.
    if (p.kernelParams == nullptr || *static_cast<const void* const*>(p.kernelParams[0]) != input) continue;
    if (found++ == 0) {
      *grid = p.gridDim;
      *block = p.blockDim;
    }
  }
  return found;
}

void CapturedLaunch::launch(cudaStream_t stream) const { CUDA_CHECK(cudaGraphLaunch(exec_, stream)); }

}  // namespace ladder
