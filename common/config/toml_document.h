#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gpusched::config {

// A parsed TOML (v1.0) document as plain values with the line each came
// from, so that every settings reader can say "FILE:LINE: what is wrong".
// toml++ does the parsing; this file pair is the only place that includes it
// (its templates are heavy, and one reader keeps the error wording uniform).

enum class TomlType { kString, kInteger, kFloat, kBoolean, kDate, kTime, kDateTime, kArray, kTable };

// "a string", "an integer", ..., for messages such as "must be a string, got an integer".
absl::string_view TomlTypeName(TomlType type);

struct TomlMember;

struct TomlValue {
  TomlType type = TomlType::kTable;
  int line = 0;                     // 1-based; a [table] or [[array]] element: its header's line
  std::string text;                 // kString; kDate/kTime/kDateTime as written (ISO 8601)
  int64_t integer = 0;              // kInteger
  double number = 0;                // kFloat
  bool boolean = false;             // kBoolean
  std::vector<TomlValue> items;     // kArray
  std::vector<TomlMember> members;  // kTable, in the order the keys appear in the file

  // The member named `key` of a table, or nullptr.
  const TomlValue* Find(absl::string_view key) const;
  // Every item is a table: [[name]] elements, or an array of inline tables.
  bool is_array_of_tables() const;
};

struct TomlMember {
  std::string key;
  int line = 0;  // where the key is written
  TomlValue value;
};

// "PATH:LINE" when the text has a name, "line LINE" when it has none (the
// caller then puts the name in front itself).
std::string TomlLocation(absl::string_view source, int line);

// Parses `text`; `source` names it in errors. A syntax error is an
// InvalidArgument "SOURCE:LINE: <toml++'s description>".
absl::StatusOr<TomlValue> ParseToml(absl::string_view text, absl::string_view source);

}  // namespace gpusched::config
