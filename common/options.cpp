// Every program's options on CLI11: declared once, parsed and listed in the help by CLI11, checked by a validator that
// keeps the first problem in the project's words, and read back from CLI11 for --describe.
#include "options.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <regex>
#include <sstream>
#include <utility>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>  // a vector formats as a JSON array: [1, 2], ["stream", "tree"]

#include "ladder_version.hpp"

// A changed copy of a stage (a planted bug, a ./ladder try variant) defines these (cmake/Ladder.cmake): --version
// names the program that runs and says what it is a copy of.
extern "C" const char* ladder_program_name() __attribute__((weak));
extern "C" const char* ladder_program_note() __attribute__((weak));

namespace ladder {
namespace {
// Each enum's words, in the enum's order: what to_string() prints, what an option accepts, what --describe lists.
const std::vector<std::string> kInputs = {"float", "exact"};
const std::vector<std::string> kFormats = {"table", "csv", "json"};
const std::vector<std::string> kSelfTests = {"none", "quick", "full"};
const std::vector<std::string> kFlushes = {"clean", "write", "none"};
const std::vector<std::string> kRegimes = {"stream", "tree"};

constexpr std::uint64_t kMaxSize = std::uint64_t{1} << 36;  // 256 GiB of floats, more than any GPU holds
constexpr std::uint64_t kMaxGemmDim = 1000000;              // keeps M / tile under the 65535-block grid limit
constexpr std::uint64_t kMaxU64 = std::numeric_limits<std::uint64_t>::max();
constexpr const char* kWhat = "What to run";
constexpr const char* kLaunch = "Launch";  // ./ladder try varies the options of this group
constexpr const char* kTiming = "Timing";
constexpr const char* kModes = "Modes and output";
constexpr const char* kHidden = "";  // parsed (to be refused by name) but not listed in the help
const std::regex kCountForms(R"((\d+)|(?:(\d+)\*)?2\^(\d+)|(\d+)[eE](\d+))");  // a count's forms (parse_count())

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\n\v\f\r");
  return first == std::string::npos ? "" : s.substr(first, s.find_last_not_of(" \t\n\v\f\r") - first + 1);
}

// "-5", "-2^3", "2^70": a count, but negative or past 64 bits, which every option refuses as out of range (not as
// "not a number").
bool beyond_count(const std::string& s) {
  const bool negative = s.size() > 1 && s[0] == '-' && parse_count(s.substr(1));
  return negative || (std::regex_match(s, kCountForms) && !parse_count(s));
}

bool is_power_of_two(std::uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

std::optional<std::uint64_t> digits(const std::string& s) {  // digits kCountForms matched; nullopt past 64 bits
  std::uint64_t v = 0;
  const bool ok = std::from_chars(s.data(), s.data() + s.size(), v).ec == std::errc();
  return ok ? std::optional<std::uint64_t>(v) : std::nullopt;
}

std::vector<std::string> split_list(const std::string& text) {  // "a, b,c" -> {"a", "b", "c"}
  std::vector<std::string> items;
  std::istringstream in(text + ",");  // every item ends in a comma: "a," is {"a", ""}, "" is {""}
  for (std::string item; std::getline(in, item, ',');) items.push_back(trim(item));
  return items;
}

template <typename E, typename Names>
E enum_of(const Names& names, const std::string& word) {  // a word the option's check accepted
  return static_cast<E>(std::find(std::begin(names), std::end(names), word) - std::begin(names));
}
template <typename E, typename Names>
std::vector<E> enums_of(const Names& names, const std::string& list) {
  std::vector<E> out;
  for (const auto& word : split_list(list)) out.push_back(enum_of<E>(names, word));
  return out;
}
template <typename E>
std::vector<std::string> names_of(const std::vector<E>& values) {
  std::vector<std::string> out;
  for (E v : values) out.emplace_back(to_string(v));
  return out;
}

// What is wrong with an option's text, in one line; nullopt if nothing is.
using Check = std::function<std::optional<std::string>(const std::string&)>;

// -n/--size: a size, a list, a range of powers of two, each from 1 to kMaxSize.
std::optional<std::string> size_problem(const std::string& text) {
  const auto out_of_range = [](const auto& n) {
    return fmt::format("-n/--size {} is out of range: sizes run from 1 to 2^36", n);
  };
  if (const auto sizes = parse_count_list(text)) {
    const auto wrong = std::find_if(sizes->begin(), sizes->end(), [](auto n) { return n < 1 || n > kMaxSize; });
    return wrong == sizes->end() ? std::nullopt : std::optional<std::string>(out_of_range(*wrong));
  }
  for (const auto& item : split_list(text)) {
    if (beyond_count(item)) return out_of_range(item);
    const auto dots = item.find("..");
    if (dots == std::string::npos) continue;
    const std::string lo_text = trim(item.substr(0, dots)), hi_text = trim(item.substr(dots + 2));
    const auto lo = parse_count(lo_text), hi = parse_count(hi_text);
    if (lo && hi && (!is_power_of_two(*lo) || !is_power_of_two(*hi))) {
      return fmt::format("-n/--size '{}': a range a..b doubles from a to b, so both ends are powers of two "
                         "(2^10..2^30)", item);
    }
    if (lo && hi && *lo > *hi) {
      return fmt::format("-n/--size '{}' runs backwards: a range goes from the smaller power of two up ({}..{})", item,
                         hi_text, lo_text);
    }
  }
  return fmt::format("-n/--size '{}' is not a size: give a whole number from 1 to 2^36 (268435456, 2^28, 1e6), a "
                     "list, or a range like 2^10..2^30", text);
}

// --block: powers of two from 64 to 1024, one or a list.
std::optional<std::string> block_problem(const std::string& program, const std::string& text) {
  for (const auto& item : split_list(text)) {
    const auto b = parse_count(item);
    if (beyond_count(item) || (b && (*b < 64 || *b > 1024 || !is_power_of_two(*b)))) {
      return fmt::format("--block {}: {} runs power-of-two blocks from 64 to 1024", item, program);
    }
  }
  const auto blocks = parse_count_list(text);
  if (!blocks) return fmt::format("--block '{}' is not a number or a list of numbers", text);
  const auto wrong = std::find_if(blocks->begin(), blocks->end(), [](auto b) { return b < 64 || b > 1024; });
  if (wrong == blocks->end()) return std::nullopt;  // a range's blocks too: 32..1024 holds 32
  return fmt::format("--block {}: {} runs power-of-two blocks from 64 to 1024", *wrong, program);
}

// --regime: stream, tree or both; a regime the stage does not run is refused in words that say why.
std::optional<std::string> regime_problem(const ReduceStage& stage, const std::string& text) {
  const auto ours = names_of(stage.regimes);
  for (const auto& item : split_list(text)) {
    if (std::find(std::begin(kRegimes), std::end(kRegimes), item) == std::end(kRegimes)) {
      return fmt::format("--regime '{}' is not one of stream, tree (or the list stream,tree)", item);
    }
    if (std::find(ours.begin(), ours.end(), item) == ours.end()) {
      return fmt::format("--regime {}: {} has no grid-stride loop, so it runs only the {} regime", item, stage.name,
                         ours.front());
    }
  }
  return std::nullopt;
}

// --combine: one of the stage's, a list of them, or all.
std::optional<std::string> combine_problem(const ReduceStage& stage, const std::string& text) {
  if (trim(text) == "all") return std::nullopt;
  const auto ours = names_of(stage.combines);
  for (const auto& item : split_list(text)) {
    if (std::find(ours.begin(), ours.end(), item) == ours.end()) {
      return fmt::format("--combine '{}': {} combines partial sums by {}{}", item, stage.name, fmt::join(ours, ", "),
                         ours.size() > 1 ? " (a list of them, or all)" : " only");
    }
  }
  return std::nullopt;
}

// One program's command line: CLI11's App, the first problem a check found, the exclusions' messages and the options'
// accepted words.
class CommandLine {
 public:
  CommandLine(const std::string& program, const std::string& description)
      : program_(program), app_(program + ": " + description, program) {
    version_ = fmt::format("{}: cuda-ladder {} (commit {})", ladder_program_name ? ladder_program_name() : program,
                           LADDER_VERSION, LADDER_COMMIT);
    if (ladder_program_note) version_ += fmt::format(", {}", ladder_program_note());
    app_.set_version_flag("--version", version_,
                          "Print the project version and the commit this program was built from");
    describe_ = app_.add_flag("--describe", "Print what this program is and accepts, as JSON (every option with its "
                                            "default and range), after checking the other options given, and run "
                                            "nothing");
  }
  // A whole number from lo to hi, in any of -n's forms (4096, 2^12, 1e6), into `value`; --help shows its default
  // unless -1 (derived) or below lo (a mode off).
  template <typename T>
  void whole(const std::string& flags, T& value, std::uint64_t lo, std::uint64_t hi, const std::string& type,
             const std::string& help, const std::string& group) {
    const std::string top = hi == kMaxU64 ? "2^64-1" : hi == 2147483647u ? "2^31-1" : std::to_string(hi);  // in words
    CLI::Option* option = app_.add_option(flags, value, fmt::format("{}, {} to {}", help, lo, top));
    if (static_cast<long long>(value) >= 0 && static_cast<std::uint64_t>(value) >= lo) option->capture_default_str();
    const std::string name = display_name(flags), range = fmt::format("from {} to {}", lo, top);
    add(option, name, type, group, [=](const std::string& text) -> std::optional<std::string> {
      const std::string s = trim(text);
      const auto v = parse_count(s);
      if (!v && !beyond_count(s)) return fmt::format("{} '{}' is not a whole number: give one {}", name, text, range);
      if (v && *v >= lo && *v <= hi) return std::nullopt;
      return fmt::format("{} {} is out of range: give a whole number {}", name, v ? std::to_string(*v) : s, range);
    });
  }
  // Text with a check of its own, the default in `text`; `values` are what --describe lists as accepted.
  void text(const std::string& flags, std::string& text, const Check& check, const std::string& type,
            const std::string& help, const std::string& group, const std::vector<std::string>& values = {}) {
    add(app_.add_option(flags, text, help)->capture_default_str(), display_name(flags), type, group, check, values);
  }
  // One of `words`, kept as text.
  void choice(const std::string& flags, std::string& text, const std::vector<std::string>& words,
              const std::string& help, const std::string& group) {
    const std::string name = display_name(flags);
    const auto check = [=](const std::string& s) -> std::optional<std::string> {
      if (std::find(words.begin(), words.end(), s) != words.end()) return std::nullopt;
      return fmt::format("{} '{}' is not one of {}", name, s, fmt::join(words, ", "));
    };
    this->text(flags, text, check, fmt::format("{}", fmt::join(words, "|")), help, group, words);
  }
  // -n/--size as the stages and cpu_baseline take it.
  void sizes(std::string& text) {
    this->text("-n,--size", text, size_problem, "N|LIST|RANGE",
               "Number of floats: 268435456, 2^28, 1e6, or a list (1000,2^20) or range of powers of two "
               "(2^10..2^30), from 1 to 2^36", kWhat);
  }
  void flag(const std::string& flags, bool& value, const std::string& help, const std::string& group) {
    app_.add_flag(flags, value, help)->group(group);
  }
  bool given(const std::string& flag) const { return app_.count(flag) > 0; }
  // A mode that runs its own configurations refuses, by name, the first of `flags` it would ignore.
  std::optional<ParseOutcome> ignored(const char* mode, const std::vector<std::string>& flags) const {
    const auto flag = std::find_if(flags.begin(), flags.end(), [this](const auto& f) { return given(f); });
    if (!given(mode) || flag == flags.end()) return std::nullopt;
    return usage_error(fmt::format("{0} and {1}: give one ({0} chooses its own runs, ignoring {1})", mode, *flag));
  }
  // The end of --help: examples (arguments and what they do) and the exit statuses.
  void examples(const std::vector<std::pair<std::string, std::string>>& lines) {
    std::string text = "Examples:\n";
    for (const auto& [args, what] : lines) text += fmt::format("  {:<44} {}\n", program_ + " " + args, what);
    app_.footer(text + "\nExit status: 0 pass, 1 a check failed, 2 usage or runtime error, 77 no usable GPU.");
  }
  // Parses; an outcome where the program ends here: the help, the version or an error.
  std::optional<ParseOutcome> parse(int argc, const char* const* argv) {
    try {
      app_.parse(argc, argv);
    } catch (const CLI::CallForHelp&) {
      return ParseOutcome{0, app_.help()};
    } catch (const CLI::CallForVersion&) {
      return ParseOutcome{0, version_};
    } catch (const CLI::ParseError& e) {
      return usage_error(translate(e));
    }
    return std::nullopt;
  }
  // With --describe, the description: `role` and `values` (the options' resolved values) are JSON fields.
  ParseOutcome described(const std::string& role, const std::string& values) const {
    if (describe_->count() == 0) return {};
    std::vector<std::string> options;
    for (const CLI::Option* o : app_.get_options()) {
      if (o == app_.get_help_ptr() || o == app_.get_version_ptr() || o == describe_) continue;
      std::vector<std::string> flags;
      for (const auto& s : o->get_snames()) flags.push_back("-" + s);
      for (const auto& l : o->get_lnames()) flags.push_back("--" + l);
      const auto accepted = values_.find(o);
      const std::string words = accepted == values_.end() ? "" : fmt::format(R"(, "values": {})", accepted->second);
      options.push_back(fmt::format(R"({{"flags": {}, "group": {}, "default": {}{}}})", flags,
                                    json_quote(o->get_group()),
                                    json_quote(o->get_expected_max() == 0 ? "false" : o->get_default_str()), words));
    }
    return {0, fmt::format("{{\n  \"program\": {},\n  \"version\": {},\n  {},\n  \"options\": [\n    {}\n  ],\n  "
                           "\"values\": {{{}}}\n}}",
                           json_quote(program_), json_quote(version_), role, fmt::join(options, ",\n    "), values)};
  }
  ParseOutcome usage_error(const std::string& message) const {
    return {2, fmt::format("{}: error: {} (see {} --help)", program_, message, program_)};
  }

 private:
  // The flags as a message names the option: "-n,--size" -> "-n/--size".
  static std::string display_name(std::string flags) {
    std::replace(flags.begin(), flags.end(), ',', '/');
    return flags;
  }
  // The option's check, after one that every value has: it is not empty.
  void add(CLI::Option* option, const std::string& name, const std::string& type, const std::string& group,
           const Check& check, const std::vector<std::string>& values = {}) {
    option->type_name(type)->group(group)->transform(CLI::Validator(
        [this, name, check](std::string& text) {
          const auto problem = trim(text).empty() ? std::optional<std::string>(name + " needs a value") : check(text);
          if (problem && problem_.empty()) problem_ = *problem;
          // What was checked, trimmed, and a count in decimal: CLI11 would read " 1" as nothing, 010 as 8, 2^6 as 0.
          if (!problem) text = trim(text);
          if (const auto v = problem ? std::nullopt : parse_count(text)) text = std::to_string(*v);
          return problem.value_or("");
        },
        ""));
    if (!values.empty()) values_[option] = values;
  }
  // CLI11's errors in the project's words.
  std::string translate(const CLI::ParseError& e) const {
    const std::string what = e.what();
    if (dynamic_cast<const CLI::ValidationError*>(&e) && !problem_.empty()) return problem_;
    if (dynamic_cast<const CLI::ExtrasError*>(&e)) {
      const auto extras = app_.remaining();
      const auto dash = std::find_if(extras.begin(), extras.end(),
                                     [](const std::string& x) { return x.size() > 1 && x[0] == '-' && x != "--"; });
      if (dash != extras.end()) return fmt::format("{}: {} has no such option", *dash, program_);
      const auto stray = std::find_if(extras.begin(), extras.end(), [](const std::string& x) { return x != "--"; });
      return fmt::format("'{}': {} takes options only, no other arguments",
                         stray != extras.end() ? *stray : extras.front(), program_);
    }
    if (dynamic_cast<const CLI::ArgumentMismatch*>(&e)) {
      const std::string option = what.substr(0, what.find(':'));
      const bool twice = what.find("received") != std::string::npos;  // "At Most 1 required but received 2"
      return twice ? fmt::format("{} is given twice: give it once", option) : option + " needs a value";
    }
    return what;
  }
  std::string program_, version_, problem_;
  CLI::App app_;
  CLI::Option* describe_ = nullptr;
  std::map<const CLI::Option*, std::vector<std::string>> values_;  // accepted words
};

// The options every stage has, read as text where an enum takes the word.
struct CommonText {
  std::string input = "float", format = "table", self_test, flush = "clean";
  bool no_shared_poison = false;
};

void add_common_options(CommandLine& cli, CommonOptions& o, CommonText& t, const std::string& exact_help) {
  cli.choice("--input", t.input, kInputs, "Input that is timed: 'float' = uniform random in [0,1), checked "
             "within a derived bound; 'exact' = " + exact_help, kWhat);
  cli.whole("--seed", o.seed, 0, kMaxU64, "S", "Input seed: the same seed gives bitwise the same input in every stage",
            kWhat);
  cli.whole("--reps", o.reps, 1, 100000, "N", "Timed repetitions (the median is reported)", kTiming);
  cli.whole("--warmup", o.warmup, 0, 10000, "N",
            "Untimed runs before timing (at least one is made: it loads the kernels)", kTiming);
  cli.choice("--flush", t.flush, kFlushes,
             "Before each timed rep: 'clean' = overwrite 4x L2 then read 2x L2 of other data; 'write' = only "
             "overwrite (dirty lines are written back during the timed run); 'none' = no flush", kTiming);
  cli.whole("--device", o.device, 0, 1023, "I", "CUDA device index", kTiming);
  cli.flag("--check-only", o.check_only,
           "Only the checks (the exact check, the probe, the measured input); no timing and no references", kModes);
  cli.choice("--self-test", t.self_test, {kSelfTests.begin() + 1, kSelfTests.end()},
             "Check every awkward size, block, input mode and launch this stage supports: 'full', or 'quick' (a "
             "small set for the sanitizers)", kModes);
  cli.flag("--no-shared-poison", t.no_shared_poison,
           "Do not fill every SM's shared memory with NaN before each checked launch (for compute-sanitizer's "
           "racecheck and synccheck, which would trace each of those stores); a read of a shared slot no thread "
           "wrote may then pass", kModes);
  cli.whole("--time-limit", o.time_limit, 0, 86400, "S",
            "Seconds one checked launch or timed series may take before the program stops it as never ending "
            "(default: 10 plus 1 per GB it reads; 0: no limit)", kModes);
  cli.flag("--list-devices", o.list_devices, "List the visible GPUs and exit (exit status 77 if there is none)",
           kModes);
  cli.choice("--format", t.format, kFormats, "Output: 'table' (for people), 'csv' or 'json'", kModes);
}

// Stores the common options' words as their enums; returns their values as --describe's JSON fields.
std::string resolve(CommonOptions& o, const CommonText& t) {
  o.input = enum_of<InputMode>(kInputs, t.input);
  o.format = enum_of<Format>(kFormats, t.format);
  o.self_test = t.self_test.empty() ? SelfTest::kNone : enum_of<SelfTest>(kSelfTests, t.self_test);
  o.flush = enum_of<Flush>(kFlushes, t.flush);
  o.shared_poison = !t.no_shared_poison;
  return fmt::format("\"reps\": {}, \"warmup\": {}, \"seed\": {}, \"input\": \"{}\", \"flush\": \"{}\", \"device\": {}",
                     o.reps, o.warmup, o.seed, to_string(o.input), to_string(o.flush), o.device);
}
}  // namespace

const char* to_string(InputMode mode) { return kInputs[static_cast<int>(mode)].c_str(); }
const char* to_string(Flush flush) { return kFlushes[static_cast<int>(flush)].c_str(); }
const char* to_string(Regime regime) { return kRegimes[static_cast<int>(regime)].c_str(); }
const char* to_string(Combine combine) { return kCombineNames[static_cast<int>(combine)]; }

std::optional<std::uint64_t> parse_count(const std::string& text) {
  // Digits (what 64 bits hold, leading zeros aside), x*2^k or 2^k (k at most 62), or me (e at most 18).
  std::smatch m;
  const std::string s = trim(text);
  if (!std::regex_match(s, m, kCountForms)) return std::nullopt;
  if (m[1].matched) return digits(m[1]);
  const bool power = m[3].matched;
  const auto base = power && !m[2].matched ? std::optional<std::uint64_t>(1) : digits(m[power ? 2 : 4]);
  const auto exponent = digits(m[power ? 3 : 5]);
  const std::uint64_t radix = power ? 2 : 10;
  if (!base || !exponent || *exponent > (power ? 62u : 18u)) return std::nullopt;
  std::uint64_t v = *base;
  for (std::uint64_t i = 0; i < *exponent; ++i) {
    if (v > kMaxU64 / radix) return std::nullopt;
    v *= radix;
  }
  return v;
}

std::optional<std::vector<std::uint64_t>> parse_count_list(const std::string& text) {
  std::vector<std::uint64_t> values;
  for (const auto& item : split_list(text)) {
    const auto dots = item.find("..");
    const auto lo = parse_count(item.substr(0, dots));
    const auto hi = dots == std::string::npos ? lo : parse_count(item.substr(dots + 2));
    const bool range = dots != std::string::npos;
    if (!lo || !hi || (range && (!is_power_of_two(*lo) || !is_power_of_two(*hi) || *lo > *hi))) return std::nullopt;
    for (std::uint64_t v = *lo;; v *= 2) {  // one count: lo = hi; a range: no overflow, hi is at most 2^63
      values.push_back(v);
      if (v == *hi) break;
    }
  }
  return values;
}

std::string json_quote(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    const bool control = static_cast<unsigned char>(c) < 0x20;
    out += c == '"' || c == '\\' ? std::string{'\\', c} : !control ? std::string(1, c)
           : c == '\n' ? "\\n" : c == '\t' ? "\\t" : fmt::format("\\u{:04x}", static_cast<int>(c));
  }
  return out + "\"";
}

