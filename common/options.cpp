// Command-line parsing with CLI11. Host-only: CLI11 is slow and noisy to compile under nvcc.
#include "options.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <regex>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "ladder_version.hpp"

// A changed copy of a stage (a planted bug of tests/mutants.py, a variant built by ./ladder try) links a
// definition of these two (cmake/Ladder.cmake writes it), so that --version names the program that runs and says
// what it is a copy of; a stage itself defines neither, and its --version names the stage.
extern "C" const char* ladder_program_name() __attribute__((weak));
extern "C" const char* ladder_program_note() __attribute__((weak));

namespace ladder {

const char* to_string(InputMode mode) { return mode == InputMode::kFloat ? "float" : "exact"; }
const char* to_string(Format format) {
  switch (format) {
    case Format::kTable: return "table";
    case Format::kCsv: return "csv";
    case Format::kJson: return "json";
  }
  return "?";
}
const char* to_string(Flush flush) {
  switch (flush) {
    case Flush::kClean: return "clean";
    case Flush::kWrite: return "write";
    case Flush::kNone: return "none";
  }
  return "?";
}
const char* to_string(Regime regime) { return regime == Regime::kStream ? "stream" : "tree"; }
const char* to_string(Combine combine) {
  switch (combine) {
    case Combine::kRelaunch: return "relaunch";
    case Combine::kAtomic: return "atomic";
    case Combine::kTwoPass: return "two-pass";
    case Combine::kLastBlock: return "last-block";
  }
  return "?";
}

namespace {

constexpr std::uint64_t kMaxSize = std::uint64_t{1} << 36;  // 256 GiB of floats: more than any GPU holds
constexpr std::uint64_t kMaxGemmDim = 1000000;             // keeps M / tile under the 65535-block grid limit

std::string trim(std::string s) {
  auto not_space = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

// "-5": a number, but a negative one, which every option refuses as out of range (not as "not a number").
bool negative_number(const std::string& text) {
  const std::string s = trim(text);
  return s.size() > 1 && s[0] == '-' && all_digits(s.substr(1));
}

std::optional<std::uint64_t> parse_digits(const std::string& s) {
  if (!all_digits(s) || s.size() > 19) return std::nullopt;
  return std::stoull(s);
}

// "x" or "x*2^k" or "2^k" or "<mantissa>e<exp>", whole numbers only.
std::optional<std::uint64_t> parse_count_impl(const std::string& text) {
  const std::string s = trim(text);
  if (auto v = parse_digits(s)) return v;
  if (auto caret = s.find('^'); caret != std::string::npos) {
    std::uint64_t factor = 1;
    std::string base = s.substr(0, caret);
    if (auto star = base.find('*'); star != std::string::npos) {
      auto f = parse_digits(base.substr(0, star));
      if (!f) return std::nullopt;
      factor = *f;
      base = base.substr(star + 1);
    }
    auto exponent = parse_digits(s.substr(caret + 1));
    if (base != "2" || !exponent || *exponent > 62) return std::nullopt;
    const std::uint64_t power = std::uint64_t{1} << *exponent;
    if (factor != 0 && power > std::numeric_limits<std::uint64_t>::max() / factor) return std::nullopt;
    return factor * power;
  }
  if (auto e = s.find_first_of("eE"); e != std::string::npos) {
    auto mantissa = parse_digits(s.substr(0, e));
    auto exponent = parse_digits(s.substr(e + 1));
    if (!mantissa || !exponent || *exponent > 18) return std::nullopt;
    std::uint64_t v = *mantissa;
    for (std::uint64_t i = 0; i < *exponent; ++i) {
      if (v > std::numeric_limits<std::uint64_t>::max() / 10) return std::nullopt;
      v *= 10;
    }
    return v;
  }
  return std::nullopt;
}

// One error line, prefixed with the program name.
ParseOutcome usage_error(const std::string& program, const std::string& message) {
  return {2, fmt::format("{}: error: {} (see {} --help)", program, message, program)};
}

bool is_power_of_two(std::uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

template <typename Enum>
std::optional<Enum> lookup(const std::map<std::string, Enum>& names, const std::string& key) {
  auto it = names.find(key);
  if (it == names.end()) return std::nullopt;
  return it->second;
}

const std::map<std::string, InputMode> kInputNames = {{"float", InputMode::kFloat}, {"exact", InputMode::kExact}};
const std::map<std::string, Format> kFormatNames = {
    {"table", Format::kTable}, {"csv", Format::kCsv}, {"json", Format::kJson}};
const std::map<std::string, SelfTest> kSelfTestNames = {{"quick", SelfTest::kQuick}, {"full", SelfTest::kFull}};
const std::map<std::string, Flush> kFlushNames = {
    {"clean", Flush::kClean}, {"write", Flush::kWrite}, {"none", Flush::kNone}};
const std::map<std::string, Regime> kRegimeNames = {{"stream", Regime::kStream}, {"tree", Regime::kTree}};
const std::map<std::string, Combine> kCombineNames = {{"relaunch", Combine::kRelaunch},
                                                      {"atomic", Combine::kAtomic},
                                                      {"two-pass", Combine::kTwoPass},
                                                      {"last-block", Combine::kLastBlock}};

// The options every stage has, read as text by CLI11 and checked here, so that every wrong value gets one line
// in the same words: the option, the value, and what is accepted.
struct CommonText {
  std::string input = "float", format = "table", self_test, flush = "clean";
  std::string reps, warmup, seed, device, determinism, error_study;
  bool hot = false, no_shared_poison = false;
};

// "--reps 'x'": a whole number in [lo, hi], or the message that says why not.
std::optional<std::string> read_number(const char* name, const std::string& text, std::uint64_t lo, std::uint64_t hi,
                                       std::uint64_t& out) {
  const std::string s = trim(text);
  if (negative_number(s)) {
    return fmt::format("{} {} is out of range: give a whole number from {} to {}", name, s, lo, hi);
  }
  if (!all_digits(s)) return fmt::format("{} '{}' is not a whole number: give one from {} to {}", name, text, lo, hi);
  errno = 0;
  const unsigned long long parsed = std::strtoull(s.c_str(), nullptr, 10);
  if (errno == ERANGE) {  // more than 64 bits hold
    return fmt::format("{} {} is out of range: give a whole number from {} to {}", name, s, lo, hi);
  }
  const std::optional<std::uint64_t> v = parsed;
  if (*v < lo || *v > hi) {
    return fmt::format("{} {} is out of range: give a whole number from {} to {}", name, *v, lo, hi);
  }
  out = *v;
  return std::nullopt;
}

template <typename T>
std::optional<std::string> read_number_as(const char* name, const std::string& text, std::uint64_t lo,
                                          std::uint64_t hi, T& out) {
  std::uint64_t v = 0;
  if (auto error = read_number(name, text, lo, hi, v)) return error;
  out = static_cast<T>(v);
  return std::nullopt;
}

std::optional<std::string> read_choice(const char* name, const std::string& text,
                                       const std::vector<std::string>& choices) {
  if (std::find(choices.begin(), choices.end(), text) != choices.end()) return std::nullopt;
  std::string list;
  for (const auto& c : choices) list += (list.empty() ? "" : ", ") + c;
  return fmt::format("{} '{}' is not one of {}", name, text, list);
}

void add_common_options(CLI::App& app, CommonOptions& o, CommonText& t, bool reduction) {
  t.reps = std::to_string(o.reps);
  t.warmup = std::to_string(o.warmup);
  t.seed = std::to_string(o.seed);
  t.device = std::to_string(o.device);
  app.add_option("--reps", t.reps, "Timed repetitions, 1 to 100000 (the median is reported)")
      ->capture_default_str()
      ->type_name("N");
  app.add_option("--warmup", t.warmup, "Untimed runs before timing, 0 to 10000 (at least one is made: it loads the kernels)")
      ->capture_default_str()
      ->type_name("N");
  app.add_option("--seed", t.seed, "Input seed, a whole number from 0 to 2^64-1: the same seed gives bitwise the same "
                                   "input in every stage")
      ->capture_default_str()
      ->type_name("S");
  app.add_option("--input", t.input,
                 reduction ? "Input that is timed: 'float' = uniform random in [0,1), checked within a derived bound; "
                             "'exact' = random dyadic values k/R in [-1,1], whose sum is exact in float, checked "
                             "for equality (every run also makes the exact check and the precision probe)"
                           : "Input that is timed: 'float' = uniform random in [0,1), checked within a derived bound; "
                             "'exact' = random values k/4, k in [-4,4] (not 0), whose products and sums are exact "
                             "in float, checked for equality (every run also makes the exact check and the "
                             "precision probes)")
      ->capture_default_str()
      ->type_name("MODE");
  app.add_option("--flush", t.flush,
                 "Before each timed rep: 'clean' = overwrite 4x L2 then read 2x L2 of other data; "
                 "'write' = only overwrite (dirty lines are written back during the timed run); 'none' = no flush")
      ->capture_default_str()
      ->type_name("MODE");
  app.add_flag("--hot", t.hot, "Same as --flush none");
  app.add_option("--device", t.device, "CUDA device index, 0 to 1023")->capture_default_str()->type_name("I");
  app.add_option("--format", t.format, "Output: 'table' (for people), 'csv' or 'json'")
      ->capture_default_str()
      ->type_name("FORMAT");
  app.add_flag("--check-only", o.check_only,
               "Only the checks (the exact check, the probe, the measured input); no timing and no references");
  app.add_option("--self-test", t.self_test,
                 "Check every awkward size, block, input mode and launch this stage supports: 'full', or 'quick' "
                 "(a small set for the sanitizers)")
      ->type_name("quick|full");
  if (reduction) {
    app.add_option("--determinism", t.determinism,
                   "Run the reduction this many times (2 to 100000) on one input and report whether the results "
                   "are bitwise identical")
        ->type_name("R");
    app.add_option("--error-study", t.error_study,
                   "Run this many random configurations (1 to 100000: 8 input seeds, n up to 2^24, block, regime, "
                   "grid, combine, offset) on the float input and report each one's error / bound")
        ->type_name("N");
  }
  app.add_flag("--no-shared-poison", t.no_shared_poison,
               "Do not fill every SM's shared memory with NaN before each checked launch (for compute-sanitizer's "
               "racecheck and synccheck, which would trace each of those stores); a read of a shared slot no thread "
               "wrote may then pass");
  app.add_flag("--list-devices", o.list_devices, "List the visible GPUs and exit (exit status 77 if there is none)");
  std::string version = fmt::format("cuda-ladder {} (commit {})", LADDER_VERSION, LADDER_COMMIT);
  if (ladder_program_note != nullptr) version += fmt::format(", {}", ladder_program_note());
  app.set_version_flag("--version", version, "Print the project version and the commit this program was built from");
}

// The checks CLI11 does not do for us; the first problem found, in the project's words.
std::optional<std::string> finish_common(const CLI::App& app, CommonOptions& o, const CommonText& t) {
  if (auto e = read_number_as("--reps", t.reps, 1, 100000, o.reps)) return e;
  if (auto e = read_number_as("--warmup", t.warmup, 0, 10000, o.warmup)) return e;
  if (auto e = read_number("--seed", t.seed, 0, std::numeric_limits<std::uint64_t>::max(), o.seed)) return e;
  if (auto e = read_number_as("--device", t.device, 0, 1023, o.device)) return e;
  if (app.get_option_no_throw("--determinism") != nullptr && app.count("--determinism") > 0) {
    if (auto e = read_number_as("--determinism", t.determinism, 2, 100000, o.determinism)) return e;
  }
  if (app.get_option_no_throw("--error-study") != nullptr && app.count("--error-study") > 0) {
    if (auto e = read_number_as("--error-study", t.error_study, 1, 100000, o.error_study)) return e;
    if (!t.self_test.empty() || !t.determinism.empty()) {
      return std::string("--error-study with --self-test or --determinism: give one");
    }
  }
  if (auto e = read_choice("--input", t.input, {"float", "exact"})) return e;
  if (auto e = read_choice("--flush", t.flush, {"clean", "write", "none"})) return e;
  if (auto e = read_choice("--format", t.format, {"table", "csv", "json"})) return e;
  if (app.count("--self-test") > 0) {
    if (auto e = read_choice("--self-test", t.self_test, {"quick", "full"})) return e;
  }
  if (t.hot && app.count("--flush") > 0) return std::string("--hot and --flush: give one (--hot is --flush none)");
  if (!t.self_test.empty() && o.check_only) {
    return std::string("--self-test and --check-only: give one (--self-test checks and never times)");
  }
  if (!t.self_test.empty() && !t.determinism.empty()) return std::string("--self-test and --determinism: give one");
  o.input = *lookup(kInputNames, t.input);
  o.format = *lookup(kFormatNames, t.format);
  o.self_test = t.self_test.empty() ? SelfTest::kNone : *lookup(kSelfTestNames, t.self_test);
  o.flush = t.hot ? Flush::kNone : *lookup(kFlushNames, t.flush);
  o.shared_poison = !t.no_shared_poison;
  return std::nullopt;
}

// "--reps: 1 required TEXT missing" -> "--reps"; the option a CLI11 message begins with.
std::string leading_option(const std::string& what) { return what.substr(0, what.find(':')); }

// Runs CLI11; returns an outcome when parsing ended the program (help, version or error). CLI11's own
// messages are put in the project's words for the errors a person makes: an unknown option, a missing value.
std::optional<ParseOutcome> run_cli(CLI::App& app, const std::string& program, int argc, const char* const* argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    return ParseOutcome{0, app.help()};
  } catch (const CLI::CallForAllHelp&) {
    return ParseOutcome{0, app.help("", CLI::AppFormatMode::All)};
  } catch (const CLI::CallForVersion& e) {
    return ParseOutcome{0, fmt::format("{}: {}", ladder_program_name != nullptr ? ladder_program_name() : program,
                                       e.what())};
  } catch (const CLI::ExtrasError&) {
    const auto extras = app.remaining();
    const auto option = std::find_if(extras.begin(), extras.end(),
                                     [](const std::string& x) { return x.size() > 1 && x[0] == '-' && x != "--"; });
    if (option != extras.end()) return usage_error(program, fmt::format("{}: {} has no such option", *option, program));
    const auto stray = std::find_if(extras.begin(), extras.end(), [](const std::string& x) { return x != "--"; });
    return usage_error(program, fmt::format("'{}': {} takes options only, no other arguments",
                                            stray != extras.end() ? *stray : extras.front(), program));
  } catch (const CLI::ArgumentMismatch& e) {
    const std::string what = e.what();
    if (what.find("received") != std::string::npos) {  // "At Most 1 required but received 2"
      return usage_error(program, fmt::format("{} is given twice: give it once",
                                              leading_option(what)));
    }
    return usage_error(program, fmt::format("{} needs a value", leading_option(what)));
  } catch (const CLI::ParseError& e) {
    return usage_error(program, e.what());
  }
  return std::nullopt;
}

// "a, b,c" -> {"a", "b", "c"}
std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    items.push_back(trim(text.substr(start, comma - start)));
    start = comma + 1;
  }
  return items;
}

// What is wrong with one item "a..b" of a size list whose ends are numbers, or nullopt when the item is not such a
// range: a range doubles from one power of two up to another.
std::optional<std::string> range_problem(const std::string& item) {
  const auto dots = item.find("..");
  if (dots == std::string::npos) return std::nullopt;
  const std::string lo_text = trim(item.substr(0, dots)), hi_text = trim(item.substr(dots + 2));
  const auto lo = parse_count(lo_text), hi = parse_count(hi_text);
  if (!lo || !hi) return std::nullopt;
  if (!is_power_of_two(*lo) || !is_power_of_two(*hi)) {
    return fmt::format("-n/--size '{}': a range a..b doubles from a to b, so both ends are powers of two (2^10..2^30)",
                       item);
  }
  if (*lo > *hi) {
    return fmt::format("-n/--size '{}' runs backwards: a range goes from the smaller power of two up ({}..{})", item,
                       hi_text, lo_text);
  }
  return std::nullopt;
}

// The end of a program's --help: examples (arguments and what they do) and the exit statuses.
std::string examples(const std::string& program, const std::vector<std::pair<std::string, std::string>>& lines) {
  std::string text = "Examples:\n";
  for (const auto& [args, what] : lines) {
    text += fmt::format("  {:<44} {}\n", args.empty() ? program : program + " " + args, what);
  }
  return text + "\nExit status: 0 pass, 1 a check failed, 2 usage or runtime error, 77 no usable GPU.";
}

std::string join_names(const std::vector<Combine>& combines) {
  std::string s;
  for (auto c : combines) s += (s.empty() ? "" : ", ") + std::string(to_string(c));
  return s;
}

}  // namespace

