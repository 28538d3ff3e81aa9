// What every program shares besides its options (harness.cpp): the GPU, the errors that end a run, memory checks, the
// report (a table for people, CSV or JSON records for scripts) and its context, and the canary.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <cuda_runtime.h>

#include "options.hpp"
#include "timer.hpp"
#include "verdict.hpp"

namespace ladder {
struct DeviceInfo {
  int index = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0, sm_count = 0;
  std::size_t l2_bytes = 0;
  int mem_clock_khz = 0;   // cudaDevAttrMemoryClockRate (CUDA 13 removed cudaDeviceProp::memoryClockRate)
  int bus_width_bits = 0;  // cudaDevAttrGlobalMemoryBusWidth
  int clock_khz = 0;       // cudaDevAttrClockRate: the SM clock the FP32 peak is computed at
  std::uint64_t total_bytes = 0;
  int driver_version = 0, runtime_version = 0;  // e.g. 13000 for 13.0
  // Theoretical DRAM bandwidth: 2 (double data rate) x clock x bus width / 8, in GB/s.
  double peak_gbps() const { return 2.0 * mem_clock_khz * 1e3 * (bus_width_bits / 8.0) / 1e9; }
  // FP32 fused multiply-adds per SM per clock (CUDA C++ Programming Guide, "Arithmetic Instructions"); 0 if unknown.
  int fp32_lanes_per_sm() const;
  double fp32_peak_gflops() const;  // SMs x lanes x 2 FLOP x clock, in GFLOP/s (NaN if the lanes are unknown)
};

// The device, or the exit status (77: no usable GPU; 2: a bad --device) and one line that says why not.
struct DeviceLookup {
  int exit_status = 0;
  std::string message;
  DeviceInfo info;
};
DeviceLookup find_device(int index);  // makes the device current and reads its attributes; never exits

// A request this machine cannot serve (too large for memory, a grid too big): exit status 2, one line.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// A stage that broke its contract with the harness (say, a first launch larger than its partial sums): exit status 1.
struct StageFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Why a request of `needed` bytes (itemised in `breakdown`) does not fit in `free_bytes`, or "" when it fits.
std::string memory_shortfall(std::size_t needed, std::size_t free_bytes, const std::string& breakdown,
                             const std::string& option, const std::string& device);
void require_device_memory(const DeviceInfo& device, std::size_t needed, const std::string& breakdown,
                           const std::string& option);
std::unique_ptr<float[]> host_floats(std::size_t count, const std::string& option);
// Finds the device (or lists them) and runs body(); a StageFailure ends it with status 1, a UsageError or bad_alloc 2.
int run_program(const char* program, const CommonOptions& options, const std::function<int(const DeviceInfo&)>& body);

// One result row as ordered (key, value) fields; CSV and JSON both print exactly these.
struct Record {
  struct Field {
    std::string key, value;
    bool quoted;  // a string in JSON
  };
  std::vector<Field> fields;
  Record& add(const std::string& key, const std::string& text) { return put(key, text, true); }
  Record& add(const std::string& key, double value, int significant = 6);  // null where not finite
  template <typename T, typename = std::enable_if_t<std::is_integral_v<T>>>  // whole numbers, and bool
  Record& add(const std::string& key, T value) {
    return put(key, std::is_same_v<T, bool> ? (value ? "true" : "false") : std::to_string(value), false);
  }
  std::string field(const std::string& key, const char* absent = "-") const;  // its value, or `absent`
  Record& put(const std::string& key, const std::string& value, bool quoted) {
    fields.push_back({key, value, quoted});
    return *this;
  }
};
std::string to_csv(const std::vector<Record>& rows);   // header line + one line per row
std::string to_json(const std::vector<Record>& rows);  // an array of objects
void print_records(Format format, const std::vector<Record>& rows);
using Table = std::vector<std::vector<std::string>>;  // a header row, then the rows
// The table as plain text: right-aligned columns sized to their content, each line indented.
std::string text_table(const Table& rows, const std::string& indent = "  ");
std::string human_bytes(double bytes);  // "1.07 GB", "240 MB", "4.0 kB" (decimal units)

// The header's device and timing lines, and the fields every record starts with.
std::string device_line(const DeviceInfo& d);
std::string timing_line(const CommonOptions& o, const DeviceInfo& d);
void add_context_fields(Record& r, const char* stage, const DeviceInfo& d, const CommonOptions& o);
// A timed series' clocks, throttle reasons and stream-hold timeouts as record fields (empty where not known).
void add_clock_fields(Record& r, const TimingStats& t, bool timed);
// A record's timing_check: "-" untimed, else whether every repetition was held to its end (not in the run's verdict).
inline const char* timing_check(bool timed, int unheld_repetitions) {
  return !timed ? "-" : unheld_repetitions == 0 ? "PASS" : "FAIL";
}
// A default run's report: a table for people (after a header, notes under it) or records for scripts, and a warning
// on stderr if, over the timed series, a clock moved, the GPU throttled or a stream hold timed out.
struct Report {
  Table table;  // the header row first
  std::vector<Record> records;
  std::vector<std::string> notes;
  std::vector<TimingStats> series;
  bool pass = true;
  int print(const char* program, Format format, const std::function<void()>& header) const;  // the exit status
};
void progress(const std::string& line);  // on stderr, only when it is a terminal (a person is waiting)

// A launch that never ends (a loop that stops advancing, a barrier not every thread of the block reaches) would hang
// the program in its next wait for the GPU. So each checked launch and each timed series runs under a Deadline: past
// it, the program names what it ran and the command that repeats it, and exits 1 (the kernel ends with the process).
// The limit: --time-limit seconds, else 10 s plus 1 s per GB the launches read, far beyond any GPU's time for them.
class Deadline {
 public:
  Deadline(double bytes_read, const std::string& what);
  ~Deadline();
  Deadline(const Deadline&) = delete;
  Deadline& operator=(const Deadline&) = delete;
};
void set_time_limit(int seconds);  // from --time-limit: -1 derives each limit from the work, 0 sets none

// A buffer under the canary: a launch may write p[zero, zero + live); p[0, zero) and p[zero + live, end) must keep
// their poison (NaN, all bits set). name: how messages call element 0.
struct Guarded {
  const float* p;
  std::size_t zero, live, end;
  const char* name;
};
// The canary: the first word of the poison around the buffers (at most kMaxPoisonSpans / 2) that a launch changed,
// named with its index from element 0 and its value; "" if every one still holds the poison. Waits for `stream`.
std::string changed_poison(const std::vector<Guarded>& buffers, cudaStream_t stream);
}  // namespace ladder
