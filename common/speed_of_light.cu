// The speed of light of a sum on this GPU: what reading the same bytes costs when reading is all a kernel does.
#include <algorithm>
#include <cstdint>

#include "references.hpp"

namespace ladder {
namespace {
constexpr int kBlock = 512;
constexpr int kUnroll = 4;  // float4 loads issued per thread before the first is used

// Reads in[0, n) once: scalar loads up to the first 16-byte boundary and after the last, float4 loads in
// between, kUnroll of them in flight per thread. Each thread stores its sum (one coalesced store per thread,
// a few hundred KB in all), so no load can be dropped and the harness can check that every element was read.
__global__ void read_only(const float* __restrict__ in, std::size_t n, float* __restrict__ sums) {
  const std::size_t misalign = (reinterpret_cast<std::uintptr_t>(in) / sizeof(float)) % 4;
  const std::size_t head = misalign == 0 ? 0 : (n < 4 - misalign ? n : 4 - misalign);
  const std::size_t vecs = (n - head) / 4;
  const float4* body = reinterpret_cast<const float4*>(in + head);
  const std::size_t tid = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  float acc = 0.0f;
  std::size_t i = tid;
  for (; i + (kUnroll - 1) * stride < vecs; i += kUnroll * stride) {
    float4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = body[i + u * stride];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc += (v[u].x + v[u].y) + (v[u].z + v[u].w);
  }
  for (; i < vecs; i += stride) {
    const float4 v = body[i];
    acc += (v.x + v.y) + (v.z + v.w);
  }
  if (tid < head) acc += in[tid];
  const std::size_t tail = head + 4 * vecs;
  if (tid < n - tail) acc += in[tail + tid];
  sums[tid] = acc;
}

__global__ void empty_kernel() {}

// One block adds x[0, n) in double, each thread a strided chain, then a tree in shared memory: the same order on
// every launch, so the kept sums of a deterministic read are bitwise equal.
constexpr int kSumThreads = 1024;
__global__ void sum_in_double(const float* __restrict__ x, std::size_t n, double* __restrict__ out) {
  __shared__ double partial[kSumThreads];
  double acc = 0;
  for (std::size_t i = threadIdx.x; i < n; i += kSumThreads) acc += x[i];
  partial[threadIdx.x] = acc;
  __syncthreads();
  for (int width = kSumThreads / 2; width > 0; width /= 2) {
    if (threadIdx.x < width) partial[threadIdx.x] += partial[threadIdx.x + width];
    __syncthreads();
  }
  if (threadIdx.x == 0) *out = partial[0];
}
}  // namespace

SpeedOfLight::SpeedOfLight(int sm_count, std::size_t max_n)
    : grid_(sm_count * std::max(1, [] {
        int per_sm = 0;  // as many blocks as the occupancy API fits on the GPU
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, read_only, kBlock, 0));
        return per_sm;
      }())),
      sums_(threads()) {
  // The copy reference needs a second input-sized buffer; where that does not fit, the copy is not timed.
  if (cudaMalloc(&copy_, std::max<std::size_t>(max_n, 1) * sizeof(float)) != cudaSuccess) {
    (void)cudaGetLastError();
    copy_ = nullptr;
  }
}

SpeedOfLight::~SpeedOfLight() { cudaFree(copy_); }

std::size_t SpeedOfLight::threads() const { return static_cast<std::size_t>(grid_) * kBlock; }

void SpeedOfLight::read(const float* in, std::size_t n, cudaStream_t stream) {
  read_only<<<grid_, kBlock, 0, stream>>>(in, n, sums_.get());
  LADDER_CHECK_LAUNCH();
}

void SpeedOfLight::keep_sum(double* slot, cudaStream_t stream) const {
  sum_in_double<<<1, kSumThreads, 0, stream>>>(sums_.get(), threads(), slot);
  LADDER_CHECK_LAUNCH();
}

void SpeedOfLight::copy(const float* in, std::size_t n, cudaStream_t stream) {
  if (copy_ != nullptr) CUDA_CHECK(cudaMemcpyAsync(copy_, in, n * sizeof(float), cudaMemcpyDeviceToDevice, stream));
}

void SpeedOfLight::empty_launch(cudaStream_t stream) {
  empty_kernel<<<1, 32, 0, stream>>>();
  LADDER_CHECK_LAUNCH();
}
}  // namespace ladder
