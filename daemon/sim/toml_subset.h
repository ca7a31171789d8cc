#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gpusched::sim {

// The part of TOML (toml.io, v1.0) that a cluster spec needs, parsed without
// a dependency: Debian 12 has toml++ 3.3, but one more build dependency for
// twenty lines of configuration was not worth it. Supported:
//
//   # comments, blank lines
//   key = "basic string"   # escapes \" \\ \n \t only
//   key = 'literal string'
//   key = 42               # integers, optional sign, '_' between digits
//   key = 0.3              # floats with '.' and/or an exponent
//   key = true             # booleans
//   key = [1, "a", 2.5]    # arrays of the above, on one line
//   [table]                # a table, once
//   [[array]]              # one more element of an array of tables
//
// Keys are bare (letters, digits, '_' and '-'). Anything else that TOML allows
// (dotted or quoted keys, inline tables, multi-line strings and arrays, dates,
// hex/octal/binary integers, inf/nan) is rejected with an error that says it
// is not supported, rather than misread. Every error is an InvalidArgument
// "line N: ..." with the 1-based line.
struct TomlValue;
using TomlArray = std::vector<TomlValue>;

struct TomlValue {
  std::variant<std::string, int64_t, double, bool, TomlArray> value;
  int line = 0;

  bool is_string() const { return std::holds_alternative<std::string>(value); }
  bool is_int() const { return std::holds_alternative<int64_t>(value); }
  bool is_float() const { return std::holds_alternative<double>(value); }
  bool is_bool() const { return std::holds_alternative<bool>(value); }
  bool is_array() const { return std::holds_alternative<TomlArray>(value); }
  // "string", "integer", "float", "boolean" or "array", for messages.
  absl::string_view type_name() const;
};

struct TomlTable {
  std::string name;        // "" for the top level
  bool array_element = false;  // written [[name]]
  int line = 0;            // of its header; 0 for the top level
  std::vector<std::pair<std::string, TomlValue>> entries;  // in file order

  const TomlValue* Find(absl::string_view key) const;
};

struct TomlDocument {
  TomlTable root;
  std::vector<TomlTable> tables;  // every [table] and [[array]] element, in file order
};

absl::StatusOr<TomlDocument> ParseTomlSubset(absl::string_view text);

}  // namespace gpusched::sim
