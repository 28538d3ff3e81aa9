// The clocks a measurement ran at, and whether the GPU throttled, from NVML (docs/method.md, "Clocks").
#include <dlfcn.h>

#include <future>
#include <iterator>

#include "timer.hpp"

namespace ladder {
namespace {
// The few NVML declarations used here, as the NVML API reference gives them. The library is opened at run time rather
// than linked: linking would make every stage binary fail to start where the driver (and so libnvidia-ml.so.1) is
// missing, and some CUDA Toolkit installs ship no nvml.h to compile against.
using NvmlDevice = struct NvmlDeviceOpaque*;
using NvmlReturn = int;  // nvmlReturn_t; 0 is NVML_SUCCESS
constexpr int kNvmlClockSm = 1, kNvmlClockMem = 2;  // NVML_CLOCK_SM, NVML_CLOCK_MEM

// nvmlClocksEventReason* (formerly nvmlClocksThrottleReason*): bit k is kReasons[k]; those in kThrottling hold the
// clocks down during work (power cap, thermal or hardware slowdown).
constexpr const char* kReasons[] = {"gpu_idle",   "applications_clocks", "sw_power_cap",   "hw_slowdown", "sync_boost",
                                    "sw_thermal", "hw_thermal",          "hw_power_brake", "display_clocks"};
constexpr std::uint64_t kThrottling = 0x4 | 0x8 | 0x20 | 0x40 | 0x80;

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

bool throttled(std::uint64_t reasons) { return (reasons & kThrottling) != 0; }

std::string reason_names(std::uint64_t reasons) {
  std::string out;
  for (std::size_t k = 0; k < std::size(kReasons); ++k) {
    if (reasons & (std::uint64_t{1} << k)) out += (out.empty() ? "" : "+") + std::string(kReasons[k]);
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
