#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "common/config/toml_document.h"

namespace gpusched::config {

// Typed reads of one TOML table for a settings loader. Every problem is
// recorded with the line it is on, and reading goes on, so that a loader
// reads straight through and asks status() once at the end; status() is the
// first problem found, in the order the loader asked (unknown keys first when
// it starts with AllowOnly): "SOURCE:LINE: KEY must be ...".
//
//   TomlTableReader r(doc, path, "");
//   r.AllowOnly({"listen", "tick_ms"});
//   settings.listen = r.String("listen");          // std::nullopt when absent
//   settings.tick_ms = r.Int("tick_ms", 10, 60000);
//   if (!r.ok()) return r.status();
class TomlTableReader {
 public:
  // `source` as for TomlLocation; `what` names the table in messages ("[[node_type]]",
  // "the top level"), or "" where the file has only one.
  TomlTableReader(const TomlValue& table, std::string source, std::string what);

  // A key not in `known` is an error: "unknown key K in WHAT (expected a, b, c)".
  void AllowOnly(const std::vector<absl::string_view>& known);

  // Each returns std::nullopt when the key is absent or wrong (a wrong one is recorded).
  std::optional<std::string> String(absl::string_view key);
  std::optional<int64_t> Int(absl::string_view key, int64_t min, int64_t max);
  std::optional<bool> Bool(absl::string_view key);
  // A string that must be one of `choices`.
  std::optional<std::string> OneOf(absl::string_view key, const std::vector<std::string>& choices);
  // A non-empty string naming a file or directory; a relative one is taken
  // from the directory of `source` (the config file), not the working directory.
  std::optional<std::string> Path(absl::string_view key);
  // An array of strings (`admins = ["alice", "bob"]`), in file order.
  std::optional<std::vector<std::string>> StringList(absl::string_view key);
  // A table of strings (`labels = { rack = "r1" }` or a [labels] section), in file order.
  std::optional<std::vector<std::pair<std::string, std::string>>> StringTable(absl::string_view key);

  // The same for keys that must be there: absent is an error at the table's
  // line ("WHAT needs KEY = ..."), and the result is then empty / 0.
  std::string RequiredString(absl::string_view key);
  int64_t RequiredInt(absl::string_view key, int64_t min, int64_t max);

  const TomlValue* Find(absl::string_view key) const { return table_.Find(key); }
  // The line of `key`'s value, else of the table.
  int LineOf(absl::string_view key) const;
  const std::string& what() const { return what_; }
  const std::string& source() const { return source_; }

  // For checks the loader makes itself (cross-key rules, files that must exist).
  void Error(int line, absl::string_view message);
  // Takes over the problems of a reader of a nested table of the same file.
  void Absorb(const TomlTableReader& nested);

  bool ok() const { return errors_.empty(); }
  // OK, or the first problem recorded.
  absl::Status status() const;

 private:
  struct Problem {
    int line;
    std::string message;
  };
  const TomlValue* Typed(absl::string_view key, TomlType type);

  const TomlValue& table_;
  std::string source_;
  std::string what_;
  std::vector<Problem> errors_;
};

}  // namespace gpusched::config
