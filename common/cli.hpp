// The command line of every program of the ladder, on CLI11: each option is declared once, with its check, and that
// one declaration gives the parse, the one-line error in the project's words, the help and --describe (the JSON
// that ./ladder, the docs and the tests read instead of restating any option, default, range or stage role).
// Host-only: CLI11 is slow and noisy to compile under nvcc, so it stays out of every header.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ladder {

// The result of parsing: either run, or an exit status and the text to print (the help, the version or the
// description on stdout for status 0, one error line on stderr for status 2).
struct ParseOutcome {
  std::optional<int> exit_status;  // empty: run
  std::string text;
};

// The largest n of a sum: 256 GiB of floats, more than any GPU holds.
constexpr std::uint64_t kMaxSize = std::uint64_t{1} << 36;

// Parses a count: "4096", "2^28", "3*2^20", "20000000", "1e6"; nullopt if it is not a whole number >= 0.
std::optional<std::uint64_t> parse_count(const std::string& text);
// Parses a comma-separated list of counts, where "a..b" (powers of two a and b) means a, 2a, 4a, ..., b.
std::optional<std::vector<std::uint64_t>> parse_count_list(const std::string& text);
// What is wrong with `text` as -n/--size (a size, a list, a range of powers of two, each from 1 to kMaxSize), or
// nullopt.
std::optional<std::string> size_problem(const std::string& text);
// "a, b,c" -> {"a", "b", "c"}
std::vector<std::string> split_list(const std::string& text);

// A check of an option's text: the message that says what is wrong with it, or nullopt.
using TextCheck = std::function<std::optional<std::string>(const std::string&)>;

class CommandLine {
 public:
  CommandLine(const std::string& program, const std::string& description);
  ~CommandLine();
  CommandLine(const CommandLine&) = delete;
  CommandLine& operator=(const CommandLine&) = delete;

  // Option groups: the help lists them in the order first used; --describe names each option's group, and
  // ./ladder try varies the options of kLaunchGroup. kHidden: parsed (to be refused by name) but not listed.
  static constexpr const char* kLaunchGroup = "Launch";
  static constexpr const char* kHidden = "";

  // A whole number from lo to hi, stored in `value` (whose value is the default); `type` names it in the help.
  void whole(const std::string& flags, int& value, std::uint64_t lo, std::uint64_t hi, const std::string& type,
             const std::string& help, const std::string& group);
  void whole(const std::string& flags, unsigned& value, std::uint64_t lo, std::uint64_t hi, const std::string& type,
             const std::string& help, const std::string& group);
  void whole(const std::string& flags, std::uint64_t& value, std::uint64_t lo, std::uint64_t hi,
             const std::string& type, const std::string& help, const std::string& group);
  // One of `words`, kept as text; `text` holds the default.
  void choice(const std::string& flags, std::string& text, const std::vector<std::string>& words,
              const std::string& help, const std::string& group);
  // -n/--size as the stages and cpu_baseline take it: one size, a list or a range, each from 1 to kMaxSize.
  void sizes(std::string& text, const std::string& group);
  // Text with a check of its own; `values` are what --describe lists as accepted (empty: the help says it).
  void text(const std::string& flags, std::string& text, TextCheck check, const std::string& type,
            const std::string& help, const std::string& group, const std::vector<std::string>& values = {},
            std::uint64_t lo = 0, std::uint64_t hi = 0);
  void flag(const std::string& flags, bool& value, const std::string& help, const std::string& group);
  // What --describe calls the option declared last, where "text" says too little: "list" (words, one or several),
  // "blocks" (numbers from its values, one or several).
  void kind(const std::string& kind);
  // The two options may not be given together: "a and b: give one (why)".
  void excludes(const std::string& a, const std::string& b, const std::string& why);
  // Whether the option was given on the command line.
  bool given(const std::string& flag) const;
  // The end of --help: examples (arguments and what they do) and the exit statuses.
  void examples(const std::vector<std::pair<std::string, std::string>>& lines);
  // --version's text, and what --describe says besides the options: "key": value pairs of JSON, comma-separated.
  void set_version(const std::string& version);
  void set_role(const std::string& json_fields);

  // Parses; an outcome when the program ends here: the help, the version, an error, or (with --describe, after
  // every option was checked) the description, whose "values" are `resolved()`'s JSON fields.
  std::optional<ParseOutcome> parse(int argc, const char* const* argv, const std::function<std::string()>& resolved);
  // One usage error line: "program: error: message (see program --help)".
  ParseOutcome usage_error(const std::string& message) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A JSON string literal.
std::string json_quote(const std::string& text);
// A JSON array of strings, or of numbers given as text.
std::string json_list(const std::vector<std::string>& items, bool quoted = true);

}  // namespace ladder
