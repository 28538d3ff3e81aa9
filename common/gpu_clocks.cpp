// The clocks a measurement ran at, and whether the GPU throttled, from NVML (docs/method.md, "Clocks").
#include <dlfcn.h>

#include <future>

#include "timer.hpp"

namespace ladder {
namespace {
// The few NVML declarations used here, as the NVML API reference gives them. The library is opened at run time rather
// than linked: linking would make every stage binary fail to start where the driver (and so libnvidia-ml.so.1) is
// missing, and some CUDA Toolkit installs ship no nvml.h to compile against.
using NvmlDevice = struct NvmlDeviceOpaque*;
using NvmlReturn = int;  // nvmlReturn_t; 0 is NVML_SUCCESS
constexpr int kNvmlClockSm = 1, kNvmlClockMem = 2;  // NVML_CLOCK_SM, NVML_CLOCK_MEM

// nvmlClocksEventReason* bits (formerly nvmlClocksThrottleReason*), and whether each holds the clocks down.
struct Reason {
  std::uint64_t bit;
  const char* name;
  bool throttle;
};
constexpr Reason kReasons[] = {
    {0x1, "gpu_idle", false},   {0x2, "applications_clocks", false}, {0x4, "sw_power_cap", true},
    {0x8, "hw_slowdown", true}, {0x10, "sync_boost", false},         {0x20, "sw_thermal", true},
    {0x40, "hw_thermal", true}, {0x80, "hw_power_brake", true},      {0x100, "display_clocks", false},
};

struct Nvml {
  NvmlReturn (*clock)(NvmlDevice, int, unsigned*) = nullptr;
  NvmlReturn (*reasons)(NvmlDevice, unsigned long long*) = nullptr;
  NvmlDevice device = nullptr;  // null: nothing can be read
};

// Loads NVML and finds the CUDA device `index` in it by its PCI bus id.
Nvml open_nvml(int index) {
  Nvml n;
  char bus_id[32] = {};
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);  // never closed: the process keeps using it
  if (lib == nullptr || cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, index) != cudaSuccess) return n;
  const auto init = reinterpret_cast<NvmlReturn (*)()>(dlsym(lib, "nvmlInit_v2"));
  const auto by_pci =
      reinterpret_cast<NvmlReturn (*)(const char*, NvmlDevice*)>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
  n.clock = reinterpret_cast<decltype(n.clock)>(dlsym(lib, "nvmlDeviceGetClockInfo"));
  n.reasons = reinterpret_cast<decltype(n.reasons)>(dlsym(lib, "nvmlDeviceGetCurrentClocksEventReasons"));
  if (n.reasons == nullptr) {
    n.reasons = reinterpret_cast<decltype(n.reasons)>(dlsym(lib, "nvmlDeviceGetCurrentClocksThrottleReasons"));
  }
  NvmlDevice device = nullptr;
  if (init && by_pci && n.clock && n.reasons && init() == 0 && by_pci(bus_id, &device) == 0) n.device = device;
  return n;
}

std::shared_future<Nvml> opened;  // open_clocks()'s
}  // namespace

bool throttled(std::uint64_t reasons) {
  for (const auto& r : kReasons) {
    if (r.throttle && (reasons & r.bit)) return true;
  }
  return false;
}

std::string reason_names(std::uint64_t reasons) {
  std::string out;
  for (const auto& r : kReasons) {
    if (reasons & r.bit) out += (out.empty() ? "" : "+") + std::string(r.name);
  }
  return out.empty() ? "none" : out;
}

void open_clocks(int device) { opened = std::async(std::launch::async, open_nvml, device).share(); }

ClockSample read_clocks() {
  ClockSample s;
  if (!opened.valid()) return s;
  const Nvml& n = opened.get();
  unsigned long long reasons = 0;
  s.known = n.device != nullptr && n.clock(n.device, kNvmlClockSm, &s.sm_mhz) == 0 &&
            n.clock(n.device, kNvmlClockMem, &s.mem_mhz) == 0 && n.reasons(n.device, &reasons) == 0;
  s.reasons = reasons;
  return s;
}
}  // namespace ladder
