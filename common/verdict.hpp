// The one place that decides PASS. A run collects every check it made (the exact input on each checked
// launch, the precision probe, the float input, the last timed launch, the references timed beside it) in a
// Verdict, and PASS means every one of them passed. The default run, --self-test, --determinism and the
// runner (which reads the "check" field a run writes) all take their PASS from here.
#pragma once

#include <string>
#include <vector>

namespace ladder {

class Verdict {
 public:
  // Records one check under a name that tables and result files show ("exact", "probe", "float", "timed",
  // "cub", ...); a name may be recorded several times (one per launch), and fails if any of them failed.
  void add(const std::string& name, bool pass, const std::string& reason = "") {
    entries_.push_back({name, pass, reason});
  }

  bool pass() const {
    for (const auto& e : entries_) {
      if (!e.pass) return false;
    }
    return !entries_.empty();  // a run that checked nothing has shown nothing
  }
  const char* word() const { return pass() ? "PASS" : "FAIL"; }

  // "PASS" or "FAIL" for the checks recorded under `name`, "-" if none was made.
  const char* field(const std::string& name) const {
    bool seen = false;
    for (const auto& e : entries_) {
      if (e.name != name) continue;
      if (!e.pass) return "FAIL";
      seen = true;
    }
    return seen ? "PASS" : "-";
  }

  // "name: reason" for every check that failed, in the order they were made.
  std::vector<std::string> failures() const {
    std::vector<std::string> out;
    for (const auto& e : entries_) {
      if (!e.pass) out.push_back(e.name + ": " + e.reason);
    }
    return out;
  }

 private:
  struct Entry {
    std::string name;
    bool pass;
    std::string reason;
  };
  std::vector<Entry> entries_;
};

}  // namespace ladder