std::optional<std::uint64_t> parse_count(const std::string& text) { return parse_count_impl(text); }

std::optional<std::vector<std::uint64_t>> parse_count_list(const std::string& text) {
  std::vector<std::uint64_t> values;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = trim(text.substr(start, comma - start));
    if (auto dots = item.find(".."); dots != std::string::npos) {
      auto lo = parse_count(item.substr(0, dots));
      auto hi = parse_count(item.substr(dots + 2));
      if (!lo || !hi || !is_power_of_two(*lo) || !is_power_of_two(*hi) || *lo > *hi) return std::nullopt;
      for (std::uint64_t v = *lo;; v *= 2) {  // no overflow: stops at hi, which is at most 2^63
        values.push_back(v);
        if (v >= *hi) break;
      }
    } else {
      auto v = parse_count(item);
      if (!v) return std::nullopt;
      values.push_back(*v);
    }
    start = comma + 1;
  }
  return values;
}

// -n/--size, as the stages and cpu_baseline take it; parse_sizes reads it.
void add_size_option(CLI::App& app, std::string& size_text) {
  app.add_option("-n,--size", size_text,
                 "Number of floats: 268435456, 2^28, 1e6, or a list (1000,2^20) or range of powers of two "
                 "(2^10..2^30), from 1 to 2^36")
      ->capture_default_str()
      ->type_name("N|LIST|RANGE");
}

