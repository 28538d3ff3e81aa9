// cpu_baseline: the CPU's sum of the ladder's input, and the copy of that input to the GPU.
//
// The first source article begins with a naive kernel that lost to a single-threaded CPU loop. This program
// times that loop on the same input the stages sum (the same seed gives bitwise the same floats), so
// `./ladder run` can put the CPU beside the ladder, and times the copy of the input from host memory to the GPU,
// which a kernel waits for when its data starts on the host.
//
// What it runs
//   the float loop    `for (i) sum += x[i]` on one thread, as a first CPU version is written, compiled with the
//                     project's flags like every stage (the build type's; Release by default);
//   every hw thread   the same loop over one contiguous chunk per thread (std::thread, one per hardware
//                     thread unless --threads), then the chunk sums added in order;
//   the copy          cudaMemcpy of the input from this ordinary (pageable) host memory to the GPU, then
//                     cudaDeviceSynchronize (from pageable memory cudaMemcpy may return once the last chunk is
//                     staged, before it has landed), timed on the host; and the same copy from pinned (page-locked,
//                     cudaMallocHost) memory, which a program can choose instead.
//   The every-core time includes starting and joining its threads, as a program that sums once pays them.
//
// What a PASS proves
//   each sum: the exact input (dyadic values whose every partial sum is exact in float) gives the exact sum;
//   the float input is within the bound of the sum's own shape (common/oracle.hpp: one chain of n additions;
//   T chains, then one of T); and every warm-up and timed repetition returned bitwise the checked result. The
//   copy: the GPU's bytes, copied back, equal the host's.
//
// Build and run
//   cmake -S . -B build && cmake --build build --target cpu_baseline
//   build/bin/cpu_baseline                 (-n for the size, --threads, --no-copy without a GPU)
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <cuda_runtime.h>
#include <fmt/format.h>

#include "device_fill.hpp"
#include "harness.hpp"
#include "input.hpp"
#include "oracle.hpp"

namespace {

using ladder::CpuOptions;
using ladder::InputMode;
using ladder::Record;

// The loop the article's reader wrote first.
float sum_loop(const float* x, std::size_t n) {
  float sum = 0.0f;
  for (std::size_t i = 0; i < n; ++i) sum += x[i];
  return sum;
}

// The same loop on every hardware thread: one contiguous chunk per thread, then the chunk sums in order.
float sum_all_cores(const float* x, std::size_t n, unsigned threads) {
  const std::size_t chunk = (n + threads - 1) / threads;
  std::vector<float> partial(threads, 0.0f);
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    const std::size_t begin = std::min(n, t * chunk), end = std::min(n, begin + chunk);
    pool.emplace_back([&partial, x, t, begin, end] { partial[t] = sum_loop(x + begin, end - begin); });
  }
  for (auto& thread : pool) thread.join();
  return sum_loop(partial.data(), threads);
}

// The additions each sum makes, for its float bound: one chain of n; or `threads` chains of a chunk each (the
// last may be shorter: counted as a whole chunk, which only widens the bound), then one chain of the chunk sums.
ladder::SumShape shape_of(std::uint64_t n, unsigned threads) {
  ladder::SumShape shape;
  if (threads == 1) return shape.chain(n, 1.0, 1);
  const std::uint64_t chunk = (n + threads - 1) / threads;
  return shape.chain(chunk, 1.0, threads).chain(threads, static_cast<double>(chunk), 1);
}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// Warm-ups, then the timed repetitions of run(), each timed on its own: the stats of the timed ones.
ladder::TimingStats time_it(const CpuOptions& o, const std::function<void()>& run) {
  std::vector<double> samples;
  for (int r = 0; r < o.warmup + o.reps; ++r) {
    const auto start = std::chrono::steady_clock::now();
    run();
    if (r >= o.warmup) samples.push_back(ms_since(start));
  }
  return ladder::summarize(samples);
}

std::string read_cpu_name() {
  std::ifstream info("/proc/cpuinfo");
  for (std::string line; std::getline(info, line);) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "CPU of unknown model";  // /proc/cpuinfo names no model (many Arm hosts)
}

const std::string& cpu_name() {
  static const std::string name = read_cpu_name();
  return name;
}

Record base_record(const CpuOptions& o, const char* row, std::uint64_t n, unsigned threads) {
  Record r;
  r.add("stage", "cpu_baseline").add("row", row).add("cpu", cpu_name()).add("threads", threads);
  r.add("input", ladder::to_string(o.input)).add("seed", o.seed).add("n", n).add("bytes", n * sizeof(float));
  return r.add("reps", o.reps).add("warmup", o.warmup);
}

