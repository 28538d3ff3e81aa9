// An owning device allocation (cudaMalloc, so 256-byte aligned), freed when it goes out of scope.
#pragma once

#include <algorithm>
#include <cstddef>

#include <cuda_runtime.h>

#include "cuda_check.hpp"

namespace ladder {

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
  std::size_t count_ = 0;
};

}  // namespace ladder