// -n/--size: one size, a list or a range of powers of two, each from 1 to kMaxSize; an outcome on a bad one.
std::optional<ParseOutcome> parse_sizes(const std::string& program, const std::string& size_text,
                                        std::vector<std::uint64_t>& out) {
  const auto size_out_of_range = [&](const auto& size) {
    return usage_error(program, fmt::format("-n/--size {} is out of range: sizes run from 1 to 2^36", size));
  };
  auto sizes = parse_count_list(size_text);
  if (!sizes || sizes->empty()) {
    // A negative number, or one too large for 64 bits, is out of range like any other size outside 1..2^36, not
    // "not a size".
    for (const auto& item : split_list(size_text)) {
      // Well-formed whole numbers (x, x*2^k, 2^k, xeK) that do not fit in 64 bits.
      static const std::regex kWhole(R"(\d+|\d+\*2\^\d+|2\^\d+|\d+[eE]\d+)");
      if (negative_number(item) || (std::regex_match(item, kWhole) && !parse_count_list(item))) {
        return size_out_of_range(trim(item));
      }
      if (auto problem = range_problem(item)) return usage_error(program, *problem);
    }
    return usage_error(program, fmt::format("-n/--size '{}' is not a size: give a whole number from 1 to 2^36 "
                                            "(268435456, 2^28, 1e6), a list, or a range like 2^10..2^30",
                                            size_text));
  }
  for (auto n : *sizes) {
    if (n < 1 || n > kMaxSize) return size_out_of_range(n);
  }
  out = *sizes;
  return std::nullopt;
}

