// The one place that decides PASS: every check a run made passed, and at least one was made. A check that could not be
// judged (a float bound too loose to say anything) is skipped: never a pass. The table cells and the records' *_check
// fields (which ./ladder and the docs read, never deciding again) take their words from here.
#pragma once

#include <algorithm>
#include <initializer_list>
#include <string>
#include <vector>

namespace ladder {
class Verdict {
 public:
  // A check under the name tables and result files show ("exact", "probe", "float", "timed", "cub", ...); a name may
  // be recorded several times (one per launch), and fails if any of them failed.
  void add(const std::string& name, bool pass, const std::string& reason = "") {
    entries_.push_back({name, pass ? State::kPass : State::kFail, reason});
  }
  void skip(const std::string& name, const std::string& reason) { entries_.push_back({name, State::kSkipped, reason}); }
  void add_all(const Verdict& other) { entries_.insert(entries_.end(), other.entries_.begin(), other.entries_.end()); }
  bool pass() const { return summary([](const std::string&) { return true; }) == std::string("PASS"); }
  const char* word() const { return pass() ? "PASS" : "FAIL"; }
  // The checks under any of `names`: "FAIL" if one failed, else "PASS" if one passed, "skipped" if all were skipped,
  // "-" if none was made (a run that judged nothing has shown nothing).
  const char* field(std::initializer_list<const char*> names) const {
    return summary([&](const std::string& n) { return std::find(names.begin(), names.end(), n) != names.end(); });
  }
  const char* field(const std::string& name) const { return field({name.c_str()}); }
  // "name: reason" for every check that failed (or was skipped), in the order they were made.
  std::vector<std::string> failures() const { return reasons(State::kFail); }
  std::vector<std::string> skipped() const { return reasons(State::kSkipped); }

 private:
  enum class State { kPass, kFail, kSkipped };
  struct Entry {
    std::string name;
    State state;
    std::string reason;
  };
  template <typename Selected>
  const char* summary(Selected selected) const {
    bool passed = false, skipped = false;
    for (const auto& e : entries_) {
      if (!selected(e.name)) continue;
      if (e.state == State::kFail) return "FAIL";
      passed = passed || e.state == State::kPass;
      skipped = skipped || e.state == State::kSkipped;
    }
    return passed ? "PASS" : skipped ? "skipped" : "-";
  }
  std::vector<std::string> reasons(State state) const {
    std::vector<std::string> out;
    for (const auto& e : entries_) {
      if (e.state == state) out.push_back(e.name + ": " + e.reason);
    }
    return out;
  }
  std::vector<Entry> entries_;
};
}  // namespace ladder