void add_timing(Record& r, const ladder::TimingStats& t, std::uint64_t n) {
  r.add("ms_median", t.median_ms).add("ms_min", t.min_ms).add("ms_max", t.max_ms);
  r.add("gbps", static_cast<double>(n * sizeof(float)) / (t.median_ms * 1e6));
}

// The two sums of the ladder's input at size n, one thread and every hardware thread: the exact input first (both sums checked
// against its exact sum), then the float (or exact) input, timed: the first run (a warm-up where there are any) is
// checked within the sum's bound, and every other must return bitwise its result. The input is made once for both.
std::vector<Record> sum_rows(const CpuOptions& o, float* host, std::uint64_t n, unsigned cores, ladder::Verdict& all) {
  struct Sum {
    Sum(const char* name, unsigned count) : row(name), threads(count) {}
    const char* row;
    unsigned threads;
    ladder::Verdict v;
    float exact_result = 0, result = 0;
    ladder::SumCheck check;
    float operator()(const float* x, std::uint64_t count) const {
      return threads == 1 ? sum_loop(x, count) : sum_all_cores(x, count, threads);
    }
  };
  Sum sums[] = {{"loop", 1}, {"all_cores", cores}};
  ladder::generate_input(o.seed, 0, InputMode::kExact, host, n, ladder::exact_range(n));
  const ladder::SumReference exact = ladder::reference_sum(host, n);
  for (Sum& s : sums) {
    s.exact_result = s(host, n);
    ladder::record(s.v, "exact", ladder::check_sum(s.exact_result, exact, InputMode::kExact, shape_of(n, s.threads), n));
  }
  if (o.input == InputMode::kFloat) ladder::generate_input(o.seed, 0, InputMode::kFloat, host, n);
  const ladder::SumReference ref = o.input == InputMode::kFloat ? ladder::reference_sum(host, n) : exact;
  std::vector<Record> rows;
  for (Sum& s : sums) {
    bool first = true, same = true;  // every run after the first: bitwise the first's (the checked) result
    const ladder::TimingStats t = time_it(o, [&] {
      const float got = s(host, n);
      if (first) s.result = got;
      same = same && (first || std::memcmp(&got, &s.result, sizeof got) == 0);
      first = false;
    });
    s.check = ladder::check_sum(s.result, ref, o.input, shape_of(n, s.threads), n);
    ladder::record(s.v, "float", s.check);
    s.v.add("timed", same, "a repetition returned a result other than the checked one");
    all.add_all(s.v);
    Record r = base_record(o, s.row, n, s.threads);
    r.add("exact_check", s.v.field("exact")).add("exact_result", static_cast<double>(s.exact_result), 9);
    r.add("exact_sum", exact.sum, 17).add("result", static_cast<double>(s.result), 9).add("reference", ref.sum, 17);
    r.add("abs_error", s.check.error, 3).add("bound", s.check.tolerance, 3).add("float_check", s.v.field("float"));
    r.add("timed_check", s.v.field("timed")).add("check", s.v.word());
    add_timing(r, t, n);
    rows.push_back(std::move(r));
  }
  return rows;
}