ParseOutcome parse_reduce_options(const ReduceStage& stage, int argc, const char* const* argv, ReduceOptions& out) {
  const std::string program = stage.name;
  CLI::App app{fmt::format("{}: float sum reduction, checked against a CPU oracle and timed beside CUB", program),
               program};
  CommonText common;
  std::string size_text = "2^28", block_text = "1024", regime_text = to_string(stage.regimes.front());
  std::string combine_text = to_string(stage.combines.front());
  const bool has_stream = std::find(stage.regimes.begin(), stage.regimes.end(), Regime::kStream) != stage.regimes.end();

  add_size_option(app, size_text);
  app.add_option("--block", block_text, "Threads per block: a power of two from 64 to 1024, or a list (64,128,256)")
      ->capture_default_str()
      ->type_name("B|LIST");
  // A stage without a stream regime (01) still parses --regime and --grid, to refuse them by name, but does not
  // list them in its help.
  const std::string stream_group = has_stream ? "Options" : "";
  std::string grid_text = "0", offset_text = "0";
  app.add_option("--grid", grid_text,
                 "Blocks in the first launch (stream regime), 0 to 2^31-1; 0 = SMs x blocks per SM from the occupancy "
                 "API")
      ->capture_default_str()
      ->type_name("G")
      ->group(stream_group);
  app.add_option("--regime", regime_text,
                 "'stream': a grid that fills the GPU, many elements per thread; "
                 "'tree': one element per thread, grid = n / block; or both: 'stream,tree'")
      ->capture_default_str()
      ->type_name("MODE|LIST")
      ->group(stream_group);
  app.add_option("--offset", offset_text, "Start the input this many floats (0 to 1024) past a 256-byte aligned "
                                         "allocation")
      ->capture_default_str()
      ->type_name("F");
  app.add_option("--combine", combine_text,
                 stage.combines.size() > 1
                     ? fmt::format("How block partial sums become one value: {}; a list; or 'all'",
                                   join_names(stage.combines))
                     : fmt::format("How block partial sums become one value: {} (07_multiblock has others)",
                                   join_names(stage.combines)))
      ->capture_default_str()
      ->type_name("NAME|LIST")
      ->group(stage.combines.size() > 1 ? "Options" : "");
  app.footer(examples(program, {{"", "the default run: check, time, compare with CUB"},
                                 {stage.combines.size() > 1 ? "-n 2^10..2^24 --combine all"
                                  : has_stream             ? "-n 2^10..2^24 --regime stream,tree"
                                                           : "-n 2^10..2^24 --block 64,256",
                                  "several sizes (and launches) in one table"},
                                 {"--self-test full", "every awkward size, block, input and alignment"}}));
  add_common_options(app, out, common, true);

  if (auto ended = run_cli(app, program, argc, argv)) return *ended;
  if (auto error = finish_common(app, out, common)) return usage_error(program, *error);
  if (auto e = read_number_as("--grid", grid_text, 0, 2147483647, out.grid)) return usage_error(program, *e);
  if (auto e = read_number_as("--offset", offset_text, 0, 1024, out.offset)) return usage_error(program, *e);

  if (auto e = parse_sizes(program, size_text, out.sizes)) return *e;

  const auto bad_block = [&](const auto& block) {
    return usage_error(program, fmt::format("--block {}: {} runs power-of-two blocks from 64 to 1024", block, program));
  };
  auto blocks = parse_count_list(block_text);
  if (!blocks || blocks->empty()) {
    for (const auto& item : split_list(block_text)) {
      if (negative_number(item)) return bad_block(trim(item));
    }
    return usage_error(program, fmt::format("--block '{}' is not a number or a list of numbers", block_text));
  }
  out.blocks.clear();
  for (auto b : *blocks) {
    if (!is_power_of_two(b) || b < 64 || b > 1024) return bad_block(b);
    out.blocks.push_back(static_cast<unsigned>(b));
  }

  out.regimes.clear();
  for (const auto& item : split_list(regime_text)) {
    auto regime = lookup(kRegimeNames, item);
    if (!regime) {
      return usage_error(program, fmt::format("--regime '{}' is not one of stream, tree (or the list stream,tree)",
                                              item));
    }
    if (std::find(stage.regimes.begin(), stage.regimes.end(), *regime) == stage.regimes.end()) {
      return usage_error(program, fmt::format("--regime {}: {} has no grid-stride loop, so it runs only the {} regime",
                                              item, program, to_string(stage.regimes.front())));
    }
    out.regimes.push_back(*regime);
  }
  const bool tree_only = out.regimes.size() == 1 && out.regimes.front() == Regime::kTree;
  if (out.grid != 0 && tree_only) {
    return usage_error(program, fmt::format("--grid {}: the tree regime sizes its grid from n (n / block); "
                                            "--grid applies to the stream regime",
                                            out.grid));
  }

  out.combines.clear();
  if (combine_text == "all") {
    out.combines = stage.combines;
  } else {
    for (const auto& item : split_list(combine_text)) {
      auto c = lookup(kCombineNames, item);
      const bool several = stage.combines.size() > 1;
      if (!c || std::find(stage.combines.begin(), stage.combines.end(), *c) == stage.combines.end()) {
        // One message for a misspelt combine and for one this stage does not have.
        return usage_error(program, fmt::format("--combine '{}': {} combines partial sums by {}{}", item, program,
                                                join_names(stage.combines),
                                                several ? " (a list of them, or all)"
                                                        : " only (07_multiblock has the other strategies)"));
      }
      out.combines.push_back(*c);
    }
  }
  return {};
}