int print_outcome(const ParseOutcome& outcome) {
  const int status = outcome.exit_status.value_or(0);
  std::fputs((outcome.text + "\n").c_str(), status == 0 ? stdout : stderr);
  return status;
}

ParseOutcome parse_reduce_options(const ReduceStage& stage, int argc, const char* const* argv, ReduceOptions& out) {
  CommandLine cli(stage.name, "float sum reduction, checked against a CPU oracle and timed beside CUB");
  const bool has_stream = std::count(stage.regimes.begin(), stage.regimes.end(), Regime::kStream) > 0;
  const auto regimes = names_of(stage.regimes), combines = names_of(stage.combines);
  std::string sizes = "2^28", blocks = "1024", regime = regimes.front(), combine = combines.front();
  // A stage without a stream regime (01) or with one combine still parses --regime, --grid and --combine, to refuse
  // them by name, but does not list them in its help.
  cli.sizes(sizes);
  cli.text("--regime", regime, [&stage](const std::string& s) { return regime_problem(stage, s); }, "MODE|LIST",
           "'stream': a grid that fills the GPU, many elements per thread; 'tree': one element per thread, grid = "
           "n / block; or both: 'stream,tree'", has_stream ? kWhat : kHidden, regimes);
  cli.text("--block", blocks, [&stage](const std::string& s) { return block_problem(stage.name, s); }, "B|LIST",
           "Threads per block: a power of two from 64 to 1024, or a list (64,128,256)", kLaunch,
           {"64", "128", "256", "512", "1024"});
  cli.whole("--grid", out.grid, 0, 2147483647, "G",
            "Blocks in the first launch (stream regime); 0 = SMs x blocks per SM from the occupancy API",
            has_stream ? kLaunch : kHidden);
  cli.whole("--offset", out.offset, 0, 1024, "F", "Start the input this many floats past a 256-byte aligned allocation",
            kLaunch);
  cli.text("--combine", combine, [&stage](const std::string& s) { return combine_problem(stage, s); }, "NAME|LIST",
           fmt::format("How block partial sums become one value: {}{}", fmt::join(combines, ", "),
                       combines.size() > 1 ? "; a list; or 'all'" : ""),
           combines.size() > 1 ? kLaunch : kHidden, combines);
  CommonText common;
  add_common_options(cli, out, common, "random dyadic values k/R in [-1,1], whose sum is exact in float, checked for "
                     "equality (every run also makes the exact check and the precision probe)");
  cli.examples({{"", "the default run: check, time, compare with CUB"},
                {combines.size() > 1 ? "-n 2^10..2^24 --combine all"
                 : has_stream        ? "-n 2^10..2^24 --regime stream,tree"
                                     : "-n 2^10..2^24 --block 64,256",
                 "several sizes (and launches) in one table"},
                {"--self-test full", "every awkward size, block, input and alignment"}});
  if (auto ended = cli.parse(argc, argv)) return *ended;
  out.sizes = *parse_count_list(sizes);
  const auto block_list = *parse_count_list(blocks);
  out.blocks.assign(block_list.begin(), block_list.end());
  out.regimes = enums_of<Regime>(kRegimes, regime);
  out.combines = combine == "all" ? stage.combines : enums_of<Combine>(kCombineNames, combine);
  const std::string common_values = resolve(out, common);
  const ParseOutcome described = cli.described(
      fmt::format("\"role\": \"reduce\",\n  \"regimes\": {},\n  \"combines\": {}", regimes, combines),
      fmt::format(R"("sizes": {}, "blocks": {}, "regimes": {}, "combines": {}, "grid": {}, "offset": {}, {})",
                  out.sizes, out.blocks, names_of(out.regimes), names_of(out.combines), out.grid, out.offset,
                  common_values));
  if (out.grid != 0 && std::count(out.regimes.begin(), out.regimes.end(), Regime::kStream) == 0) {
    return cli.usage_error(fmt::format("--grid {}: the tree regime sizes its grid from n (n / block); --grid applies "
                                       "to the stream regime", out.grid));
  }
  const std::vector<std::string> own = {"-n", "--block", "--regime", "--grid", "--offset", "--combine", "--input",
                                        "--reps", "--warmup", "--flush", "--check-only", "--format"};
  if (auto refused = cli.ignored("--self-test", own)) return *refused;
  return described;
}

