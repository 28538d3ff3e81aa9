#include "report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <fmt/format.h>

namespace ladder {

Record& Record::add(const std::string& key, const std::string& text) {
  fields_.push_back({key, text, true});
  return *this;
}

Record& Record::add(const std::string& key, double value, int significant) {
  // JSON has no NaN or Infinity: write null there; CSV gets the same text.
  const std::string text = std::isfinite(value) ? fmt::format("{:.{}g}", value, significant) : "null";
  fields_.push_back({key, text, false});
  return *this;
}

Record& Record::add(const std::string& key, std::uint64_t value) {
  fields_.push_back({key, std::to_string(value), false});
  return *this;
}

Record& Record::add(const std::string& key, bool value) {
  fields_.push_back({key, value ? "true" : "false", false});
  return *this;
}

namespace {

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

std::string to_csv(const std::vector<Record>& rows) {
  if (rows.empty()) return "";
  std::string out;
  const auto& first = rows.front().fields();
  for (std::size_t i = 0; i < first.size(); ++i) out += (i ? "," : "") + first[i].key;
  out += "\n";
  for (const auto& row : rows) {
    const auto& f = row.fields();
    for (std::size_t i = 0; i < f.size(); ++i) out += (i ? "," : "") + csv_cell(f[i].value);
    out += "\n";
  }
  return out;
}

std::string to_json(const std::vector<Record>& rows) {
  std::string out = "[\n";
  for (std::size_t r = 0; r < rows.size(); ++r) {
    out += "  {";
    const auto& f = rows[r].fields();
    for (std::size_t i = 0; i < f.size(); ++i) {
      out += fmt::format("{}{}: {}", i ? ", " : "", json_quote(f[i].key),
                         f[i].quoted ? json_quote(f[i].value) : f[i].value);
    }
    out += r + 1 < rows.size() ? "},\n" : "}\n";
  }
  return out + "]\n";
}

std::string TextTable::str(const std::string& indent) const {
  std::vector<std::size_t> width(headers_.size());
  for (std::size_t c = 0; c < headers_.size(); ++c) width[c] = headers_[c].size();
  for (const auto& row : rows_) {
    for (std::size_t c = 0; c < row.size() && c < width.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out = indent;
    for (std::size_t c = 0; c < width.size(); ++c) {
      const std::string& cell = c < cells.size() ? cells[c] : std::string();
      out += fmt::format("{}{:>{}}", c ? "  " : "", cell, width[c]);
    }
    return out + "\n";
  };
  std::string out = line(headers_);
  for (const auto& row : rows_) out += line(row);
  return out;
}

void print_records(Format format, const std::vector<Record>& rows) {
  const std::string text = format == Format::kJson ? to_json(rows) : to_csv(rows);
  std::fputs(text.c_str(), stdout);
}

std::string human_bytes(double bytes) {
  const char* units[] = {"B", "kB", "MB", "GB", "TB"};
  int u = 0;
  while (bytes >= 1000 && u < 4) {
    bytes /= 1000;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{:.{}f} {}", bytes, bytes < 10 ? 2 : 1, units[u]);
}

}  // namespace ladder
