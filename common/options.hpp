// The command line of every program, on CLI11 in options.cpp (host-only: CLI11 never goes through nvcc); --describe
// prints it as the JSON that ./ladder, the docs and the tests read instead of restating any option or default.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "reduce_stage.hpp"

namespace ladder {
enum class InputMode { kFloat, kExact };  // --input: what each word means is its help (options.cpp)
enum class Format { kTable, kCsv, kJson };
enum class SelfTest { kNone, kQuick, kFull };
enum class Flush { kClean, kWrite, kNone };  // --flush: how each evicts the input from L2 is its help (options.cpp)

const char* to_string(InputMode mode);
const char* to_string(Regime regime);
const char* to_string(Combine combine);
const char* to_string(Flush flush);

// Options every stage has (reduce and GEMM alike).
struct CommonOptions {
  int reps = 50;                 // timed repetitions
  int warmup = 5;                // untimed runs before them
  std::uint64_t seed = 1;        // input seed: the same seed gives bitwise the same input in every stage
  InputMode input = InputMode::kFloat;
  Flush flush = Flush::kClean;   // --flush
  int device = 0;
  Format format = Format::kTable;
  bool check_only = false;       // check once, skip timing and the vendor reference
  SelfTest self_test = SelfTest::kNone;
  bool list_devices = false;
  bool shared_poison = true;     // NaN in every SM's shared memory before each checked launch (--no-shared-poison)
  int time_limit = -1;           // seconds a checked launch or timed series may take: -1 from its work, 0 none
};

struct ReduceOptions : CommonOptions {
  std::vector<std::uint64_t> sizes = {std::uint64_t{1} << 28};  // -n: one size or a list
  std::vector<unsigned> blocks = {1024};                         // --block: one or a list
  unsigned grid = 0;                                             // 0: from the occupancy API (stream regime)
  std::vector<Regime> regimes;                                   // --regime: one or a list
  unsigned offset = 0;                                           // input pointer = allocation + offset floats
  std::vector<Combine> combines;                                 // empty: the stage's default
};

struct GemmOptions : CommonOptions {
  std::uint64_t m = 4096, n = 4096, k = 4096;
  int tile = 16;
  std::vector<bool> pads = {false};  // --pad off | on | both
};

// cpu_baseline's options (reps, warmup, seed, input, device and format among the common ones).
struct CpuOptions : CommonOptions {
  std::vector<std::uint64_t> sizes = {std::uint64_t{1} << 28};
  unsigned threads = 0;  // the all-cores sum's threads; 0: std::thread::hardware_concurrency()
  bool no_copy = false;  // --no-copy: the CPU rows only
};

// Either run (no exit status), or stop with an exit status and the text to print: the help, the version or the
// description (status 0, stdout), or one error line (status 2, stderr).
struct ParseOutcome {
  std::optional<int> exit_status;
  std::string text;
};

ParseOutcome parse_reduce_options(const ReduceStage& stage, int argc, const char* const* argv, ReduceOptions& out);
ParseOutcome parse_gemm_options(const char* stage_name, int argc, const char* const* argv, GemmOptions& out);
ParseOutcome parse_cpu_options(int argc, const char* const* argv, CpuOptions& out);
int print_outcome(const ParseOutcome& outcome);  // prints its text, returns its exit status

// A count: "4096", "2^28", "3*2^20", "20000000", "1e6"; nullopt if it is not a whole number >= 0 that 64 bits hold.
std::optional<std::uint64_t> parse_count(const std::string& text);
// A comma-separated list of counts, where "a..b" (powers of two a and b) means a, 2a, 4a, ..., b.
std::optional<std::vector<std::uint64_t>> parse_count_list(const std::string& text);
std::string json_quote(const std::string& text);  // a JSON string literal
}  // namespace ladder