ParseOutcome parse_gemm_options(const char* stage_name, int argc, const char* const* argv, GemmOptions& out) {
  CommandLine cli(stage_name, "C = A * B in float (row-major), checked against a CPU oracle and timed beside cuBLAS "
                              "and a naive kernel");
  std::string tile = "16", pad = "off";
  std::uint64_t size = out.m;
  cli.whole("-m", out.m, 1, kMaxGemmDim, "M", "Rows of A and C", kWhat);
  cli.whole("-n", out.n, 1, kMaxGemmDim, "N", "Columns of B and C", kWhat);
  cli.whole("-k", out.k, 1, kMaxGemmDim, "K", "Columns of A, rows of B", kWhat);
  cli.whole("--size", size, 1, kMaxGemmDim, "S", "Set M = N = K at once", kWhat);
  cli.choice("--tile", tile, {"16", "32"}, "Shared-memory tile edge (threads per block = tile x tile)", kLaunch);
  cli.choice("--pad", pad, {"off", "on", "both"},
             "Pad each shared tile row by one float (16x17 instead of 16x16): off, on, or both (two rows)", kLaunch);
  out.reps = 10;  // launches of milliseconds each: their spread (ms_min..ms_max in every row) shows what 10 give
  out.warmup = 3;
  CommonText common;
  add_common_options(cli, out, common, "random values k/4, k in [-4,4] (not 0), whose products and sums are exact in "
                     "float, checked for equality (every run also makes the exact check and the precision probes)");
  cli.examples({{"", "4096 x 4096 x 4096: check, time, compare with cuBLAS"},
                {"-m 1000 -n 17 -k 300", "any M, N and K"},
                {"--tile 32 --pad both", "the 32 x 32 tile, with and without padding"}});
  if (auto ended = cli.parse(argc, argv)) return *ended;
  if (cli.given("--size") && (cli.given("-m") || cli.given("-n") || cli.given("-k"))) {
    return cli.usage_error("--size sets M = N = K at once: give --size or -m/-n/-k, not both");
  }
  std::vector<std::string> own = {"--tile", "--pad", "--input", "--reps", "--warmup", "--flush", "--format",
                                  "--check-only"};
  if (common.self_test == "quick") own.insert(own.end(), {"-m", "-n", "-k", "--size"});  // full adds M x N x K
  if (auto refused = cli.ignored("--self-test", own)) return *refused;
  if (cli.given("--size")) out.m = out.n = out.k = size;
  out.tile = tile == "32" ? 32 : 16;
  out.pads = pad == "both" ? std::vector<bool>{false, true} : std::vector<bool>{pad == "on"};
  const std::string common_values = resolve(out, common);
  return cli.described(R"("role": "gemm")", fmt::format(R"("m": {}, "n": {}, "k": {}, "tile": {}, "pad": "{}", {})",
                                                        out.m, out.n, out.k, out.tile, pad, common_values));
}

