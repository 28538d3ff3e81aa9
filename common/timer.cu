// GpuTimer (timer.hpp), and the clocks its repetitions ran at, from NVML (docs/method.md, "Clocks").
#include <dlfcn.h>

#include <algorithm>
#include <future>
#include <iterator>

#include <cuda/atomic>
#include <cuda/ptx>

#include "timer.hpp"

namespace ladder {
namespace {
constexpr unsigned long long kTimeoutNs = 1000000000ull;

using SystemFlag = cuda::atomic_ref<int, cuda::thread_scope_system>;

// Spins until the host sets flags[0], or kTimeoutNs have passed (then sets flags[1]).
__global__ void hold_kernel(int* flags) {
  const unsigned long long start = cuda::ptx::get_sreg_globaltimer();
  while (SystemFlag(flags[0]).load(cuda::memory_order_relaxed) == 0) {
    if (cuda::ptx::get_sreg_globaltimer() - start > kTimeoutNs) {
      SystemFlag(flags[1]).store(1, cuda::memory_order_relaxed);
      return;
    }
    __nanosleep(256);
  }
}

// Reads `count` float4s. The comparison never holds for the zeroed buffer, but the compiler cannot know that, so
// every load stays.
__global__ void read_all(const float4* __restrict__ buf, std::size_t count, float* sink) {
  float acc = 0.0f;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < count;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const float4 v = buf[i];
    acc += (v.x + v.y) + (v.z + v.w);
  }
  if (acc == 1234.5f) *sink = acc;
}

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

TimingStats summarize(std::vector<double> samples_ms) {
  if (samples_ms.empty()) return {};
  std::sort(samples_ms.begin(), samples_ms.end());
  const std::size_t n = samples_ms.size();
  const double median = n % 2 ? samples_ms[n / 2] : 0.5 * (samples_ms[n / 2 - 1] + samples_ms[n / 2]);
  return {median, samples_ms.front(), samples_ms.back(), {}, {}, 0};
}

GpuTimer::GpuTimer(std::size_t l2_bytes, Flush flush)
    : l2_bytes_(l2_bytes), flush_(flush), flush_buffer_(flush_bytes(l2_bytes, flush)) {
  CUDA_CHECK(cudaMemset(flush_buffer_.get(), 0, flush_buffer_.bytes()));
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  CUDA_CHECK(cudaEventCreate(&start_));
  CUDA_CHECK(cudaEventCreate(&stop_));
  CUDA_CHECK(cudaHostAlloc(&flags_, 2 * sizeof(int), cudaHostAllocMapped));
  CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_flags_), flags_, 0));
}

GpuTimer::~GpuTimer() {
  cudaEventDestroy(start_);
  cudaEventDestroy(stop_);
  cudaStreamDestroy(stream_);
  cudaFreeHost(flags_);
}

TimingStats GpuTimer::time(const Work& work, int warmup, int reps, const EachLaunch& each) {
  // At least one untimed round of everything a repetition enqueues: with lazy module loading (the CUDA default) a
  // kernel's first launch loads its module, which waits for the GPU, so behind the hold it would wait for the timeout.
  const int untimed = warmups(warmup);
  std::vector<double> samples;
  ClockSample first, last;
  int timeouts = 0;
  for (int i = 0; i < untimed + reps; ++i) {
    const bool timed = i >= untimed;
    if (i == untimed) CUDA_CHECK(cudaStreamSynchronize(stream_));  // the warm-ups done before the first hold
    if (timed && holding_) hold();
    if (each.poison) each.poison(stream_);
    flush(stream_);
    if (timed) CUDA_CHECK(cudaEventRecord(start_, stream_));
    work(stream_);
    if (timed) CUDA_CHECK(cudaEventRecord(stop_, stream_));
    if (each.keep) each.keep(stream_, i);
    if (!timed) continue;
    if (holding_) SystemFlag(flags_[0]).store(1, cuda::memory_order_release);  // releases the hold
    if (i == untimed) first = read_clocks();  // just after the release: while the GPU still runs all but a tiny rep
    if (i == untimed + reps - 1) last = read_clocks();
    CUDA_CHECK(cudaEventSynchronize(stop_));
    // A hold that timed out means launches wait for the GPU here (CUDA_LAUNCH_BLOCKING=1, a profiler replaying them):
    // every later hold would cost its full timeout too, so the timer stops holding, and counts each such repetition,
    // whose interval may hold host time (the row's timing_check fails, and ./ladder saves no such row).
    if (holding_ && SystemFlag(flags_[1]).load(cuda::memory_order_acquire) != 0) holding_ = false;
    timeouts += holding_ ? 0 : 1;
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    samples.push_back(ms);
  }
  const TimingStats s = summarize(std::move(samples));
  return {s.median_ms, s.min_ms, s.max_ms, first, last, timeouts};
}

void GpuTimer::flush(cudaStream_t stream) const {
  if (flush_ == Flush::kNone) return;
  unsigned char* base = flush_buffer_.get();
  const std::size_t written = l2_write_bytes(l2_bytes_), read = l2_read_bytes(l2_bytes_);
  // 1. Overwrite 4x the L2: every line of the input is evicted (L2 allocates on write).
  CUDA_CHECK(cudaMemsetAsync(base, 0, written, stream));
  if (flush_ != Flush::kClean) return;
  // 2. Read 2x the L2 of other, clean data: the dirty lines of step 1 are written back to DRAM now, not during the
  //    timed kernel, where they would compete with its reads.
  read_all<<<1024, 256, 0, stream>>>(reinterpret_cast<const float4*>(base + written), read / sizeof(float4),
                                     reinterpret_cast<float*>(base + written + read));
  LADDER_CHECK_LAUNCH();
}

void GpuTimer::hold() {
  SystemFlag(flags_[0]).store(0, cuda::memory_order_relaxed);
  SystemFlag(flags_[1]).store(0, cuda::memory_order_relaxed);
  hold_kernel<<<1, 1, 0, stream_>>>(device_flags_);
  LADDER_CHECK_LAUNCH();
}

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
