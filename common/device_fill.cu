#include <algorithm>
#include <stdexcept>

#include "device_fill.hpp"
#include "input.hpp"

namespace ladder {
namespace {
// The grid-stride loops below: each thread starts at its index in the grid and steps by the grid's threads.
__device__ std::size_t thread_index() { return blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; }
__device__ std::size_t grid_threads() { return std::size_t{gridDim.x} * blockDim.x; }

unsigned blocks_for(std::size_t count, std::size_t most) {  // of 256 threads, at least one
  return static_cast<unsigned>(std::clamp<std::size_t>((count + 255) / 256, 1, most));
}

__global__ void scatter_kernel(float* __restrict__ dst, const std::uint64_t* __restrict__ at,
                               const float* __restrict__ values, std::size_t count) {
  for (std::size_t i = thread_index(); i < count; i += grid_threads()) dst[at[i]] = values[i];
}

// Writes every word of the block's shared memory; volatile, so no store is dropped as never read.
__global__ void nan_shared_kernel(unsigned words) {
  extern __shared__ unsigned smem_words[];
  volatile unsigned* words_of_block = smem_words;
  for (unsigned i = threadIdx.x; i < words; i += blockDim.x) words_of_block[i] = 0xFFFFFFFFu;
}

__global__ void input_kernel(float* __restrict__ out, std::size_t count, std::uint64_t key, unsigned exact_bits) {
  for (std::size_t i = thread_index(); i < count; i += grid_threads()) out[i] = input_value(key, i, exact_bits);
}

__global__ void fingerprint_kernel(const float* __restrict__ x, std::size_t n, unsigned long long* out) {
  unsigned long long h = 0;
  for (std::size_t i = thread_index(); i < n; i += grid_threads()) h += fingerprint_term(i, __float_as_uint(x[i]));
  for (int offset = 16; offset > 0; offset /= 2) h += __shfl_down_sync(0xffffffffu, h, offset);
  if (threadIdx.x % 32 == 0) atomicAdd(out, h);  // a sum modulo 2^64: the same whatever the order
}

struct PoisonSpans {
  PoisonSpan span[kMaxPoisonSpans];
};

// blockIdx.y picks the span; its blocks stride over it and keep the smallest index of a changed word.
__global__ void first_unpoisoned_kernel(PoisonSpans spans, unsigned long long* first) {
  const PoisonSpan s = spans.span[blockIdx.y];
  const auto* words = reinterpret_cast<const unsigned*>(s.p);
  for (std::size_t i = s.begin + thread_index(); i < s.end; i += grid_threads()) {
    if (words[i] != 0xFFFFFFFFu) atomicMin(&first[blockIdx.y], static_cast<unsigned long long>(i));
  }
}
}  // namespace

void make_input_on_device(std::uint64_t key, unsigned exact_bits, float* out, std::size_t count, cudaStream_t stream) {
  input_kernel<<<blocks_for(count, 4096), 256, 0, stream>>>(out, count, key, exact_bits);
  LADDER_CHECK_LAUNCH();
}

void scatter(float* dst, const std::vector<std::uint64_t>& at, const std::vector<float>& values, cudaStream_t stream) {
  if (at.empty()) return;
  DeviceBuffer<std::uint64_t> d_at(at.size());
  DeviceBuffer<float> d_values(values.size());
  CUDA_CHECK(cudaMemcpyAsync(d_at.get(), at.data(), d_at.bytes(), cudaMemcpyHostToDevice, stream));
  CUDA_CHECK(cudaMemcpyAsync(d_values.get(), values.data(), d_values.bytes(), cudaMemcpyHostToDevice, stream));
  scatter_kernel<<<blocks_for(at.size(), 1024), 256, 0, stream>>>(dst, d_at.get(), d_values.get(), at.size());
  LADDER_CHECK_LAUNCH();
  CUDA_CHECK(cudaStreamSynchronize(stream));  // before the buffers above are freed
}

void poison_shared_memory(cudaStream_t stream) {
  int device = 0, bytes = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CUDA_CHECK(cudaFuncSetAttribute(nan_shared_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  nan_shared_kernel<<<2 * sms, 1024, static_cast<std::size_t>(bytes), stream>>>(static_cast<unsigned>(bytes) / 4);
  LADDER_CHECK_LAUNCH();
}

void fingerprint_on_device(const float* x, std::size_t n, unsigned long long* out, cudaStream_t stream) {
  CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof *out, stream));
  fingerprint_kernel<<<blocks_for(n, 1024), 256, 0, stream>>>(x, n, out);
  LADDER_CHECK_LAUNCH();
}

std::uint64_t device_fingerprint(const float* x, std::size_t n) {
  unsigned long long on_device = 0;
  const DeviceBuffer<unsigned long long> print(1);
  fingerprint_on_device(x, n, print.get(), nullptr);
  CUDA_CHECK(cudaMemcpy(&on_device, print.get(), sizeof on_device, cudaMemcpyDeviceToHost));
  return on_device;
}

std::vector<unsigned long long> first_unpoisoned(const std::vector<PoisonSpan>& spans, cudaStream_t stream) {
  if (spans.size() > kMaxPoisonSpans) throw std::logic_error("first_unpoisoned(): more spans than one scan covers");
  static const auto* answers = new DeviceBuffer<unsigned long long>(kMaxPoisonSpans);  // for the whole run
  PoisonSpans all{};
  std::vector<unsigned long long> found(spans.size());
  std::size_t longest = 1;
  for (std::size_t k = 0; k < spans.size(); ++k) {
    all.span[k] = spans[k];
    found[k] = spans[k].end;
    longest = std::max(longest, spans[k].end > spans[k].begin ? spans[k].end - spans[k].begin : 0);
  }
  const std::size_t bytes = spans.size() * sizeof(unsigned long long);
  CUDA_CHECK(cudaMemcpyAsync(answers->get(), found.data(), bytes, cudaMemcpyHostToDevice, stream));
  const dim3 grid(blocks_for(longest, 256), static_cast<unsigned>(spans.size()));
  first_unpoisoned_kernel<<<grid, 256, 0, stream>>>(all, answers->get());
  LADDER_CHECK_LAUNCH();
  CUDA_CHECK(cudaMemcpyAsync(found.data(), answers->get(), bytes, cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  return found;
}
}  // namespace ladder