ParseOutcome parse_gemm_options(const char* stage_name, int argc, const char* const* argv, GemmOptions& out) {
  const std::string program = stage_name;
  CLI::App app{fmt::format("{}: C = A * B in float (row-major), checked against a CPU oracle and timed beside "
                           "cuBLAS and a naive kernel",
                           program),
               program};
  CommonText common;
  std::string m_text = "4096", n_text = "4096", k_text = "4096", size_text;
  out.reps = 20;
  out.warmup = 3;
  const std::string range = fmt::format("1 to {}", kMaxGemmDim);
  app.add_option("-m", m_text, "Rows of A and C, " + range)->capture_default_str()->type_name("M");
  app.add_option("-n", n_text, "Columns of B and C, " + range)->capture_default_str()->type_name("N");
  app.add_option("-k", k_text, "Columns of A, rows of B, " + range)->capture_default_str()->type_name("K");
  app.add_option("--size", size_text, "Set M = N = K at once, " + range)->type_name("S");
  std::string tile_text = std::to_string(out.tile);
  app.add_option("--tile", tile_text, "Shared-memory tile edge, 16 or 32 (threads per block = tile x tile)")
      ->capture_default_str()
      ->type_name("16|32");
  std::string pad_text = "off";
  app.add_option("--pad", pad_text,
                 "Pad each shared tile row by one float (16x17 instead of 16x16): off, on, or both (two rows)")
      ->capture_default_str()
      ->type_name("off|on|both");
  app.footer(examples(program, {{"", "4096 x 4096 x 4096: check, time, compare with cuBLAS"},
                                 {"-m 1000 -n 17 -k 300", "any M, N and K"},
                                 {"--tile 32 --pad both", "the 32 x 32 tile, with and without padding"}}));
  add_common_options(app, out, common, false);

  if (auto ended = run_cli(app, program, argc, argv)) return *ended;
  if (auto error = finish_common(app, out, common)) return usage_error(program, *error);
  if (auto e = read_choice("--tile", tile_text, {"16", "32"})) return usage_error(program, *e);
  out.tile = std::stoi(tile_text);
  if (auto e = read_choice("--pad", pad_text, {"off", "on", "both"})) return usage_error(program, *e);
  if (app.count("--size") > 0 && (app.count("-m") + app.count("-n") + app.count("-k")) > 0) {
    return usage_error(program, "--size sets M = N = K at once: give --size or -m/-n/-k, not both");
  }
  if (app.count("--size") > 0 && size_text.empty()) {
    return usage_error(program, fmt::format("--size '' is not a whole number: give one from 1 to {}", kMaxGemmDim));
  }

  out.pads = pad_text == "both" ? std::vector<bool>{false, true} : std::vector<bool>{pad_text == "on"};
  if (!size_text.empty()) m_text = n_text = k_text = size_text;
  const std::pair<const char*, std::string*> dims[] = {{"-m", &m_text}, {"-n", &n_text}, {"-k", &k_text}};
  std::uint64_t* targets[] = {&out.m, &out.n, &out.k};
  for (int i = 0; i < 3; ++i) {
    auto v = parse_count(*dims[i].second);
    const char* option = size_text.empty() ? dims[i].first : "--size";
    const auto out_of_range = [&](const auto& dim) {
      return usage_error(program, fmt::format("{} {} is out of range: matrix sizes run from 1 to {}", option, dim,
                                              kMaxGemmDim));
    };
    if (!v && negative_number(*dims[i].second)) return out_of_range(trim(*dims[i].second));
    if (!v) {
      return usage_error(program, fmt::format("{} '{}' is not a whole number: give one from 1 to {}", option,
                                              *dims[i].second, kMaxGemmDim));
    }
    if (*v < 1 || *v > kMaxGemmDim) return out_of_range(*v);
    *targets[i] = *v;
  }
  return {};
}

