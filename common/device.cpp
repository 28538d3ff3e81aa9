// The GPU the program runs on: finding it, what it is, and what it can stream and compute.
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "harness.hpp"

namespace ladder {
namespace {
constexpr int kMinMajor = 7, kMinMinor = 5;  // CUDA 13 builds for compute capability 7.5 and newer

std::string no_gpu_reason(cudaError_t err, int driver_version) {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (err == cudaErrorNoDevice && visible) {
    return fmt::format("no CUDA device is visible (CUDA_VISIBLE_DEVICES='{}')", visible);
  }
  if (err == cudaSuccess || err == cudaErrorNoDevice) return "the driver reports no CUDA device";
  if (err == cudaErrorInsufficientDriver && driver_version == 0) return "no NVIDIA driver is loaded";
  if (err == cudaErrorInsufficientDriver) {
    return fmt::format("the NVIDIA driver (CUDA {}) is older than this program's CUDA runtime",
                       version_string(driver_version));
  }
  return fmt::format("the CUDA runtime cannot start ({}: {})", cudaGetErrorName(err), cudaGetErrorString(err));
}

int attribute(cudaDeviceAttr attr, int device) {
  int value = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&value, attr, device));
  return value;
}
}  // namespace

std::string version_string(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

DeviceLookup find_device(int index) {
  int driver = 0, runtime = 0, count = 0;  // cudaGetDeviceCount leaves count untouched on error
  cudaDriverGetVersion(&driver);           // succeeds (reporting 0) even without a driver
  cudaRuntimeGetVersion(&runtime);
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    cudaGetLastError();  // clear the sticky error state for the caller
    return {77, fmt::format("no usable GPU: {}. This program needs an NVIDIA GPU of compute capability {}.{} or "
                                   "newer (CUDA {} runtime).",
                                   no_gpu_reason(err, driver), kMinMajor, kMinMinor, version_string(runtime)), {}};
  }
  if (index >= count) {
    return {2, fmt::format("--device {}: only {} GPU{} visible (indices 0 to {})", index, count,
                                  count == 1 ? " is" : "s are", count - 1), {}};
  }
  CUDA_CHECK(cudaSetDevice(index));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, index));
  const DeviceInfo d{index, prop.name, prop.major, prop.minor, prop.multiProcessorCount,
                     static_cast<std::size_t>(prop.l2CacheSize), attribute(cudaDevAttrMemoryClockRate, index),
                     attribute(cudaDevAttrGlobalMemoryBusWidth, index), attribute(cudaDevAttrClockRate, index),
                     prop.totalGlobalMem, driver, runtime};
  if (d.cc_major * 10 + d.cc_minor < kMinMajor * 10 + kMinMinor) {
    return {77, fmt::format("no usable GPU: device {} ({}) has compute capability {}.{}; this program needs "
                                   "{}.{} or newer", index, d.name, d.cc_major, d.cc_minor, kMinMajor, kMinMinor), d};
  }
  return {0, "", d};
}

int DeviceInfo::fp32_lanes_per_sm() const {
  const int cc = cc_major * 10 + cc_minor;
  if (cc == 75 || cc == 80) return 64;                                              // Turing, A100
  if (cc == 86 || cc == 87 || cc == 89 || cc == 90 || cc_major >= 10) return 128;  // 9.0: H100, H200; Blackwell
  return 0;
}

double DeviceInfo::fp32_peak_gflops() const {
  const int lanes = fp32_lanes_per_sm();
  return lanes > 0 ? 2.0 * lanes * sm_count * (clock_khz * 1e3) / 1e9 : NAN;
}

int list_devices(const char* program) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    fmt::print(stderr, "{}: {}\n", program, find_device(0).message);
    return 77;
  }
  for (int i = 0; i < count; ++i) {
    const DeviceLookup lookup = find_device(i);
    const DeviceInfo& d = lookup.info;
    fmt::print("{}: {}, compute capability {}.{}, {} SMs, {:.1f} MB L2, {:.1f} GB, {:.0f} GB/s theoretical{}\n", i,
               d.name, d.cc_major, d.cc_minor, d.sm_count, d.l2_bytes / 1e6, d.total_bytes / 1e9, d.peak_gbps(),
               lookup.exit_status == 0 ? "" : " (not usable: " + lookup.message + ")");
  }
  return 0;
}
}  // namespace ladder
