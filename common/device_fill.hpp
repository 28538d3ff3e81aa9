// Device memory: an owning buffer, and the harness's work on the GPU: inputs, probes, NaN fills, fingerprints, guards.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <cuda_runtime.h>

#include "cuda_check.hpp"

namespace ladder {
// An owning device allocation (cudaMalloc, so 256-byte aligned), freed when it goes out of scope.
template <typename T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    CUDA_CHECK(cudaMalloc(&ptr_, std::max<std::size_t>(count, 1) * sizeof(T)));
  }
  ~DeviceBuffer() { cudaFree(ptr_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  T* get() const { return ptr_; }
  std::size_t count() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }
  // Fills every byte with 0xFF: as floats that is NaN, so a value the kernel never wrote cannot pass a check.
  void poison(cudaStream_t stream) const { CUDA_CHECK(cudaMemsetAsync(ptr_, 0xFF, bytes(), stream)); }

 private:
  T* ptr_ = nullptr;
  std::size_t count_;
};

// out[0..count) = elements 0..count-1 of the input (key, exact_bits) (input.hpp), bitwise what the host makes of it.
void make_input_on_device(std::uint64_t key, unsigned exact_bits, float* out, std::size_t count, cudaStream_t stream);
// dst[at[i]] = values[i] for every i, on `stream`, and waits for it.
void scatter(float* dst, const std::vector<std::uint64_t>& at, const std::vector<float>& values, cudaStream_t stream);
// Fills every SM's shared memory with NaN on `stream` (twice as many blocks as SMs, each with the most shared memory
// a block may have): a kernel that reads a shared slot none of its threads wrote reads NaN, not an earlier launch's.
void poison_shared_memory(cudaStream_t stream);
// *out = fingerprint(x, n) (input.hpp), on `stream`: two arrays that differ anywhere differ in it except with
// probability about 2^-64. device_fingerprint() returns it, made on the default stream and waited for.
void fingerprint_on_device(const float* x, std::size_t n, unsigned long long* out, cudaStream_t stream);
std::uint64_t device_fingerprint(const float* x, std::size_t n);
// NaN floats before and after each buffer a launch touches (256 bytes: the buffer keeps its alignment): a read past
// either end adds a NaN, which never passes a check; a write there changes the poison, which the canary sees.
constexpr std::size_t kGuard = 64;

struct PoisonSpan {  // device memory p[begin, end) that must still hold the poison (all bits set)
  const float* p;
  std::size_t begin, end;
};
constexpr std::size_t kMaxPoisonSpans = 8;
// For each span (at most kMaxPoisonSpans), the index of its first word that no longer holds the poison, or its end
// where every one does: one kernel scans them all. Runs on `stream` and waits for it.
std::vector<unsigned long long> first_unpoisoned(const std::vector<PoisonSpan>& spans, cudaStream_t stream);
}  // namespace ladder