ParseOutcome parse_cpu_options(int argc, const char* const* argv, CpuOptions& out) {
  const std::string program = "cpu_baseline";
  CLI::App app{"cpu_baseline: the CPU's float sum of the ladder's input (one thread, then every core), checked like "
               "a stage's, and the copy of that input to the GPU, timed",
               program};
  std::string size_text = "2^28", threads_text = "0", reps = std::to_string(out.reps);
  std::string warmup = std::to_string(out.warmup), seed = std::to_string(out.seed), device = "0";
  std::string input = "float", format = "table";
  add_size_option(app, size_text);
  app.add_option("--threads", threads_text, "Threads of the all-cores sum, 1 to 1024; 0 = every hardware thread")
      ->capture_default_str()
      ->type_name("T");
  app.add_option("--reps", reps, "Timed repetitions, 1 to 100000 (the median is reported)")
      ->capture_default_str()
      ->type_name("N");
  app.add_option("--warmup", warmup, "Untimed runs before timing, 0 to 10000")->capture_default_str()->type_name("N");
  app.add_option("--seed", seed, "Input seed, as the stages take it: the same seed is bitwise the same input")
      ->capture_default_str()
      ->type_name("S");
  app.add_option("--input", input, "Input that is timed: 'float' (checked within a derived bound) or 'exact' "
                                   "(checked for equality); every run also makes the exact check")
      ->capture_default_str()
      ->type_name("MODE");
  app.add_option("--device", device, "CUDA device the input is copied to, 0 to 1023")
      ->capture_default_str()
      ->type_name("I");
  app.add_flag("--no-copy", out.no_copy, "Only the CPU sums: no copy to the GPU (needs no GPU)");
  app.add_option("--format", format, "Output: 'table' (for people), 'csv' or 'json'")
      ->capture_default_str()
      ->type_name("FORMAT");
  app.set_version_flag("--version", fmt::format("cuda-ladder {} (commit {})", LADDER_VERSION, LADDER_COMMIT),
                       "Print the project version and the commit this program was built from");
  app.footer(examples(program, {{"", "2^28 floats: one thread, every core, the copy to the GPU"},
                                 {"-n 2^20..2^28 --threads 4", "several sizes, the all-cores sum on four threads"}}));

  if (auto ended = run_cli(app, program, argc, argv)) return *ended;
  const std::optional<std::string> problems[] = {
      read_number_as("--threads", threads_text, 0, 1024, out.threads),
      read_number_as("--reps", reps, 1, 100000, out.reps),
      read_number_as("--warmup", warmup, 0, 10000, out.warmup),
      read_number("--seed", seed, 0, std::numeric_limits<std::uint64_t>::max(), out.seed),
      read_number_as("--device", device, 0, 1023, out.device),
      read_choice("--input", input, {"float", "exact"}),
      read_choice("--format", format, {"table", "csv", "json"})};
  for (const auto& problem : problems) {
    if (problem) return usage_error(program, *problem);
  }
  if (auto bad = parse_sizes(program, size_text, out.sizes)) return *bad;
  out.input = *lookup(kInputNames, input);
  out.format = *lookup(kFormatNames, format);
  return {};
}

}  // namespace ladder
