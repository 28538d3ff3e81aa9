// The options of every program, each declared once on the command line of cli.hpp: that declaration is the parse,
// the check with its message, the help and the --describe entry. Host-only.
#include "options.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>

#include <fmt/format.h>

#include "ladder_version.hpp"

// A changed copy of a stage (a planted bug of maint/mutants.py, a variant built by ./ladder try) links a
// definition of these two (cmake/Ladder.cmake writes it), so that --version names the program that runs and says
// what it is a copy of; a stage itself defines neither, and its --version names the stage.
extern "C" const char* ladder_program_name() __attribute__((weak));
extern "C" const char* ladder_program_note() __attribute__((weak));

namespace ladder {

namespace {

// Each enum's words, in one table: what to_string() prints, what an option accepts, what --describe lists.
template <typename E>
using Names = std::vector<std::pair<const char*, E>>;
const Names<InputMode> kInputs = {{"float", InputMode::kFloat}, {"exact", InputMode::kExact}};
const Names<Format> kFormats = {{"table", Format::kTable}, {"csv", Format::kCsv}, {"json", Format::kJson}};
const Names<SelfTest> kSelfTests = {{"quick", SelfTest::kQuick}, {"full", SelfTest::kFull}};
const Names<Flush> kFlushes = {{"clean", Flush::kClean}, {"write", Flush::kWrite}, {"none", Flush::kNone}};
const Names<Regime> kRegimes = {{"stream", Regime::kStream}, {"tree", Regime::kTree}};
const Names<Combine> kCombines = {{"relaunch", Combine::kRelaunch},
                                  {"atomic", Combine::kAtomic},
                                  {"two-pass", Combine::kTwoPass},
                                  {"last-block", Combine::kLastBlock}};

template <typename E>
const char* name_of(const Names<E>& names, E value) {
  for (const auto& [name, v] : names) {
    if (v == value) return name;
  }
  return "?";
}

template <typename E>
E value_of(const Names<E>& names, const std::string& name) {  // a name the option's check accepted
  for (const auto& [n, v] : names) {
    if (name == n) return v;
  }
  return names.front().second;
}

template <typename E>
std::vector<std::string> words(const Names<E>& names) {
  std::vector<std::string> out;
  for (const auto& entry : names) out.emplace_back(entry.first);
  return out;
}

template <typename E>
std::string joined(const std::vector<E>& values, const char* sep = ", ") {
  std::string s;
  for (auto v : values) s += (s.empty() ? "" : sep) + std::string(to_string(v));
  return s;
}

constexpr std::uint64_t kMaxGemmDim = 1000000;  // keeps M / tile under the 65535-block grid limit
constexpr std::uint64_t kMaxU64 = ~std::uint64_t{0};
constexpr const char* kWhat = "What to run";
constexpr const char* kTiming = "Timing";
constexpr const char* kModes = "Modes and output";

std::string version_text(const std::string& program) {
  std::string v = fmt::format("{}: cuda-ladder {} (commit {})",
                              ladder_program_name != nullptr ? ladder_program_name() : program, LADDER_VERSION,
                              LADDER_COMMIT);
  if (ladder_program_note != nullptr) v += fmt::format(", {}", ladder_program_note());
  return v;
}

// The options every stage has, read as text where an enum takes the word.
struct CommonText {
  std::string input = "float", format = "table", self_test, flush = "clean";
  bool hot = false, no_shared_poison = false;
};

void add_run_options(CommandLine& cli, CommonOptions& o, CommonText& t, const std::string& input_help) {
  cli.choice("--input", t.input, words(kInputs), input_help, kWhat);
  cli.whole("--seed", o.seed, 0, kMaxU64, "S",
            "Input seed: the same seed gives bitwise the same input in every stage", kWhat);
}

void add_timing_options(CommandLine& cli, CommonOptions& o, CommonText& t) {
  cli.whole("--reps", o.reps, 1, 100000, "N", "Timed repetitions (the median is reported)", kTiming);
  cli.whole("--warmup", o.warmup, 0, 10000, "N", "Untimed runs before timing (at least one is made: it loads the "
                                                 "kernels)", kTiming);
  cli.choice("--flush", t.flush, words(kFlushes),
             "Before each timed rep: 'clean' = overwrite 4x L2 then read 2x L2 of other data; 'write' = only "
             "overwrite (dirty lines are written back during the timed run); 'none' = no flush",
             kTiming);
  cli.flag("--hot", t.hot, "Same as --flush none", kTiming);
  cli.excludes("--hot", "--flush", "--hot and --flush: give one (--hot is --flush none)");
  cli.whole("--device", o.device, 0, 1023, "I", "CUDA device index", kTiming);
}

void add_mode_options(CommandLine& cli, CommonOptions& o, CommonText& t) {
  cli.flag("--check-only", o.check_only,
           "Only the checks (the exact check, the probe, the measured input); no timing and no references", kModes);
  cli.choice("--self-test", t.self_test, words(kSelfTests),
             "Check every awkward size, block, input mode and launch this stage supports: 'full', or 'quick' (a "
             "small set for the sanitizers)",
             kModes);
  cli.excludes("--self-test", "--check-only", "--self-test and --check-only: give one (--self-test checks and never "
                                              "times)");
  cli.flag("--no-shared-poison", t.no_shared_poison,
           "Do not fill every SM's shared memory with NaN before each checked launch (for compute-sanitizer's "
           "racecheck and synccheck, which would trace each of those stores); a read of a shared slot no thread "
           "wrote may then pass",
           kModes);
  cli.flag("--list-devices", o.list_devices, "List the visible GPUs and exit (exit status 77 if there is none)",
           kModes);
  cli.choice("--format", t.format, words(kFormats), "Output: 'table' (for people), 'csv' or 'json'", kModes);
}

void finish_common(CommonOptions& o, const CommonText& t) {
  o.input = value_of(kInputs, t.input);
  o.format = value_of(kFormats, t.format);
  o.self_test = t.self_test.empty() ? SelfTest::kNone : value_of(kSelfTests, t.self_test);
  o.flush = t.hot ? Flush::kNone : value_of(kFlushes, t.flush);
  o.shared_poison = !t.no_shared_poison;
}

std::string common_values(const CommonOptions& o) {
  return fmt::format("\"reps\": {}, \"warmup\": {}, \"seed\": {}, \"input\": {}, \"flush\": {}, \"device\": {}",
                     o.reps, o.warmup, o.seed, json_quote(to_string(o.input)), json_quote(to_string(o.flush)),
                     o.device);
}

std::vector<std::string> numbers(const std::vector<std::uint64_t>& values) {
  std::vector<std::string> out;
  for (auto v : values) out.push_back(std::to_string(v));
  return out;
}

// --block: powers of two from 64 to 1024, one or a list.
std::optional<std::string> block_problem(const std::string& program, const std::string& text) {
  const auto blocks = parse_count_list(text);
  for (const auto& item : split_list(text)) {
    const auto b = parse_count(item);
    const bool negative = item.size() > 1 && item[0] == '-' && parse_count(item.substr(1));
    if (negative || (b && (*b < 64 || *b > 1024 || (*b & (*b - 1)) != 0))) {
      return fmt::format("--block {}: {} runs power-of-two blocks from 64 to 1024", item, program);
    }
  }
  if (!blocks || blocks->empty()) return fmt::format("--block '{}' is not a number or a list of numbers", text);
  return std::nullopt;
}

// --regime: stream, tree or both; a regime the stage does not run is refused in words that say why.
std::optional<std::string> regime_problem(const ReduceStage& stage, const std::string& text) {
  for (const auto& item : split_list(text)) {
    const auto known = std::find_if(kRegimes.begin(), kRegimes.end(), [&](const auto& r) { return item == r.first; });
    if (known == kRegimes.end()) {
      return fmt::format("--regime '{}' is not one of stream, tree (or the list stream,tree)", item);
    }
    if (std::find(stage.regimes.begin(), stage.regimes.end(), known->second) == stage.regimes.end()) {
      return fmt::format("--regime {}: {} has no grid-stride loop, so it runs only the {} regime", item, stage.name,
                         to_string(stage.regimes.front()));
    }
  }
  return std::nullopt;
}

// --combine: one of the stage's, a list of them, or all; one message for a misspelt combine and one the stage lacks.
std::optional<std::string> combine_problem(const ReduceStage& stage, const std::string& text) {
  if (text == "all") return std::nullopt;
  for (const auto& item : split_list(text)) {
    const auto ours = std::find_if(stage.combines.begin(), stage.combines.end(),
                                   [&](Combine c) { return item == to_string(c); });
    if (ours == stage.combines.end()) {
      return fmt::format("--combine '{}': {} combines partial sums by {}{}", item, stage.name, joined(stage.combines),
                         stage.combines.size() > 1 ? " (a list of them, or all)" : " only");
    }
  }
  return std::nullopt;
}

struct ReduceText {
  std::string sizes = "2^28", blocks = "1024", regimes, combines;
};

bool has_regime(const ReduceStage& stage, Regime regime) {
  return std::find(stage.regimes.begin(), stage.regimes.end(), regime) != stage.regimes.end();
}

void add_reduce_options(CommandLine& cli, const ReduceStage& stage, ReduceOptions& o, ReduceText& t) {
  const bool has_stream = has_regime(stage, Regime::kStream);
  // A stage without a stream regime (01) or with one combine still parses --regime, --grid and --combine, to refuse
  // them by name, but does not list them in its help.
  const std::string stream_group = has_stream ? kWhat : CommandLine::kHidden;
  const std::string program = stage.name;
  cli.sizes(t.sizes, kWhat);
  std::vector<std::string> regimes;
  for (auto r : stage.regimes) regimes.emplace_back(to_string(r));
  cli.text("--regime", t.regimes, [&stage](const std::string& s) { return regime_problem(stage, s); }, "MODE|LIST",
           "'stream': a grid that fills the GPU, many elements per thread; 'tree': one element per thread, grid = "
           "n / block; or both: 'stream,tree'",
           stream_group, regimes);
  cli.kind("list");
  cli.text("--block", t.blocks, [program](const std::string& s) { return block_problem(program, s); }, "B|LIST",
           "Threads per block: a power of two from 64 to 1024, or a list (64,128,256)", CommandLine::kLaunchGroup,
           {"64", "128", "256", "512", "1024"});
  cli.kind("blocks");
  cli.whole("--grid", o.grid, 0, 2147483647, "G",
            "Blocks in the first launch (stream regime); 0 = SMs x blocks per SM from the occupancy API",
            has_stream ? CommandLine::kLaunchGroup : CommandLine::kHidden);
  cli.whole("--offset", o.offset, 0, 1024, "F", "Start the input this many floats past a 256-byte aligned allocation",
            CommandLine::kLaunchGroup);
  std::vector<std::string> combines;
  for (auto c : stage.combines) combines.emplace_back(to_string(c));
  cli.text("--combine", t.combines, [&stage](const std::string& s) { return combine_problem(stage, s); }, "NAME|LIST",
           fmt::format("How block partial sums become one value: {}{}", joined(stage.combines),
                       combines.size() > 1 ? "; a list; or 'all'" : ""),
           combines.size() > 1 ? CommandLine::kLaunchGroup : CommandLine::kHidden, combines);
  cli.kind("list");
}

// The reduce stages' own modes, and which modes exclude each other.
void add_reduce_modes(CommandLine& cli, ReduceOptions& o) {
  cli.whole("--determinism", o.determinism, 2, 100000, "R",
            "Run the reduction this many times on one input and report whether the results are bitwise identical",
            kModes);
  cli.whole("--error-study", o.error_study, 1, 100000, "N",
            "Run this many random configurations (8 input seeds, n up to 2^24, block, regime, grid, combine, offset) "
            "on the float input and report each one's error / bound",
            kModes);
  cli.excludes("--self-test", "--determinism", "--self-test and --determinism: give one");
  cli.excludes("--error-study", "--self-test", "--error-study with --self-test or --determinism: give one");
  cli.excludes("--error-study", "--determinism", "--error-study with --self-test or --determinism: give one");
}

template <typename E>
std::vector<E> values_in(const Names<E>& names, const std::string& text) {
  std::vector<E> out;
  for (const auto& item : split_list(text)) out.push_back(value_of(names, item));
  return out;
}

std::string reduce_values(const ReduceOptions& o) {
  std::vector<std::uint64_t> blocks(o.blocks.begin(), o.blocks.end());
  std::vector<std::string> regimes, combines;
  for (auto r : o.regimes) regimes.emplace_back(to_string(r));
  for (auto c : o.combines) combines.emplace_back(to_string(c));
  return fmt::format("\"sizes\": {}, \"blocks\": {}, \"regimes\": {}, \"combines\": {}, \"grid\": {}, \"offset\": {}, {}",
                     json_list(numbers(o.sizes), false), json_list(numbers(blocks), false), json_list(regimes),
                     json_list(combines), o.grid, o.offset, common_values(o));
}

}  // namespace

const char* to_string(InputMode mode) { return name_of(kInputs, mode); }
const char* to_string(Format format) { return name_of(kFormats, format); }
const char* to_string(Flush flush) { return name_of(kFlushes, flush); }
const char* to_string(Regime regime) { return name_of(kRegimes, regime); }
const char* to_string(Combine combine) { return name_of(kCombines, combine); }

int print_outcome(const ParseOutcome& outcome) {
  const int status = outcome.exit_status.value_or(0);
  std::fputs((outcome.text + "\n").c_str(), status == 0 ? stdout : stderr);
  return status;
}

ParseOutcome parse_reduce_options(const ReduceStage& stage, int argc, const char* const* argv, ReduceOptions& out) {
  CommandLine cli(stage.name, fmt::format("{}: float sum reduction, checked against a CPU oracle and timed beside CUB",
                                          stage.name));
  CommonText common;
  ReduceText text{"2^28", "1024", to_string(stage.regimes.front()), to_string(stage.combines.front())};
  add_reduce_options(cli, stage, out, text);
  add_run_options(cli, out, common,
                  "Input that is timed: 'float' = uniform random in [0,1), checked within a derived bound; 'exact' = "
                  "random dyadic values k/R in [-1,1], whose sum is exact in float, checked for equality (every run "
                  "also makes the exact check and the precision probe)");
  add_timing_options(cli, out, common);
  add_mode_options(cli, out, common);
  add_reduce_modes(cli, out);
  const bool has_stream = has_regime(stage, Regime::kStream);
  cli.examples({{"", "the default run: check, time, compare with CUB"},
                {stage.combines.size() > 1 ? "-n 2^10..2^24 --combine all"
                 : has_stream             ? "-n 2^10..2^24 --regime stream,tree"
                                          : "-n 2^10..2^24 --block 64,256",
                 "several sizes (and launches) in one table"},
                {"--self-test full", "every awkward size, block, input and alignment"}});
  cli.set_version(version_text(stage.name));
  std::vector<std::string> regimes, combines;
  for (auto r : stage.regimes) regimes.emplace_back(to_string(r));
  for (auto c : stage.combines) combines.emplace_back(to_string(c));
  cli.set_role(fmt::format("\"role\": \"reduce\",\n  \"regimes\": {},\n  \"combines\": {}", json_list(regimes),
                           json_list(combines)));
  const auto resolve = [&] {
    out.sizes = *parse_count_list(text.sizes);
    const std::vector<std::uint64_t> blocks = *parse_count_list(text.blocks);
    out.blocks.assign(blocks.begin(), blocks.end());
    out.regimes = values_in(kRegimes, text.regimes);
    out.combines = text.combines == "all" ? stage.combines : values_in(kCombines, text.combines);
    finish_common(out, common);
  };
  if (auto ended = cli.parse(argc, argv, [&] { return resolve(), reduce_values(out); })) return *ended;
  resolve();
  if (out.grid != 0 && out.regimes.size() == 1 && out.regimes.front() == Regime::kTree) {
    return cli.usage_error(fmt::format("--grid {}: the tree regime sizes its grid from n (n / block); --grid applies "
                                       "to the stream regime",
                                       out.grid));
  }
  return {};
}

namespace {

// -m, -n, -k and --size of the GEMM: counts (4096, 2^12) from 1 to kMaxGemmDim.
TextCheck gemm_dim(const std::string& name) {
  return [name](const std::string& text) -> std::optional<std::string> {
    const auto v = parse_count(text);
    const std::string s = split_list(text).front();  // trimmed
    const bool negative = s.size() > 1 && s[0] == '-' && parse_count(s.substr(1));
    if (negative || (v && (*v < 1 || *v > kMaxGemmDim))) {
      return fmt::format("{} {} is out of range: matrix sizes run from 1 to {}", name, v ? std::to_string(*v) : s,
                         kMaxGemmDim);
    }
    if (!v) return fmt::format("{} '{}' is not a whole number: give one from 1 to {}", name, text, kMaxGemmDim);
    return std::nullopt;
  };
}

struct GemmText {
  std::string m = "4096", n = "4096", k = "4096", size = "4096", tile = "16", pad = "off";
};

void add_gemm_options(CommandLine& cli, GemmText& t) {
  const std::string range = fmt::format(", 1 to {}", kMaxGemmDim);
  const std::vector<std::string> none;
  cli.text("-m", t.m, gemm_dim("-m"), "M", "Rows of A and C" + range, kWhat, none, 1, kMaxGemmDim);
  cli.text("-n", t.n, gemm_dim("-n"), "N", "Columns of B and C" + range, kWhat, none, 1, kMaxGemmDim);
  cli.text("-k", t.k, gemm_dim("-k"), "K", "Columns of A, rows of B" + range, kWhat, none, 1, kMaxGemmDim);
  cli.text("--size", t.size, gemm_dim("--size"), "S", "Set M = N = K at once" + range, kWhat, none, 1, kMaxGemmDim);
  for (const char* dim : {"-m", "-n", "-k"}) {
    cli.excludes("--size", dim, "--size sets M = N = K at once: give --size or -m/-n/-k, not both");
  }
  cli.choice("--tile", t.tile, {"16", "32"}, "Shared-memory tile edge (threads per block = tile x tile)",
             CommandLine::kLaunchGroup);
  cli.choice("--pad", t.pad, {"off", "on", "both"},
             "Pad each shared tile row by one float (16x17 instead of 16x16): off, on, or both (two rows)",
             CommandLine::kLaunchGroup);
}

}  // namespace

ParseOutcome parse_gemm_options(const char* stage_name, int argc, const char* const* argv, GemmOptions& out) {
  const std::string program = stage_name;
  CommandLine cli(program, fmt::format("{}: C = A * B in float (row-major), checked against a CPU oracle and timed "
                                       "beside cuBLAS and a naive kernel",
                                       program));
  CommonText common;
  GemmText text;
  out.reps = 10;  // launches of milliseconds each: their spread (ms_min..ms_max in every row) shows what 10 give
  out.warmup = 3;
  add_gemm_options(cli, text);
  add_run_options(cli, out, common,
                  "Input that is timed: 'float' = uniform random in [0,1), checked within a derived bound; 'exact' = "
                  "random values k/4, k in [-4,4] (not 0), whose products and sums are exact in float, checked for "
                  "equality (every run also makes the exact check and the precision probes)");
  add_timing_options(cli, out, common);
  add_mode_options(cli, out, common);
  cli.examples({{"", "4096 x 4096 x 4096: check, time, compare with cuBLAS"},
                {"-m 1000 -n 17 -k 300", "any M, N and K"},
                {"--tile 32 --pad both", "the 32 x 32 tile, with and without padding"}});
  cli.set_version(version_text(program));
  cli.set_role("\"role\": \"gemm\"");
  const auto resolve = [&] {
    const bool square = cli.given("--size");
    out.m = *parse_count(square ? text.size : text.m);
    out.n = *parse_count(square ? text.size : text.n);
    out.k = *parse_count(square ? text.size : text.k);
    out.tile = text.tile == "32" ? 32 : 16;
    out.pads = text.pad == "both" ? std::vector<bool>{false, true} : std::vector<bool>{text.pad == "on"};
    finish_common(out, common);
  };
  const auto values = [&] {
    resolve();
    return fmt::format("\"m\": {}, \"n\": {}, \"k\": {}, \"tile\": {}, \"pad\": {}, {}", out.m, out.n, out.k, out.tile,
                       json_quote(text.pad), common_values(out));
  };
  if (auto ended = cli.parse(argc, argv, values)) return *ended;
  resolve();
  return {};
}

ParseOutcome parse_cpu_options(int argc, const char* const* argv, CpuOptions& out) {
  const std::string program = "cpu_baseline";
  CommandLine cli(program, "cpu_baseline: the CPU's float sum of the ladder's input (one thread, then every hardware thread), "
                           "checked like a stage's, and the copy of that input to the GPU, timed");
  std::string sizes = "2^28", input = "float", format = "table";
  cli.sizes(sizes, kWhat);
  cli.whole("--threads", out.threads, 0, 1024, "T", "Threads of the all-cores sum; 0 = every hardware thread", kWhat);
  cli.choice("--input", input, words(kInputs), "Input that is timed: 'float' (checked within a derived bound) or "
                                               "'exact' (checked for equality); every run also makes the exact check",
             kWhat);
  cli.whole("--seed", out.seed, 0, kMaxU64, "S",
            "Input seed, as the stages take it: the same seed is bitwise the same input", kWhat);
  cli.whole("--reps", out.reps, 1, 100000, "N", "Timed repetitions (the median is reported)", kTiming);
  cli.whole("--warmup", out.warmup, 0, 10000, "N", "Untimed runs before timing", kTiming);
  cli.whole("--device", out.device, 0, 1023, "I", "CUDA device the input is copied to", kTiming);
  cli.flag("--no-copy", out.no_copy, "Only the CPU sums: no copy to the GPU (needs no GPU)", kModes);
  cli.choice("--format", format, words(kFormats), "Output: 'table' (for people), 'csv' or 'json'", kModes);
  cli.examples({{"", "2^28 floats: one thread, every hardware thread, the copy to the GPU"},
                {"-n 2^20..2^28 --threads 4", "several sizes, the all-cores sum on four threads"}});
  cli.set_version(version_text(program));
  cli.set_role("\"role\": \"cpu\"");
  const auto resolve = [&] {
    out.sizes = *parse_count_list(sizes);
    out.input = value_of(kInputs, input);
    out.format = value_of(kFormats, format);
  };
  const auto values = [&] {
    resolve();
    return fmt::format("\"sizes\": {}, \"threads\": {}, \"reps\": {}, \"warmup\": {}, \"seed\": {}, \"input\": {}",
                       json_list(numbers(out.sizes), false), out.threads, out.reps, out.warmup, out.seed,
                       json_quote(input));
  };
  if (auto ended = cli.parse(argc, argv, values)) return *ended;
  resolve();
  return {};
}

}  // namespace ladder
