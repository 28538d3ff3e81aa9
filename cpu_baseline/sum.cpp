// cpu_baseline: the CPU's sum of the ladder's input, and the copy of that input to the GPU.
//
// The first source article begins with a naive kernel that lost to a single-threaded CPU loop. This program times that
// loop on the stages' input (the same seed gives bitwise the same floats), for `./ladder run` to put beside the ladder,
// and the copy of the input to the GPU, which a kernel waits for when its data starts on the host:
//   the float loop    `for (i) sum += x[i]` on one thread, compiled with the project's flags like every stage;
//   every hw thread   the same loop over one contiguous chunk per thread (one per hardware thread unless --threads),
//                     then the chunk sums in order; its time includes starting and joining the threads;
//   the copy          cudaMemcpy from ordinary (pageable) host memory, then cudaDeviceSynchronize (it may return before
//                     the last chunk has landed), timed on the host; and the same from pinned (cudaMallocHost) memory.
// PASS: each sum gives the exact input's exact sum, the float input within the bound of its own shape (oracle.hpp), and
// every repetition bitwise the checked result; the copy's bytes on the GPU equal the host's.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <thread>

#include <fmt/format.h>

#include "harness.hpp"
#include "input.hpp"
#include "oracle.hpp"

namespace ladder {
namespace {
// The loop the article's reader wrote first.
float sum_loop(const float* x, std::size_t n) {
  float sum = 0.0f;
  for (std::size_t i = 0; i < n; ++i) sum += x[i];
  return sum;
}

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

// The additions each sum makes, for its float bound: one chain of n; or `threads` chains of a chunk each (the last may
// be shorter: counted as a whole chunk, which only widens the bound), then one chain of the chunk sums.
SumShape shape_of(std::uint64_t n, unsigned threads) {
  const std::uint64_t chunk = (n + threads - 1) / threads;  // one thread: one chain of n, then a chain of one value
  return SumShape().chain(chunk, 1.0, threads).chain(threads, static_cast<double>(chunk), 1);
}

// Warm-ups, then the timed repetitions of run(), each timed on its own.
TimingStats time_it(const CpuOptions& o, const std::function<void()>& run) {
  std::vector<double> samples;
  for (int r = 0; r < o.warmup + o.reps; ++r) {
    const auto start = std::chrono::steady_clock::now();
    run();
    const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
    if (r >= o.warmup) samples.push_back(took.count());
  }
  return summarize(samples);
}

std::string cpu_name() {
  std::ifstream info("/proc/cpuinfo");
  for (std::string line; std::getline(info, line);) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "CPU of unknown model";  // /proc/cpuinfo names no model (many Arm hosts)
}

Record make_record(const CpuOptions& o, const char* row, std::uint64_t n, unsigned threads) {
  Record r;
  r.add("stage", "cpu_baseline").add("row", row).add("cpu", cpu_name()).add("threads", threads);
  r.add("input", to_string(o.input)).add("seed", o.seed).add("n", n).add("bytes", n * sizeof(float));
  return r.add("reps", o.reps).add("warmup", o.warmup);
}

Record& add_timing(Record& r, const TimingStats& t, std::uint64_t n) {
  r.add("ms_median", t.median_ms).add("ms_min", t.min_ms).add("ms_max", t.max_ms);
  return r.add("gbps", static_cast<double>(n * sizeof(float)) / (t.median_ms * 1e6));
}

// The two sums at size n, one thread and every hardware thread: the exact input first, then the float (or exact) input,
// timed: its first run (a warm-up where there are any) is checked, and every other must return bitwise its result.
void add_sum_rows(const CpuOptions& o, float* host, std::uint64_t n, unsigned cores, Verdict& all,
                  std::vector<Record>& rows) {
  const auto sum = [&](unsigned threads) { return threads == 1 ? sum_loop(host, n) : sum_all_cores(host, n, threads); };
  generate_input(o.seed, 0, InputMode::kExact, host, n, exact_range(n));
  const SumReference exact = reference_sum(host, n);
  const float exact_results[] = {sum(1), sum(cores)};
  if (o.input == InputMode::kFloat) generate_input(o.seed, 0, InputMode::kFloat, host, n);
  const SumReference ref = o.input == InputMode::kFloat ? reference_sum(host, n) : exact;
  for (const int i : {0, 1}) {
    const unsigned threads = i == 0 ? 1 : cores;
    Verdict v;
    record(v, "exact", check_sum(exact_results[i], exact, InputMode::kExact, shape_of(n, threads), n));
    float result = 0;
    bool first = true, same = true;  // every run after the first: bitwise the first's (the checked) result
    const TimingStats t = time_it(o, [&] {
      const float got = sum(threads);
      if (first) result = got;
      same = same && (first || std::memcmp(&got, &result, sizeof got) == 0);
      first = false;
    });
    const SumCheck check = check_sum(result, ref, o.input, shape_of(n, threads), n);
    record(v, "float", check);
    v.add("timed", same, "a repetition returned a result other than the checked one");
    all.add_all(v);
    Record r = make_record(o, i == 0 ? "loop" : "all_cores", n, threads);
    r.add("exact_check", v.field("exact")).add("exact_result", static_cast<double>(exact_results[i]), 9);
    r.add("exact_sum", exact.sum, 17).add("result", static_cast<double>(result), 9).add("reference", ref.sum, 17);
    r.add("abs_error", check.error, 3).add("bound", check.tolerance, 3).add("float_check", v.field("float"));
    r.add("timed_check", v.field("timed")).add("check", v.word());
    rows.push_back(add_timing(r, t, n));
  }
}

// The copy of n floats to the GPU from `host` (pageable, as new[] gives it) or a pinned copy (read by the copy engine).
Record copy_row(const CpuOptions& o, const DeviceInfo& d, const float* host, std::uint64_t n, bool pinned,
                Verdict& all) {
  require_device_memory(d, n * sizeof(float), "the input", "-n");
  DeviceBuffer<float> device(n);
  float* locked = nullptr;
  if (pinned) {
    CUDA_CHECK(cudaMallocHost(&locked, n * sizeof(float)));
    std::memcpy(locked, host, n * sizeof(float));
  }
  const float* from = pinned ? locked : host;
  const TimingStats t = time_it(o, [&] {
    CUDA_CHECK(cudaMemcpy(device.get(), from, n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaDeviceSynchronize());  // from pageable memory cudaMemcpy may return before the last DMA lands
  });
  if (locked != nullptr) CUDA_CHECK(cudaFreeHost(locked));
  Verdict v;
  v.add("copy", device_fingerprint(device.get(), n) == fingerprint(host, n), "the GPU's copy differs from the host's");
  all.add_all(v);
  Record r = make_record(o, pinned ? "copy_pinned" : "copy", n, 1);
  r.add("device", d.name).add("copy_check", v.field("copy")).add("check", v.word());
  return add_timing(r, t, n);
}

void print_table(const CpuOptions& o, const std::vector<Record>& rows) {
  fmt::print("cpu_baseline on {}, {} hardware threads: input '{}', seed {}; median of {} reps after {} warm-up(s)\n",
             cpu_name(), std::thread::hardware_concurrency(), to_string(o.input), o.seed, o.reps, o.warmup);
  Table table = {{"row", "n", "threads", "check", "ms", "GB/s", "result", "error / bound"}};
  for (const auto& r : rows) {
    const std::string row = r.field("row");
    const bool copy = row.rfind("copy", 0) == 0;
    const std::string name = row == "loop" ? "float loop" : row == "all_cores" ? "every hw thread"
                             : row == "copy" ? "copy to the GPU (pageable)" : "copy to the GPU (pinned)";
    const std::string error = fmt::format("{} / {}{}", r.field("abs_error"), r.field("bound"),
                                          r.field("float_check") == "skipped" ? " (not judged)" : "");
    table.push_back({name, r.field("n"), r.field("threads"), r.field("check"),
                     fmt::format("{:.3f}", std::stod(r.field("ms_median"))),
                     fmt::format("{:.1f}", std::stod(r.field("gbps"))), copy ? "-" : r.field("result"),
                     copy ? "-" : error});
  }
  fmt::print("{}", text_table(table));
  fmt::print("  check: PASS = the exact input summed exactly, the float input within the bound of the sum's shape, and "
             "every repetition the checked result; the copy: the GPU's bytes equal the host's\n");
}

int run(const CpuOptions& o) {
  const std::uint64_t max_n = *std::max_element(o.sizes.begin(), o.sizes.end());
  const unsigned cores = o.threads != 0 ? o.threads : std::max(1u, std::thread::hardware_concurrency());
  const DeviceLookup lookup = o.no_copy ? DeviceLookup{} : find_device(o.device);  // --no-copy looks for no GPU
  if (lookup.exit_status != 0) {
    fmt::print(stderr, "cpu_baseline: {} (--no-copy times the CPU sums alone)\n", lookup.message);
    return lookup.exit_status;
  }
  auto host = host_floats(max_n, fmt::format("-n {}", max_n));
  std::vector<Record> rows;
  Verdict all;
  for (const std::uint64_t n : o.sizes) {
    progress(fmt::format("cpu_baseline: n = {}: one thread, then {}", n, cores));
    add_sum_rows(o, host.get(), n, cores, all, rows);
    for (const bool pinned : {false, true}) {
      if (!o.no_copy) rows.push_back(copy_row(o, lookup.info, host.get(), n, pinned, all));
    }
  }
  if (o.format == Format::kTable) print_table(o, rows);
  if (o.format != Format::kTable) print_records(o.format, rows);
  for (const auto& note : all.skipped()) fmt::print(stderr, "cpu_baseline: not judged: {}\n", note);
  for (const auto& failure : all.failures()) fmt::print(stderr, "cpu_baseline: FAIL {}\n", failure);
  return all.pass() ? 0 : 1;
}
}  // namespace
}  // namespace ladder

int main(int argc, char** argv) {
  ladder::CpuOptions o;
  const ladder::ParseOutcome parsed = ladder::parse_cpu_options(argc, argv, o);
  if (parsed.exit_status) return ladder::print_outcome(parsed);
  try {
    return ladder::run(o);
  } catch (const ladder::UsageError& e) {
    fmt::print(stderr, "cpu_baseline: {}\n", e.what());
    return 2;
  }
}
