#include <pthread.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <new>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness.hpp"

namespace ladder {
void cuda_check(cudaError_t err, const char* call, const char* file, int line) {
  if (err == cudaSuccess) return;
  // "common/timer.cu" rather than the absolute path the compiler saw: the last two path components.
  const std::filesystem::path path(file), shown = path.parent_path().filename() / path.filename();
  std::fprintf(stderr, "error: %s failed at %s:%d: %s (%s)\n", call, shown.c_str(), line, cudaGetErrorName(err),
               cudaGetErrorString(err));
  if (err == cudaErrorNoKernelImageForDevice || err == cudaErrorUnsupportedPtxVersion) {
    std::fprintf(stderr, "hint: this build has no code for this GPU; rebuild with -DCMAKE_CUDA_ARCHITECTURES=native "
                         "(or the GPU's compute capability, e.g. 90)\n");
  }
  std::exit(2);
}

namespace {
constexpr int kMinMajor = 7, kMinMinor = 5;  // CUDA 13 builds for compute capability 7.5 and newer
std::string version_string(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }  // "13.0" from 13000

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

int limit_s = -1;                        // set_time_limit()'s
std::string& message = *new std::string;  // the armed Deadline's; never destroyed: it may fire while the process exits

// SIGALRM's handler: a kernel that never ends cannot be waited for, so the process ends, and its context with it.
void on_deadline(int) {
  [[maybe_unused]] const ssize_t written = write(STDERR_FILENO, message.data(), message.size());
  std::_Exit(1);
}

// SIGALRM after `seconds` of real time (0 disarms), unblocked in this thread: a parent may have blocked it for us.
void arm(double seconds) {
  sigset_t alarm;
  sigemptyset(&alarm);
  sigaddset(&alarm, SIGALRM);
  itimerval t{};
  t.it_value.tv_sec = static_cast<time_t>(seconds);
  t.it_value.tv_usec = static_cast<suseconds_t>((seconds - static_cast<double>(t.it_value.tv_sec)) * 1e6);
  if (pthread_sigmask(SIG_UNBLOCK, &alarm, nullptr) != 0 || setitimer(ITIMER_REAL, &t, nullptr) != 0) {
    std::perror("error: the time limit's timer (setitimer)");
    std::exit(2);
  }
}
}  // namespace

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

void set_time_limit(int seconds) { limit_s = seconds; }

Deadline::Deadline(double bytes_read, const std::string& what) {
  const double seconds = limit_s < 0 ? 10 + bytes_read / 1e9 : limit_s;
  if (seconds <= 0) return;
  std::ifstream file("/proc/self/cmdline", std::ios::binary);  // as the program was started, arguments NUL-separated
  std::string command((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  std::replace(command.begin(), command.end(), '\0', ' ');
  command = command.empty() ? "the same command" : command.substr(0, command.find_last_not_of(' ') + 1);
  std::string program = command.substr(0, command.find(' '));
  program = program.substr(program.rfind('/') + 1);
  message = fmt::format("{}: error: did not finish within {:.0f} s: a loop that never ends, or a barrier not every "
                        "thread of the block reaches ({}); to repeat it: {}\n", program, seconds, what, command);
  std::signal(SIGALRM, on_deadline);
  arm(seconds);
}

Deadline::~Deadline() { arm(0); }

std::string memory_shortfall(std::size_t needed, std::size_t free_bytes, const std::string& breakdown,
                             const std::string& option, const std::string& device) {
  if (needed <= free_bytes) return "";
  return fmt::format("{}: needs {} bytes ({}) of device memory ({}), but only {} bytes ({}) are free on {}", option,
                     needed, human_bytes(needed), breakdown, free_bytes, human_bytes(free_bytes), device);
}

void require_device_memory(const DeviceInfo& device, std::size_t needed, const std::string& breakdown,
                           const std::string& option) {
  std::size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::string why = memory_shortfall(needed, free_bytes, breakdown, option,
                                           fmt::format("device {} ({})", device.index, device.name));
  if (!why.empty()) throw UsageError(why);
}

std::unique_ptr<float[]> host_floats(std::size_t count, const std::string& option) {
  try {
    return std::unique_ptr<float[]>(new float[count]);
  } catch (const std::bad_alloc&) {
    throw UsageError(fmt::format("{}: cannot allocate {} bytes ({}) of host memory for the input", option,
                                 count * sizeof(float), human_bytes(count * sizeof(float))));
  }
}

int run_program(const char* program, const CommonOptions& options, const std::function<int(const DeviceInfo&)>& body) {
  int count = 0;  // --list-devices where there is no GPU ends as a run does below: 77, and why
  if (options.list_devices && cudaGetDeviceCount(&count) == cudaSuccess && count > 0) {
    for (int i = 0; i < count; ++i) {
      const DeviceLookup lookup = find_device(i);
      const DeviceInfo& d = lookup.info;
      fmt::print("{}: {}, compute capability {}.{}, {} SMs, {:.1f} MB L2, {:.1f} GB, {:.0f} GB/s theoretical{}\n", i,
                 d.name, d.cc_major, d.cc_minor, d.sm_count, d.l2_bytes / 1e6, d.total_bytes / 1e9, d.peak_gbps(),
                 lookup.exit_status == 0 ? "" : " (not usable: " + lookup.message + ")");
    }
    return 0;
  }
  set_time_limit(options.time_limit);
  const DeviceLookup lookup = find_device(options.device);
  if (lookup.exit_status != 0) {
    fmt::print(stderr, "{}: {}\n", program, lookup.message);
    return lookup.exit_status;
  }
  open_clocks(lookup.info.index);  // meanwhile the program makes its input
  try {
    return body(lookup.info);
  } catch (const StageFailure& e) {
    fmt::print(stderr, "{}: FAIL: {}\n", program, e.what());
    return 1;
  } catch (const UsageError& e) {
    fmt::print(stderr, "{}: error: {}\n", program, e.what());
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "{}: error: out of host memory\n", program);
  }
  return 2;
}

Record& Record::add(const std::string& key, double value, int significant) {
  // JSON has no NaN or Infinity: write null there; CSV gets the same text.
  return put(key, std::isfinite(value) ? fmt::format("{:.{}g}", value, significant) : "null", false);
}

std::string Record::field(const std::string& key, const char* absent) const {
  const auto f = std::find_if(fields.begin(), fields.end(), [&](const Field& x) { return x.key == key; });
  return f == fields.end() ? absent : f->value;
}

std::string to_csv(const std::vector<Record>& rows) {
  if (rows.empty()) return "";
  std::vector<std::string> keys;  // every row's fields in the order they first come (cpu_baseline's rows differ)
  for (const auto& row : rows) {
    for (const auto& f : row.fields) {
      if (std::find(keys.begin(), keys.end(), f.key) == keys.end()) keys.push_back(f.key);
    }
  }
  std::string out = fmt::format("{}\n", fmt::join(keys, ","));
  for (const auto& row : rows) {
    std::vector<std::string> cells;
    for (const auto& key : keys) {  // a value with a comma, a quote or a newline quoted, its quotes doubled; none: ""
      const std::string value = row.field(key, "");
      const std::string q = value.find_first_of(",\"\n") == std::string::npos ? "" : "\"";
      std::string cell = q;
      for (char c : value) cell += q.size() && c == '"' ? std::string("\"\"") : std::string(1, c);
      cells.push_back(cell + q);
    }
    out += fmt::format("{}\n", fmt::join(cells, ","));
  }
  return out;
}

std::string to_json(const std::vector<Record>& rows) {
  std::vector<std::string> objects;
  for (const auto& row : rows) {
    std::vector<std::string> fields;
    for (const auto& f : row.fields) {
      fields.push_back(fmt::format("{}: {}", json_quote(f.key), f.quoted ? json_quote(f.value) : f.value));
    }
    objects.push_back(fmt::format("  {{{}}}", fmt::join(fields, ", ")));
  }
  return fmt::format("[\n{}{}]\n", fmt::join(objects, ",\n"), objects.empty() ? "" : "\n");
}

void print_records(Format format, const std::vector<Record>& rows) {
  std::fputs((format == Format::kJson ? to_json(rows) : to_csv(rows)).c_str(), stdout);
}

std::string text_table(const Table& rows, const std::string& indent) {
  std::vector<std::size_t> width(rows.front().size());
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size() && c < width.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows) {
    out += indent;
    for (std::size_t c = 0; c < width.size(); ++c) {
      out += fmt::format("{}{:>{}}", c ? "  " : "", c < row.size() ? row[c] : "", width[c]);
    }
    out += "\n";
  }
  return out;
}

std::string human_bytes(double bytes) {
  const char* units[] = {"B", "kB", "MB", "GB", "TB"};
  int u = 0;
  for (; bytes >= 1000 && u < 4; ++u) bytes /= 1000;
  return u == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{:.{}f} {}", bytes, bytes < 10 ? 2 : 1, units[u]);
}

std::string device_line(const DeviceInfo& d) {
  return fmt::format("{} (compute capability {}.{}, {} SMs, {:.1f} MB L2, {:.1f} GB), driver {}, runtime {}", d.name,
                     d.cc_major, d.cc_minor, d.sm_count, d.l2_bytes / 1e6, d.total_bytes / 1e9,
                     version_string(d.driver_version), version_string(d.runtime_version));
}

std::string timing_line(const CommonOptions& o, const DeviceInfo& d) {
  const auto written = human_bytes(l2_write_bytes(d.l2_bytes));
  const std::string flush =
      o.flush == Flush::kNone ? "L2 not flushed (--flush none)"
      : o.flush == Flush::kWrite
          ? fmt::format("L2 flushed before each rep ({} overwritten; --flush write)", written)
          : fmt::format("L2 flushed before each rep ({} overwritten, then {} of other data read)", written,
                        human_bytes(l2_read_bytes(d.l2_bytes)));
  return fmt::format("median of {} reps after {} warm-up runs, CUDA events around the whole device-side work, "
                     "enqueued behind a stream hold so the interval holds no host time; {}",
                     o.reps, GpuTimer::warmups(o.warmup), flush);
}

void add_context_fields(Record& r, const char* stage, const DeviceInfo& d, const CommonOptions& o) {
  r.add("stage", stage).add("device", d.name).add("compute_capability", fmt::format("{}.{}", d.cc_major, d.cc_minor));
  r.add("sms", d.sm_count).add("l2_bytes", d.l2_bytes).add("driver", version_string(d.driver_version));
  r.add("runtime", version_string(d.runtime_version)).add("peak_gbps", d.peak_gbps(), 6);
  r.add("clock_mhz", d.clock_khz / 1000).add("fp32_lanes_per_sm", d.fp32_lanes_per_sm());
  r.add("fp32_peak_gflops", d.fp32_peak_gflops(), 6).add("input", to_string(o.input)).add("seed", o.seed);
  r.add("mem_clock_mhz", d.mem_clock_khz / 1000).add("bus_width_bits", d.bus_width_bits).add("reps", o.reps);
  r.add("warmup", GpuTimer::warmups(o.warmup)).add("l2_flush", to_string(o.flush));  // the timer makes at least one
}

void add_clock_fields(Record& r, const TimingStats& t, bool timed) {
  const bool known = timed && t.clocks_start.known && t.clocks_end.known;
  const auto mhz = [&](unsigned v) { return known ? std::to_string(v) : std::string(); };
  const std::uint64_t reasons = t.clocks_start.reasons | t.clocks_end.reasons;
  r.add("sm_clock_start_mhz", mhz(t.clocks_start.sm_mhz)).add("sm_clock_end_mhz", mhz(t.clocks_end.sm_mhz));
  r.add("mem_clock_start_mhz", mhz(t.clocks_start.mem_mhz)).add("mem_clock_end_mhz", mhz(t.clocks_end.mem_mhz));
  r.add("clock_reasons", known ? reason_names(reasons) : std::string());
  r.add("throttled", !known ? "" : throttled(reasons) ? "yes" : "no").add("hold_timeouts", timed ? t.hold_timeouts : 0);
}

int Report::print(const char* program, Format format, const std::function<void()>& header) const {
  unsigned sm_lo = ~0u, sm_hi = 0, mem_lo = ~0u, mem_hi = 0;
  std::uint64_t reasons = 0;
  int timeouts = 0;
  for (const auto& t : series) {
    timeouts += t.hold_timeouts;
    for (const auto& c : {t.clocks_start, t.clocks_end}) {
      if (!c.known) continue;
      sm_lo = std::min(sm_lo, c.sm_mhz);
      sm_hi = std::max(sm_hi, c.sm_mhz);
      mem_lo = std::min(mem_lo, c.mem_mhz);
      mem_hi = std::max(mem_hi, c.mem_mhz);
      if (throttled(c.reasons)) reasons |= c.reasons;
    }
  }
  std::vector<std::string> what;
  if (sm_hi > sm_lo) what.push_back(fmt::format("the SM clock moved between {} and {} MHz", sm_lo, sm_hi));
  if (mem_hi > mem_lo) what.push_back(fmt::format("the memory clock moved between {} and {} MHz", mem_lo, mem_hi));
  if (reasons) what.push_back(fmt::format("the GPU throttled ({})", reason_names(reasons)));
  if (timeouts) what.push_back(fmt::format("{} stream holds timed out (those intervals may hold host time)", timeouts));
  if (!what.empty()) fmt::print(stderr, "{}: warning: during the timed runs {}\n", program, fmt::join(what, "; "));
  if (format != Format::kTable) {
    print_records(format, records);
  } else {
    header();
    fmt::print("\n{}", text_table(table));
    for (const auto& note : notes) fmt::print("  {}\n", note);
  }
  return pass ? 0 : 1;
}

void progress(const std::string& line) {
  static const bool tty = isatty(fileno(stderr)) != 0;
  if (tty) fmt::print(stderr, "{}\n", line);
}

std::string changed_poison(const std::vector<Guarded>& buffers, cudaStream_t stream) {
  std::vector<PoisonSpan> spans;  // before and after what each buffer may hold
  for (const Guarded& b : buffers) spans.insert(spans.end(), {{b.p, 0, b.zero}, {b.p, b.zero + b.live, b.end}});
  const std::vector<unsigned long long> found = first_unpoisoned(spans, stream);
  for (std::size_t k = 0; k < spans.size(); ++k) {
    if (found[k] >= spans[k].end) continue;
    float value = 0;
    std::uint32_t bits = 0;
    CUDA_CHECK(cudaMemcpy(&value, spans[k].p + found[k], sizeof value, cudaMemcpyDeviceToHost));
    std::memcpy(&bits, &value, sizeof bits);
    const long long index = static_cast<long long>(found[k]) - static_cast<long long>(buffers[k / 2].zero);
    return fmt::format("{}[{}] holds {} (bits {:08x}), where the launch may not write: its poison (NaN, all bits "
                       "set) was overwritten", buffers[k / 2].name, index, value, bits);
  }
  return "";
}
}  // namespace ladder
