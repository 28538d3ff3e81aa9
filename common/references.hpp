// The references the stages are timed against in the same run: CUB's device-wide sum and the speed of light for the
// reduce stages; for the GEMM a naive kernel, the baseline that shows what tiling buys (cuBLAS: gemm_harness.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <cuda_runtime.h>

#include "device_fill.hpp"

namespace ladder {
// cub::DeviceReduce::Sum, its temporary storage (room for every size in the list) allocated outside any timed region.
class CubSum {
 public:
  explicit CubSum(const std::vector<std::uint64_t>& sizes) : temp_(temp_bytes(sizes)) {}
  void run(const float* in, std::size_t n, float* out, cudaStream_t stream);
  static std::size_t temp_bytes(const std::vector<std::uint64_t>& sizes);

 private:
  DeviceBuffer<unsigned char> temp_;
};

// The speed of light of a sum: a kernel that only reads the same n floats and a device-to-device copy of them
// (references, not ceilings); at small n, an empty launch and a 4-byte memset (the harness times it) give the floor.
class SpeedOfLight {
 public:
  SpeedOfLight(int sm_count, std::size_t max_n);  // and, if it fits, a copy destination of max_n floats
  ~SpeedOfLight();
  void read(const float* in, std::size_t n, cudaStream_t stream);
  void copy(const float* in, std::size_t n, cudaStream_t stream);
  void empty_launch(cudaStream_t stream);
  void poison_sums(cudaStream_t stream) { sums_.poison(stream); }  // a read that writes no sum cannot pass
  // *slot = the per-thread sums of the last read added in double, in a fixed order (one block), on `stream`.
  void keep_sum(double* slot, cudaStream_t stream) const;
  int grid() const { return grid_; }
  std::size_t threads() const;
  bool has_copy() const { return copy_ != nullptr; }  // false where a second input-sized buffer did not fit
  // Device memory it needs: the sums, up to 2048 threads per SM (the copy buffer is allocated if it fits).
  static std::size_t bytes(int sm_count) { return std::size_t{2048} * sm_count * sizeof(float) + 256; }

 private:
  int grid_;
  DeviceBuffer<float> sums_;
  float* copy_ = nullptr;
};

// The naive GEMM: one thread per element of C (threadIdx.x along a row of C), every operand read from global memory.
void gemm_naive(const float* A, const float* B, float* C, int M, int N, int K, cudaStream_t stream);
}  // namespace ladder
