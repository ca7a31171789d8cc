#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "absl/strings/string_view.h"
#include "common/config/toml_table_reader.h"

namespace gpusched::config {

// How a setting is written, and so how it is read and checked, the same way
// in a settings file and on the command line.
enum class SettingType {
  kString,
  kNonEmptyString,
  kPath,           // in a file, a relative path is taken from the file's directory
  kExistingFile,   // a kPath that must name a file (the flag checks; a file's loader checks its own)
  kProgram,        // a name looked up in PATH, or (with a '/') a path as kPath
  kHostPort,       // HOST:PORT or unix:PATH, a port clients can dial
  kHostPortList,   // one kHostPort or several, comma-separated: the replicas of a daemon
  kListenAddress,  // HOST:PORT or unix:PATH; port 0 picks a free one
  kChoice,         // one of `choices`
  kInt,            // within [min, max]
  kBool,
  kStringList,  // an array of strings; on the command line, a repeated flag
};

using SettingValue = std::variant<std::string, int64_t, bool, std::vector<std::string>>;

// One setting of a binary: its key in the settings file, its flag, what the
// help says, and what values it takes.
struct SettingSpec {
  const char* key = "";
  const char* help = "";
  SettingType type = SettingType::kString;
  int64_t min = 0;
  int64_t max = 0;
  std::vector<std::string> choices;
  // Where the flag's name is not --KEY with '-' for '_' (a repeated flag is
  // singular: --admin for admins).
  const char* flag = nullptr;
  // The flag belongs to the program rather than one of its commands
  // (gpuschedd --log-level, for every command).
  bool program_wide = false;
};

// The rows' constructors, by type.
SettingSpec TextSetting(const char* key, SettingType type, const char* help);
SettingSpec IntSetting(const char* key, int64_t min, int64_t max, const char* help);
SettingSpec BoolSetting(const char* key, const char* help);
SettingSpec ChoiceSetting(const char* key, std::vector<std::string> choices, const char* help);
// `flag` is the repeated flag's name, e.g. "--admin" for admins.
SettingSpec ListSetting(const char* key, const char* flag, const char* help);
SettingSpec ProgramWide(SettingSpec spec);

// "--tick-ms" for tick_ms, or spec.flag.
std::string FlagName(const SettingSpec& spec);

// Reads spec.key from `reader`, checked by its type: std::nullopt when the
// key is absent or wrong (a wrong one is recorded in `reader` at its line).
std::optional<SettingValue> ReadSetting(TomlTableReader& reader, const SettingSpec& spec);

// A value as `check-config` shows it: 42, true, [a,b], or the text itself.
std::string FormatSetting(const SettingValue& value);

// Checks the text of a string-typed setting, from the file or a flag alike
// (an address, a non-empty string); "" when it is fine, else what is wrong.
std::string CheckSettingText(const SettingSpec& spec, const std::string& text);

// One row of a binary's settings table: the spec and the member of the
// binary's settings struct it sets. The struct's default member values are
// the settings' defaults, so that they are written once.
template <typename Values>
struct Setting {
  using Target =
      std::variant<std::string Values::*, int64_t Values::*, bool Values::*, std::vector<std::string> Values::*>;
  SettingSpec spec;
  Target target;
};

template <typename Values>
using SettingsTable = std::vector<Setting<Values>>;

template <typename Values>
SettingValue ValueOf(const Setting<Values>& setting, const Values& values) {
  return std::visit([&values](auto member) { return SettingValue(values.*member); }, setting.target);
}

// `value` must hold the target's type (TableProblems checks each row's type).
template <typename Values>
void Assign(const Setting<Values>& setting, const SettingValue& value, Values& values) {
  std::visit(
      [&](auto member) {
        using T = std::decay_t<decltype(values.*member)>;
        values.*member = std::get<T>(value);
      },
      setting.target);
}

// The value type a row's SettingType reads as, as an index into SettingValue.
size_t ValueIndexOf(SettingType type);

// Copies the row's member from `from` to `to`.
template <typename Values>
void CopySetting(const Setting<Values>& setting, const Values& from, Values& to) {
  std::visit([&](auto member) { to.*member = from.*member; }, setting.target);
}

// What is wrong with a table (a type that does not match its member, a key
// or flag twice, a choice without choices, an empty range), one line each.
template <typename Values>
std::vector<std::string> TableProblems(const SettingsTable<Values>& table) {
  std::vector<std::string> problems;
  std::vector<std::string> keys, flags;
  for (const Setting<Values>& row : table) {
    const std::string key = row.spec.key;
    if (ValueIndexOf(row.spec.type) != row.target.index()) problems.push_back(key + ": type does not match its member");
    if (row.spec.type == SettingType::kChoice && row.spec.choices.empty()) problems.push_back(key + ": no choices");
    if (row.spec.type == SettingType::kInt && row.spec.min > row.spec.max) problems.push_back(key + ": min > max");
    for (const std::string& seen : keys) {
      if (seen == key) problems.push_back(key + ": key twice");
    }
    for (const std::string& seen : flags) {
      if (seen == FlagName(row.spec)) problems.push_back(key + ": flag " + seen + " twice");
    }
    keys.push_back(key);
    flags.push_back(FlagName(row.spec));
  }
  return problems;
}

// What a settings file said: the values, at their defaults where it said
// nothing, and the keys it set, in table order.
template <typename Values>
struct SettingsFromFile {
  Values values;
  std::vector<std::string> keys_set;

  bool Sets(absl::string_view key) const {
    for (const std::string& k : keys_set) {
      if (k == key) return true;
    }
    return false;
  }
};

template <typename Values>
std::vector<absl::string_view> KeysOf(const SettingsTable<Values>& table) {
  std::vector<absl::string_view> keys;
  for (const Setting<Values>& row : table) keys.push_back(row.spec.key);
  return keys;
}

// Reads every key of `table` from `reader`; the problems go to `reader`.
template <typename Values>
SettingsFromFile<Values> ReadSettings(const SettingsTable<Values>& table, TomlTableReader& reader) {
  SettingsFromFile<Values> file;
  for (const Setting<Values>& row : table) {
    std::optional<SettingValue> value = ReadSetting(reader, row.spec);
    if (!value) continue;
    Assign(row, *value, file.values);
    file.keys_set.push_back(row.spec.key);
  }
  return file;
}

// "key=value" for each key the file set, in table order.
template <typename Values>
std::vector<std::string> DescribeSettings(const SettingsTable<Values>& table, const SettingsFromFile<Values>& file) {
  std::vector<std::string> lines;
  for (const Setting<Values>& row : table) {
    if (file.Sets(row.spec.key))
      lines.push_back(std::string(row.spec.key) + "=" + FormatSetting(ValueOf(row, file.values)));
  }
  return lines;
}

}  // namespace gpusched::config