// The copy of n floats from host memory to the GPU, then back once to check it: from `host` (pageable memory, as a
// std::vector or new[] gives it), or, pinned, from a page-locked copy of it (cudaMallocHost), which the GPU's copy
// engine reads directly.
Record copy_row(const CpuOptions& o, const ladder::DeviceInfo& d, const float* host, std::uint64_t n, bool pinned,
                ladder::Verdict& all) {
  ladder::require_device_memory(d, n * sizeof(float), "the input", "-n");
  ladder::DeviceBuffer<float> device(n);
  float* locked = nullptr;
  if (pinned) {
    CUDA_CHECK(cudaMallocHost(&locked, n * sizeof(float)));
    std::memcpy(locked, host, n * sizeof(float));
  }
  const float* from = pinned ? locked : host;
  const ladder::TimingStats t = time_it(o, [&] {
    CUDA_CHECK(cudaMemcpy(device.get(), from, n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaDeviceSynchronize());  // from pageable memory cudaMemcpy may return before the last DMA lands
  });
  if (locked != nullptr) CUDA_CHECK(cudaFreeHost(locked));
  // The GPU's bytes against the host's: a fingerprint of every element and its place, taken on each side (two
  // copies that differ anywhere differ in it but with probability about 2^-64), instead of copying 1 GB back.
  ladder::DeviceBuffer<unsigned long long> print(1);
  ladder::fingerprint_on_device(device.get(), n, print.get(), nullptr);
  unsigned long long on_device = 0;
  CUDA_CHECK(cudaMemcpy(&on_device, print.get(), sizeof on_device, cudaMemcpyDeviceToHost));
  ladder::Verdict v;
  v.add("copy", on_device == ladder::fingerprint_on_host(host, n), "the GPU's copy differs from the host's");
  all.add_all(v);
  Record r = base_record(o, pinned ? "copy_pinned" : "copy", n, 1);
  r.add("device", d.name).add("copy_check", v.field("copy")).add("check", v.word());
  add_timing(r, t, n);
  return r;
}

void print_table(const CpuOptions& o, const std::vector<Record>& rows) {
  const auto field = [](const Record& r, const char* key) {
    for (const auto& f : r.fields()) {
      if (f.key == key) return f.value;
    }
    return std::string("-");
  };
  fmt::print("cpu_baseline on {}, {} hardware threads: input '{}', seed {}; median of {} reps after {} warm-up(s)\n",
             cpu_name(), std::thread::hardware_concurrency(), ladder::to_string(o.input), o.seed, o.reps, o.warmup);
  ladder::TextTable table({"row", "n", "threads", "check", "ms", "GB/s", "result", "error / bound"});
  for (const auto& r : rows) {
    const std::string row = field(r, "row");
    const bool copy = row.rfind("copy", 0) == 0;
    const std::string name = copy ? fmt::format("copy to the GPU ({})", row == "copy" ? "pageable" : "pinned")
                             : row == "loop" ? "float loop"
                                             : "every hw thread";
    table.add_row({name, field(r, "n"), field(r, "threads"), field(r, "check"),
                   fmt::format("{:.3f}", std::stod(field(r, "ms_median"))),
                   fmt::format("{:.1f}", std::stod(field(r, "gbps"))), copy ? "-" : field(r, "result"),
                   copy ? "-"
                        : fmt::format("{} / {}{}", field(r, "abs_error"), field(r, "bound"),
                                      field(r, "float_check") == "skipped" ? " (not judged)" : "")});
  }
  fmt::print("{}", table.str());
  fmt::print("  check: PASS = the exact input summed exactly, the float input within the bound of the sum's shape, and "
             "every repetition the checked result; the copy: the GPU's bytes equal the host's\n");
}

int run(const CpuOptions& o) {
  const std::uint64_t max_n = *std::max_element(o.sizes.begin(), o.sizes.end());
  const unsigned cores = o.threads != 0 ? o.threads : std::max(1u, std::thread::hardware_concurrency());
  ladder::DeviceInfo device;
  if (!o.no_copy) {
    const ladder::DeviceLookup lookup = ladder::find_device(o.device);
    if (!lookup.ok) {
      fmt::print(stderr, "cpu_baseline: {} (--no-copy times the CPU sums alone)\n", lookup.message);
      return lookup.exit_status;
    }
    device = lookup.info;
  }
  auto host = ladder::host_floats(max_n, fmt::format("-n {}", max_n));
  std::vector<Record> rows;
  ladder::Verdict all;
  for (const std::uint64_t n : o.sizes) {
    ladder::progress(fmt::format("cpu_baseline: n = {}: one thread, then {}", n, cores));
    for (Record& r : sum_rows(o, host.get(), n, cores, all)) rows.push_back(std::move(r));
    if (!o.no_copy) {
      rows.push_back(copy_row(o, device, host.get(), n, false, all));
      rows.push_back(copy_row(o, device, host.get(), n, true, all));
    }
  }
  if (o.format == ladder::Format::kTable) {
    print_table(o, rows);
  } else {
    ladder::print_records(o.format, rows);
  }
  for (const auto& note : all.skipped()) fmt::print(stderr, "cpu_baseline: not judged: {}\n", note);
  for (const auto& failure : all.failures()) fmt::print(stderr, "cpu_baseline: FAIL {}\n", failure);
  return all.pass() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CpuOptions o;
  const ladder::ParseOutcome parsed = ladder::parse_cpu_options(argc, argv, o);
  if (parsed.exit_status) return ladder::print_outcome(parsed);
  try {
    return run(o);
  } catch (const ladder::UsageError& e) {
    fmt::print(stderr, "cpu_baseline: {}\n", e.what());
    return 2;
  }
}
