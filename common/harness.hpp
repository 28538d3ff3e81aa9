// Pieces both harnesses (reduce and GEMM) use: errors that end in exit status 2, memory checks,
// the context lines of the report, progress messages.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "device.hpp"
#include "options.hpp"
#include "report.hpp"
#include "stats.hpp"
#include "verdict.hpp"

namespace ladder {

// A request this machine cannot serve (too large for memory, a grid too big): exit status 2, one line.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A stage that broke its contract with the harness (say, a first launch larger than the partial sums it was
// given): a failed check, exit status 1, one line.
struct StageFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The message for a request of `needed` bytes (itemised in `breakdown`) when only `free_bytes` are free, or
// an empty string when it fits.
std::string memory_shortfall(std::size_t needed, std::size_t free_bytes, const std::string& breakdown,
                             const std::string& option, const std::string& device);

// Throws UsageError naming `option` if `needed` bytes (itemised in `breakdown`) exceed the free device memory.
void require_device_memory(const DeviceInfo& device, std::size_t needed, const std::string& breakdown,
                           const std::string& option);

// Host memory for `count` floats, uninitialised; throws UsageError naming `option` if it cannot be had.
std::unique_ptr<float[]> host_floats(std::size_t count, const std::string& option);

// Finds the device, handles --list-devices, and runs body() with UsageError and bad_alloc turned into
// exit status 2. Returns the process exit status.
int run_program(const char* program, const CommonOptions& options, const std::function<int(const DeviceInfo&)>& body);

// Report context lines.
std::string device_line(const DeviceInfo& d);
std::string timing_line(const CommonOptions& o, const DeviceInfo& d);
void add_context_fields(Record& r, const char* stage, const DeviceInfo& d, const CommonOptions& o);

// The clocks of a timed series (at its first and last repetition), its throttle reasons and stream-hold
// timeouts, as record fields (empty values where nothing was timed or NVML did not answer).
void add_clock_fields(Record& r, const TimingStats& t, bool timed);

// Whether every repetition of a run's timed series was held behind the stream hold to its end: not a check of
// the result, so a Verdict of its own (the record's timing_check), never part of the run's.
Verdict held_verdict(int unheld_repetitions);

// One warning line on stderr if, over the timed series of a run, the SM or memory clock moved, the GPU
// throttled (power, thermal or hardware slowdown), or a stream hold timed out.
void warn_about_clocks(const char* program, const std::vector<TimingStats>& series);

// A buffer under the canary: p[zero, zero + live) is what a launch may write; p[0, zero) and p[zero + live, end)
// hold the poison (NaN, all bits set), which must still be there afterwards. name: how messages call element 0.
struct Guarded {
  const float* p;
  std::size_t zero, live, end;
  const char* name;
};
// The canary: the first word of the poison around buffers (at most kMaxPoisonSpans / 2 of them) that a launch
// changed, named with its index from element 0 and its value; "" if every one still holds the poison. One kernel
// scans them all, its answers in `scratch` (kMaxPoisonSpans words of device memory); waits for `stream`.
std::string changed_poison(const std::vector<Guarded>& buffers, unsigned long long* scratch, cudaStream_t stream);

// A progress line on stderr, only when stderr is a terminal (a person is waiting).
void progress(const std::string& line);

}  // namespace ladder
