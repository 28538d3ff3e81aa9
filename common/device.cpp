#include "device.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>
#include <fmt/format.h>

#include "cuda_check.hpp"

namespace ladder {

std::string version_string(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

namespace {

constexpr int kMinMajor = 7, kMinMinor = 5;  // CUDA 13 builds for compute capability 7.5 and newer

std::string no_gpu_reason(cudaError_t err, int driver_version) {
  if (err == cudaErrorInsufficientDriver && driver_version == 0) return "no NVIDIA driver is loaded";
  if (err == cudaErrorInsufficientDriver) {
    return fmt::format("the NVIDIA driver (CUDA {}) is older than this program's CUDA runtime",
                       version_string(driver_version));
  }
  if (err == cudaErrorNoDevice) {
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    return visible ? fmt::format("no CUDA device is visible (CUDA_VISIBLE_DEVICES='{}')", visible)
                   : std::string("the driver reports no CUDA device");
  }
  return fmt::format("the CUDA runtime cannot start ({}: {})", cudaGetErrorName(err), cudaGetErrorString(err));
}

int attribute(cudaDeviceAttr attr, int device) {
  int value = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&value, attr, device));
  return value;
}

}  // namespace

DeviceLookup find_device(int index) {
  DeviceLookup out;
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);   // succeeds (reporting 0) even without a driver
  cudaRuntimeGetVersion(&runtime);
  int count = 0;                   // cudaGetDeviceCount leaves it untouched on error
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    cudaGetLastError();            // clear the sticky error state for the caller
    out.exit_status = 77;
    out.message = fmt::format("no usable GPU: {}. This program needs an NVIDIA GPU of compute capability {}.{} "
                              "or newer (CUDA {} runtime).",
                              err == cudaSuccess ? std::string("the driver reports no CUDA device")
                                                 : no_gpu_reason(err, driver),
                              kMinMajor, kMinMinor, version_string(runtime));
    return out;
  }
  if (index >= count) {
    out.exit_status = 2;
    out.message = fmt::format("--device {}: only {} GPU{} visible (indices 0 to {})", index, count,
                              count == 1 ? " is" : "s are", count - 1);
    return out;
  }
  CUDA_CHECK(cudaSetDevice(index));
  DeviceInfo& d = out.info;
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, index));
  d.index = index;
  d.name = prop.name;
  d.cc_major = prop.major;
  d.cc_minor = prop.minor;
  d.sm_count = prop.multiProcessorCount;
  d.l2_bytes = prop.l2CacheSize;
  d.mem_clock_khz = attribute(cudaDevAttrMemoryClockRate, index);
  d.bus_width_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, index);
  d.clock_khz = attribute(cudaDevAttrClockRate, index);
  d.total_bytes = prop.totalGlobalMem;
  d.driver_version = driver;
  d.runtime_version = runtime;
  if (d.cc_major * 10 + d.cc_minor < kMinMajor * 10 + kMinMinor) {
    out.exit_status = 77;
    out.message = fmt::format("no usable GPU: device {} ({}) has compute capability {}.{}; this program needs {}.{} "
                              "or newer",
                              index, d.name, d.cc_major, d.cc_minor, kMinMajor, kMinMinor);
    return out;
  }
  out.ok = true;
  return out;
}

int DeviceInfo::fp32_lanes_per_sm() const {
  switch (cc_major * 10 + cc_minor) {
    case 75:  // Turing
    case 80:  // A100
      return 64;
    case 86:
    case 87:
    case 89:
    case 90:  // H100, H200
      return 128;
    default:
      return cc_major >= 10 ? 128 : 0;  // Blackwell
  }
}

double DeviceInfo::fp32_peak_gflops() const {
  const int lanes = fp32_lanes_per_sm();
  return lanes > 0 ? 2.0 * lanes * sm_count * (clock_khz * 1e3) / 1e9 : NAN;
}

int list_devices(const char* program) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    auto lookup = find_device(0);
    fmt::print(stderr, "{}: {}\n", program, lookup.message);
    return 77;
  }
  for (int i = 0; i < count; ++i) {
    auto lookup = find_device(i);
    const DeviceInfo& d = lookup.info;
    fmt::print("{}: {}, compute capability {}.{}, {} SMs, {:.1f} MB L2, {:.1f} GB, {:.0f} GB/s theoretical{}\n", i,
               d.name, d.cc_major, d.cc_minor, d.sm_count, d.l2_bytes / 1e6, d.total_bytes / 1e9, d.peak_gbps(),
               lookup.ok ? "" : " (not usable: " + lookup.message + ")");
  }
  return 0;
}

}  // namespace ladder
