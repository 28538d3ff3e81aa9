// The CUDA runtime a stage's launcher calls, on the host, so a host run can go through the launcher itself and see
// the launches it makes: host_run.py rewrites each `kernel<<<grid, block, smem, stream>>>(args);` into
// `ladder_host::launch([&] { kernel(args); }, grid, block, smem, stream);`, which runs the launch's blocks one after
// another in the order the run asks for (Run::block_order), with exactly the dynamic shared memory the launch asked
// for: a block that reaches past it fails, naming the line. Memsets and copies act on the host's buffers.
#pragma once  // included after cuda_host.hpp, whose standard headers it uses

using dim3 = uint3;

struct CUstream_st;
using cudaStream_t = CUstream_st*;
enum cudaError_t { cudaSuccess = 0 };
enum cudaMemcpyKind { cudaMemcpyHostToHost, cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost, cudaMemcpyDeviceToDevice,
                      cudaMemcpyDefault };

inline cudaError_t cudaMemsetAsync(void* p, int value, std::size_t bytes, cudaStream_t = nullptr) {
  std::memset(p, value, bytes);
  return cudaSuccess;
}
inline cudaError_t cudaMemcpyAsync(void* to, const void* from, std::size_t bytes, cudaMemcpyKind,
                                   cudaStream_t = nullptr) {
  std::memmove(to, from, bytes);
  return cudaSuccess;
}
inline cudaError_t cudaMemset(void* p, int value, std::size_t bytes) { return cudaMemsetAsync(p, value, bytes); }
inline cudaError_t cudaMemcpy(void* to, const void* from, std::size_t bytes, cudaMemcpyKind kind) {
  return cudaMemcpyAsync(to, from, bytes, kind);
}
template <typename T>
cudaError_t cudaMalloc(T** p, std::size_t bytes) {
  *p = static_cast<T*>(std::malloc(bytes));
  return cudaSuccess;
}
inline cudaError_t cudaFree(void* p) {
  std::free(p);
  return cudaSuccess;
}
inline cudaError_t cudaGetLastError() { return cudaSuccess; }
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
inline cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
enum cudaStreamCaptureStatus { cudaStreamCaptureStatusNone, cudaStreamCaptureStatusActive,
                               cudaStreamCaptureStatusInvalidated };
// A host run is never captured into a graph: what a launcher does outside a capture (a timing loop's calls) is what
// it runs.
inline cudaError_t cudaStreamIsCapturing(cudaStream_t, cudaStreamCaptureStatus* status) {
  *status = cudaStreamCaptureStatusNone;
  return cudaSuccess;
}
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize, cudaFuncAttributePreferredSharedMemoryCarveout };
template <typename Kernel>
cudaError_t cudaFuncSetAttribute(Kernel, cudaFuncAttribute, int) {
  return cudaSuccess;
}
// The host run chooses the grid limit itself, so what a launcher asks of the occupancy API matters only there.
template <typename Kernel>
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, Kernel, int, std::size_t) {
  *blocks = 1;
  return cudaSuccess;
}
#define CUDA_CHECK(call) ((void)(call))
#define LADDER_CHECK_LAUNCH() ((void)0)

namespace ladder_host {

// One launch: its blocks in the run's order, each with `smem` bytes of dynamic shared memory.
inline void launch(std::function<void()> body, dim3 grid, dim3 block, std::size_t smem = 0, cudaStream_t = nullptr) {
  Run& r = run();
  const unsigned blocks = grid.x * grid.y * grid.z, threads = block.x * block.y * block.z;
  if (blocks == 0 || threads == 0 || threads > kMaxThreads)
    fail("launch %d asks for %u blocks of %u threads: a GPU refuses it", r.launches + 1, blocks, threads);
  r.grid = grid;
  r.block = block;
  r.shared.dynamic_bytes = smem;
  r.body = std::move(body);
  std::vector<unsigned> order(blocks);
  std::iota(order.begin(), order.end(), 0u);
  if (r.block_order == 1) std::reverse(order.begin(), order.end());
  if (r.block_order == 2) std::shuffle(order.begin(), order.end(), std::mt19937(1000003u * r.launches + blocks));
  for (unsigned b : order) run_block({b % grid.x, b / grid.x % grid.y, b / (grid.x * grid.y)});
  ++r.launches;
}

}  // namespace ladder_host
