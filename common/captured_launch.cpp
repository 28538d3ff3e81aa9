#include "captured_launch.hpp"

#include <vector>

#include "cuda_check.hpp"

namespace ladder {

CapturedLaunch::CapturedLaunch(cudaStream_t stream, const std::function<void()>& enqueue) {
  // Relaxed: the launcher may call what a capture in the global mode refuses (cudaGetLastError is fine either way).
  CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed));
  enqueue();
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
