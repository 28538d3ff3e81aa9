// The command line on CLI11 (cli.hpp): one declaration per option gives its check, its help and its --describe
// entry. The checks are CLI11 validators whose messages are the project's own; CLI11's excludes() refuses options
// given together. Host-only.
#include "cli.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <limits>
#include <regex>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace ladder {

namespace {

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

bool is_power_of_two(std::uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

std::optional<std::uint64_t> parse_digits(const std::string& s) {
  if (!all_digits(s) || s.size() > 20) return std::nullopt;
  errno = 0;
  const unsigned long long v = std::strtoull(s.c_str(), nullptr, 10);
  if (errno == ERANGE) return std::nullopt;
  return v;
}

// "x*2^k" or "2^k".
std::optional<std::uint64_t> parse_power(const std::string& s, std::size_t caret) {
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

// "<mantissa>e<exp>".
std::optional<std::uint64_t> parse_exponent(const std::string& s, std::size_t e) {
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

// How a limit reads in a message: 2^36, 2^31-1, 2^64-1, or the number.
std::string limit_words(std::uint64_t v) {
  if (v == std::numeric_limits<std::uint64_t>::max()) return "2^64-1";
  if (v == 2147483647u) return "2^31-1";
  if (v >= (1u << 20) && is_power_of_two(v)) return fmt::format("2^{}", 63 - __builtin_clzll(v));
  return std::to_string(v);
}

std::optional<std::string> whole_problem(const std::string& name, const std::string& text, std::uint64_t lo,
                                         std::uint64_t hi) {
  const std::string s = trim(text);
  const std::string range = fmt::format("from {} to {}", lo, limit_words(hi));
  if (s.empty()) return fmt::format("{} needs a value", name);
  if (negative_number(s)) return fmt::format("{} {} is out of range: give a whole number {}", name, s, range);
  if (!all_digits(s)) return fmt::format("{} '{}' is not a whole number: give one {}", name, text, range);
  const auto v = parse_digits(s);
  if (!v || *v < lo || *v > hi) return fmt::format("{} {} is out of range: give a whole number {}", name, s, range);
  return std::nullopt;
}

// What is wrong with one item "a..b" of a size list whose ends are numbers, or nullopt when it is not such a range.
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

// The flags as a message names the option: "-n,--size" -> "-n/--size", "--reps" -> "--reps".
std::string display_name(const std::string& flags) {
  std::string out = flags;
  std::replace(out.begin(), out.end(), ',', '/');
  return out;
}

}  // namespace

std::optional<std::uint64_t> parse_count(const std::string& text) {
  const std::string s = trim(text);
  if (all_digits(s)) return s.size() > 19 ? std::nullopt : parse_digits(s);
  if (auto caret = s.find('^'); caret != std::string::npos) return parse_power(s, caret);
  if (auto e = s.find_first_of("eE"); e != std::string::npos) return parse_exponent(s, e);
  return std::nullopt;
}

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

std::optional<std::vector<std::uint64_t>> parse_count_list(const std::string& text) {
  std::vector<std::uint64_t> values;
  for (const auto& item : split_list(text)) {
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
  }
  return values;
}

std::optional<std::string> size_problem(const std::string& text) {
  const auto out_of_range = [](const auto& size) {
    return fmt::format("-n/--size {} is out of range: sizes run from 1 to 2^36", size);
  };
  const auto sizes = parse_count_list(text);
  if (!sizes || sizes->empty()) {
    // A negative number, or one too large for 64 bits, is out of range like any other size, not "not a size".
    static const std::regex kWhole(R"(\d+|\d+\*2\^\d+|2\^\d+|\d+[eE]\d+)");
    for (const auto& item : split_list(text)) {
      if (negative_number(item) || (std::regex_match(item, kWhole) && !parse_count_list(item))) {
        return out_of_range(trim(item));
      }
      if (auto problem = range_problem(item)) return problem;
    }
    return fmt::format("-n/--size '{}' is not a size: give a whole number from 1 to 2^36 (268435456, 2^28, 1e6), a "
                       "list, or a range like 2^10..2^30",
                       text);
  }
  for (auto n : *sizes) {
    if (n < 1 || n > kMaxSize) return out_of_range(n);
  }
  return std::nullopt;
}

std::string json_quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += fmt::format("\\u{:04x}", static_cast<int>(c));
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string json_list(const std::vector<std::string>& items, bool quoted) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + (quoted ? json_quote(items[i]) : items[i]);
  return out + "]";
}

// ---- CommandLine ---------------------------------------------------------------------------------------------

// What --describe says of one option.
struct OptionSpec {
  std::string flags, kind, group, default_text, help;
  std::uint64_t lo = 0, hi = 0;     // a whole number's range (kind "whole"; "sizes")
  std::vector<std::string> values;  // the accepted words (kind "choice", "list"; "text" where it has them)

  std::string json() const {
    std::string out = fmt::format("{{\"flags\": {}, \"kind\": {}, \"group\": {}, \"default\": {}, \"help\": {}",
                                  json_list(split_list(flags)), json_quote(kind), json_quote(group),
                                  json_quote(default_text), json_quote(help));
    if (hi > 0) out += fmt::format(", \"min\": {}, \"max\": {}", lo, hi);
    if (!values.empty()) out += fmt::format(", \"values\": {}", json_list(values));
    return out + "}";
  }
};

struct CommandLine::Impl {
  std::string program;
  CLI::App app;
  std::vector<OptionSpec> specs;
  std::string problem;  // the first check that failed, in the project's words
  std::vector<std::pair<std::pair<std::string, std::string>, std::string>> exclusions;
  std::string version, role;
  bool describe = false;

  Impl(const std::string& name, const std::string& description) : program(name), app(description, name) {}

  // A CLI11 validator that runs `check` and keeps its message for the error line.
  CLI::Validator validator(TextCheck check, const std::string& description) {
    return CLI::Validator(
        [this, check](std::string& text) -> std::string {
          const auto found = check(text);
          if (found && problem.empty()) problem = *found;
          return found ? *found : std::string();
        },
        description);
  }

  CLI::Option* add(const std::string& flags, const std::string& type, const std::string& group, OptionSpec spec,
                   CLI::Option* option) {
    option->type_name(type)->group(group);
    spec.flags = flags;
    spec.group = group;
    specs.push_back(std::move(spec));
    return option;
  }

  template <typename T>
  void whole(const std::string& flags, T& value, std::uint64_t lo, std::uint64_t hi, const std::string& type,
             const std::string& help, const std::string& group) {
    const std::string name = display_name(flags);
    const std::string text = fmt::format("{}, {} to {}", help, lo, limit_words(hi));
    const bool off = static_cast<std::uint64_t>(value) < lo;  // a mode that is off unless given (--determinism)
    CLI::Option* option = app.add_option(flags, value, text);
    if (!off) option->capture_default_str();
    option->check(validator([=](const std::string& s) { return whole_problem(name, s, lo, hi); }, ""));
    OptionSpec spec{flags, "whole", group, off ? "" : std::to_string(value), text, lo, hi, {}};
    add(flags, type, group, spec, option);
  }

  std::optional<ParseOutcome> translate(const CLI::ParseError& e);
  std::string describe_json(const std::string& values) const;
};

CommandLine::CommandLine(const std::string& program, const std::string& description)
    : impl_(std::make_unique<Impl>(program, description)) {}

CommandLine::~CommandLine() = default;

void CommandLine::whole(const std::string& flags, int& value, std::uint64_t lo, std::uint64_t hi,
                        const std::string& type, const std::string& help, const std::string& group) {
  impl_->whole(flags, value, lo, hi, type, help, group);
}
void CommandLine::whole(const std::string& flags, unsigned& value, std::uint64_t lo, std::uint64_t hi,
                        const std::string& type, const std::string& help, const std::string& group) {
  impl_->whole(flags, value, lo, hi, type, help, group);
}
void CommandLine::whole(const std::string& flags, std::uint64_t& value, std::uint64_t lo, std::uint64_t hi,
                        const std::string& type, const std::string& help, const std::string& group) {
  impl_->whole(flags, value, lo, hi, type, help, group);
}

void CommandLine::choice(const std::string& flags, std::string& text, const std::vector<std::string>& words,
                         const std::string& help, const std::string& group) {
  const std::string name = display_name(flags);
  std::string accepted, type;
  for (const auto& w : words) {
    accepted += (accepted.empty() ? "" : ", ") + w;
    type += (type.empty() ? "" : "|") + w;
  }
  auto check = [=](const std::string& s) -> std::optional<std::string> {
    if (std::find(words.begin(), words.end(), s) != words.end()) return std::nullopt;
    return fmt::format("{} '{}' is not one of {}", name, s, accepted);
  };
  const bool numbers = std::all_of(words.begin(), words.end(), all_digits);
  this->text(flags, text, check, words.size() <= 3 ? type : numbers ? "N" : "MODE", help, group, words);
  impl_->specs.back().kind = "choice";
}

void CommandLine::sizes(std::string& text, const std::string& group) {
  this->text("-n,--size", text, size_problem, "N|LIST|RANGE",
             "Number of floats: 268435456, 2^28, 1e6, or a list (1000,2^20) or range of powers of two "
             "(2^10..2^30), from 1 to 2^36",
             group, {}, 1, kMaxSize);
  impl_->specs.back().kind = "sizes";
}

void CommandLine::text(const std::string& flags, std::string& text, TextCheck check, const std::string& type,
                       const std::string& help, const std::string& group, const std::vector<std::string>& values,
                       std::uint64_t lo, std::uint64_t hi) {
  CLI::Option* option = impl_->app.add_option(flags, text, help)->capture_default_str();
  const std::string name = display_name(flags);
  option->check(impl_->validator(
      [=](const std::string& s) -> std::optional<std::string> {
        return trim(s).empty() ? std::optional<std::string>(name + " needs a value") : check(s);
      },
      ""));
  impl_->add(flags, type, group, OptionSpec{flags, "text", group, text, help, lo, hi, values}, option);
}

void CommandLine::flag(const std::string& flags, bool& value, const std::string& help, const std::string& group) {
  impl_->add(flags, "", group, OptionSpec{flags, "flag", group, "false", help, 0, 0, {}},
             impl_->app.add_flag(flags, value, help));
}

void CommandLine::kind(const std::string& kind) { impl_->specs.back().kind = kind; }

void CommandLine::excludes(const std::string& a, const std::string& b, const std::string& why) {
  impl_->app.get_option(a)->excludes(impl_->app.get_option(b));
  impl_->exclusions.push_back({{a, b}, why});
}

bool CommandLine::given(const std::string& flag) const { return impl_->app.count(flag) > 0; }

void CommandLine::examples(const std::vector<std::pair<std::string, std::string>>& lines) {
  std::string text = "Examples:\n";
  for (const auto& [args, what] : lines) {
    const std::string command = args.empty() ? impl_->program : impl_->program + " " + args;
    text += fmt::format("  {:<44} {}\n", command, what);
  }
  impl_->app.footer(text + "\nExit status: 0 pass, 1 a check failed, 2 usage or runtime error, 77 no usable GPU.");
}

void CommandLine::set_version(const std::string& version) {
  impl_->version = version;
  impl_->app.set_version_flag("--version", version, "Print the project version and the commit this program was "
                                                    "built from");
}

void CommandLine::set_role(const std::string& json_fields) { impl_->role = json_fields; }

ParseOutcome CommandLine::usage_error(const std::string& message) const {
  return {2, fmt::format("{}: error: {} (see {} --help)", impl_->program, message, impl_->program)};
}

std::string CommandLine::Impl::describe_json(const std::string& values) const {
  std::string options;
  for (const auto& s : specs) options += (options.empty() ? "\n    " : ",\n    ") + s.json();
  return fmt::format("{{\n  \"program\": {},\n  \"version\": {},\n  {},\n  \"options\": [{}\n  ],\n  \"values\": {{{}}}\n}}",
                     json_quote(program), json_quote(version), role, options, values);
}

// CLI11's errors in the project's words: an unknown option, a stray argument, a missing value, an option given
// twice, options given together, a value a check refused.
std::optional<ParseOutcome> CommandLine::Impl::translate(const CLI::ParseError& e) {
  const auto error = [&](const std::string& m) {
    return ParseOutcome{2, fmt::format("{}: error: {} (see {} --help)", program, m, program)};
  };
  const std::string what = e.what();
  const std::string option = what.substr(0, what.find(':'));
  if (dynamic_cast<const CLI::ValidationError*>(&e) && !problem.empty()) return error(problem);
  if (dynamic_cast<const CLI::ExcludesError*>(&e)) {
    for (const auto& [pair, why] : exclusions) {
      if (app.count(pair.first) > 0 && app.count(pair.second) > 0) return error(why);
    }
  }
  if (dynamic_cast<const CLI::ExtrasError*>(&e)) {
    const auto extras = app.remaining();
    const auto dash = std::find_if(extras.begin(), extras.end(),
                                   [](const std::string& x) { return x.size() > 1 && x[0] == '-' && x != "--"; });
    if (dash != extras.end()) return error(fmt::format("{}: {} has no such option", *dash, program));
    const auto stray = std::find_if(extras.begin(), extras.end(), [](const std::string& x) { return x != "--"; });
    return error(fmt::format("'{}': {} takes options only, no other arguments",
                             stray != extras.end() ? *stray : extras.front(), program));
  }
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e)) {
    const bool twice = what.find("received") != std::string::npos;  // "At Most 1 required but received 2"
    return error(twice ? fmt::format("{} is given twice: give it once", option) : option + " needs a value");
  }
  return error(what);
}

std::optional<ParseOutcome> CommandLine::parse(int argc, const char* const* argv,
                                               const std::function<std::string()>& resolved) {
  Impl& m = *impl_;
  m.app.add_flag("--describe", m.describe,
                 "Print what this program is and accepts, as JSON (every option with its default and range), after "
                 "checking the other options given, and run nothing");
  try {
    m.app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    return ParseOutcome{0, m.app.help()};
  } catch (const CLI::CallForAllHelp&) {
    return ParseOutcome{0, m.app.help("", CLI::AppFormatMode::All)};
  } catch (const CLI::CallForVersion&) {
    return ParseOutcome{0, m.version};
  } catch (const CLI::ParseError& e) {
    return m.translate(e);
  }
  if (m.describe) return ParseOutcome{0, m.describe_json(resolved())};
  return std::nullopt;
}

}  // namespace ladder
