#include "timer.hpp"

#include <vector>

#include "cuda_check.hpp"

namespace ladder {

std::size_t GpuTimer::flush_bytes_for(const DeviceInfo& device, Flush flush) {
  return flush == Flush::kNone ? 0 : L2Flush::device_bytes(static_cast<std::size_t>(device.l2_bytes));
}

GpuTimer::GpuTimer(const DeviceInfo& device, Flush flush) {
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  CUDA_CHECK(cudaEventCreate(&start_));
  CUDA_CHECK(cudaEventCreate(&stop_));
  if (flush != Flush::kNone) {
    flush_ = std::make_unique<L2Flush>(static_cast<std::size_t>(device.l2_bytes), flush == Flush::kClean);
  }
}

GpuTimer::~GpuTimer() {
  cudaEventDestroy(start_);
  cudaEventDestroy(stop_);
  cudaStreamDestroy(stream_);
}

TimingStats GpuTimer::time(const std::function<void(cudaStream_t)>& work, int warmup, int reps) {
  for (int i = 0; i < warmup; ++i) work(stream_);
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(reps));
  for (int i = 0; i < reps; ++i) {
    if (flush_) flush_->run(stream_);
    CUDA_CHECK(cudaEventRecord(start_, stream_));
    work(stream_);
    CUDA_CHECK(cudaEventRecord(stop_, stream_));
    CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    samples.push_back(ms);
  }
  return summarize(std::move(samples));
}

}  // namespace ladder