ParseOutcome parse_cpu_options(int argc, const char* const* argv, CpuOptions& out) {
  CommandLine cli("cpu_baseline", "the CPU's float sum of the ladder's input (one thread, then every hardware thread), "
                                  "checked like a stage's, and the copy of that input to the GPU, timed");
  std::string sizes = "2^28", input = "float", format = "table";
  out.reps = 3;    // the one-thread sum of 2^28 floats takes a quarter of a second, the pageable copy more
  out.warmup = 0;  // the checked pass before the timed ones has touched the input already
  cli.sizes(sizes);
  cli.whole("--threads", out.threads, 0, 1024, "T", "Threads of the all-cores sum; 0 = every hardware thread", kWhat);
  cli.choice("--input", input, kInputs,
             "Input that is timed: 'float' (checked within a derived bound) or 'exact' (checked for equality); every "
             "run also makes the exact check", kWhat);
  cli.whole("--seed", out.seed, 0, kMaxU64, "S",
            "Input seed, as the stages take it: the same seed is bitwise the same input", kWhat);
  cli.whole("--reps", out.reps, 1, 100000, "N", "Timed repetitions (the median is reported)", kTiming);
  cli.whole("--warmup", out.warmup, 0, 10000, "N", "Untimed runs before timing", kTiming);
  cli.whole("--device", out.device, 0, 1023, "I", "CUDA device the input is copied to", kTiming);
  cli.flag("--no-copy", out.no_copy, "Only the CPU sums: no copy to the GPU (needs no GPU)", kModes);
  cli.choice("--format", format, kFormats, "Output: 'table' (for people), 'csv' or 'json'", kModes);
  cli.examples({{"", "2^28 floats: one thread, every hardware thread, the copy to the GPU"},
                {"-n 2^20..2^28 --threads 4", "several sizes, the all-cores sum on four threads"}});
  if (auto ended = cli.parse(argc, argv)) return *ended;
  out.sizes = *parse_count_list(sizes);
  out.input = enum_of<InputMode>(kInputs, input);
  out.format = enum_of<Format>(kFormats, format);
  return cli.described(R"("role": "cpu")", fmt::format(R"("sizes": {}, "threads": {}, "reps": {}, "warmup": {}, )"
      R"("seed": {}, "input": "{}")", out.sizes, out.threads, out.reps, out.warmup, out.seed, input));
}
}  // namespace ladder
