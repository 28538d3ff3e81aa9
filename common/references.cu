#include <algorithm>
#include <cstdint>
#include <limits>

#include <cub/device/device_reduce.cuh>

#include "references.hpp"

namespace ladder {
namespace {
// A 32-bit item count where it fits, as a caller with an int count would pass; 64-bit otherwise.
cudaError_t cub_sum(void* temp, std::size_t& bytes, const float* in, std::size_t n, float* out, cudaStream_t stream) {
  if (n <= static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    return cub::DeviceReduce::Sum(temp, bytes, in, out, static_cast<int>(n), stream);
  }
  return cub::DeviceReduce::Sum(temp, bytes, in, out, static_cast<std::int64_t>(n), stream);
}

__global__ void gemm_naive_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                                  int M, int N, int K) {
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[std::size_t(row) * K + k] * B[std::size_t(k) * N + col];
  C[std::size_t(row) * N + col] = acc;
}

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

std::size_t CubSum::temp_bytes(const std::vector<std::uint64_t>& sizes) {
  std::size_t most = 0;
  for (const std::uint64_t n : sizes) {
    std::size_t bytes = 0;
    CUDA_CHECK(cub_sum(nullptr, bytes, nullptr, n, nullptr, nullptr));
    most = std::max(most, bytes);
  }
  return most;
}

void CubSum::run(const float* in, std::size_t n, float* out, cudaStream_t stream) {
  std::size_t bytes = temp_.bytes();
  CUDA_CHECK(cub_sum(temp_.get(), bytes, in, n, out, stream));
}

void gemm_naive(const float* A, const float* B, float* C, int M, int N, int K, cudaStream_t stream) {
  const dim3 block(16, 16);
  const dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  gemm_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
  LADDER_CHECK_LAUNCH();
}

SpeedOfLight::SpeedOfLight(int sm_count, std::size_t max_n)
    : grid_(sm_count * std::max(1, [] {
        int per_sm = 0;  // as many blocks as the occupancy API fits on the GPU
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, read_only, kBlock, 0));
        return per_sm;
      }())),
      sums_(threads()) {
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
