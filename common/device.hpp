// The GPU the stage runs on: what it is, and what it can stream.
#pragma once

#include <cstdint>
#include <string>

namespace ladder {

struct DeviceInfo {
  int index = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int l2_bytes = 0;
  int mem_clock_khz = 0;     // cudaDevAttrMemoryClockRate (CUDA 13 removed cudaDeviceProp::memoryClockRate)
  int bus_width_bits = 0;    // cudaDevAttrGlobalMemoryBusWidth
  int clock_khz = 0;         // cudaDevAttrClockRate: the SM clock the FP32 peak is computed at
  std::uint64_t total_bytes = 0;
  int driver_version = 0;    // e.g. 13000 for 13.0
  int runtime_version = 0;

  // Theoretical DRAM bandwidth from the attributes: 2 (double data rate) x clock x bus width / 8, in GB/s.
  double peak_gbps() const { return 2.0 * mem_clock_khz * 1e3 * (bus_width_bits / 8.0) / 1e9; }

  // FP32 fused multiply-adds one SM completes per clock, by compute capability (CUDA C++ Programming Guide,
  // "Arithmetic Instructions", throughput of 32-bit floating-point multiply-add); 0 where the guide gives none.
  int fp32_lanes_per_sm() const;

  // Theoretical FP32 FFMA throughput: SMs x lanes x 2 FLOP x clock, in GFLOP/s (NaN if the lanes are unknown).
  double fp32_peak_gflops() const;
};

// The outcome of looking for a GPU: the device, or the exit status and one line that says why not.
struct DeviceLookup {
  bool ok = false;
  int exit_status = 0;  // 77: no usable GPU; 2: a bad --device
  std::string message;
  DeviceInfo info;
};

// Finds device `index`, makes it current and reads its attributes. Never exits.
DeviceLookup find_device(int index);

// Lists the visible devices on stdout; returns 0, or 77 (with a message on stderr) if there is none.
int list_devices(const char* program);

// "13.0" from 13000.
std::string version_string(int cuda_version);

}  // namespace ladder
