// Output: a human-readable table, or CSV / JSON with the same fields for scripts.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "options.hpp"

namespace ladder {

// One result row as ordered (key, value) fields; CSV and JSON both print exactly these.
class Record {
 public:
  Record& add(const std::string& key, const std::string& text);
  Record& add(const std::string& key, const char* text) { return add(key, std::string(text)); }
  Record& add(const std::string& key, double value, int significant = 6);
  Record& add(const std::string& key, std::uint64_t value);
  Record& add(const std::string& key, int value) { return add(key, static_cast<std::uint64_t>(value)); }
  Record& add(const std::string& key, unsigned value) { return add(key, static_cast<std::uint64_t>(value)); }
  Record& add(const std::string& key, bool value);

  struct Field {
    std::string key, value;
    bool quoted;  // a string in JSON
  };
  const std::vector<Field>& fields() const { return fields_; }

 private:
  std::vector<Field> fields_;
};

std::string to_csv(const std::vector<Record>& rows);   // header line + one line per row
std::string to_json(const std::vector<Record>& rows);  // an array of objects

// A plain text table: right-aligned columns sized to their content.
class TextTable {
 public:
  explicit TextTable(std::vector<std::string> headers) : headers_(std::move(headers)) {}
  void add_row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  std::string str(const std::string& indent = "  ") const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

// Prints rows in the chosen machine format (CSV or JSON) to stdout.
void print_records(Format format, const std::vector<Record>& rows);

// "1.07 GB", "240 MB", "4.0 kB" (decimal units).
std::string human_bytes(double bytes);

}  // namespace ladder
