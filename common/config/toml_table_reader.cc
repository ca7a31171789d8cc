#include "common/config/toml_table_reader.h"

#include <algorithm>
#include <filesystem>  // layers: lexical paths only (a setting relative to its file), no file is read
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace gpusched::config {

TomlTableReader::TomlTableReader(const TomlValue& table, std::string source, std::string what)
    : table_(table), source_(std::move(source)), what_(std::move(what)) {}

void TomlTableReader::AllowOnly(const std::vector<absl::string_view>& known) {
  for (const TomlMember& member : table_.members) {
    if (std::find(known.begin(), known.end(), member.key) != known.end()) continue;
    Error(member.line, absl::StrCat("unknown key ", member.key, what_.empty() ? "" : absl::StrCat(" in ", what_),
                                    " (expected ", absl::StrJoin(known, ", "), ")"));
  }
}

const TomlValue* TomlTableReader::Typed(absl::string_view key, TomlType type) {
  const TomlValue* value = table_.Find(key);
  if (value == nullptr) return nullptr;
  if (value->type != type) {
    Error(value->line, absl::StrCat(key, " must be ", TomlTypeName(type), ", got ", TomlTypeName(value->type)));
    return nullptr;
  }
  return value;
}

std::optional<std::string> TomlTableReader::String(absl::string_view key) {
  const TomlValue* value = Typed(key, TomlType::kString);
  if (value == nullptr) return std::nullopt;
  return value->text;
}

std::optional<std::vector<std::string>> TomlTableReader::StringList(absl::string_view key) {
  const TomlValue* value = Typed(key, TomlType::kArray);
  if (value == nullptr) return std::nullopt;
  std::vector<std::string> out;
  for (const TomlValue& item : value->items) {
    if (item.type != TomlType::kString) {
      Error(item.line, absl::StrCat(key, " must be an array of strings, as [\"alice\", \"bob\"]"));
      return std::nullopt;
    }
    out.push_back(item.text);
  }
  return out;
}

std::optional<int64_t> TomlTableReader::Int(absl::string_view key, int64_t min, int64_t max) {
  const TomlValue* value = Typed(key, TomlType::kInteger);
  if (value == nullptr) return std::nullopt;
  if (value->integer < min || value->integer > max) {
    Error(value->line, absl::StrCat(key, " must be between ", min, " and ", max, ", got ", value->integer));
    return std::nullopt;
  }
  return value->integer;
}

std::optional<bool> TomlTableReader::Bool(absl::string_view key) {
  const TomlValue* value = Typed(key, TomlType::kBoolean);
  if (value == nullptr) return std::nullopt;
  return value->boolean;
}

std::optional<std::string> TomlTableReader::OneOf(absl::string_view key, const std::vector<std::string>& choices) {
  std::optional<std::string> value = String(key);
  if (!value || std::find(choices.begin(), choices.end(), *value) != choices.end()) return value;
  Error(LineOf(key), absl::StrCat(key, " \"", *value, "\" is not one of ", absl::StrJoin(choices, ", ")));
  return std::nullopt;
}

std::optional<std::string> TomlTableReader::Path(absl::string_view key) {
  std::optional<std::string> value = String(key);
  if (!value) return value;
  if (value->empty()) {
    Error(LineOf(key), absl::StrCat(key, " is empty"));
    return std::nullopt;
  }
  const std::filesystem::path path(*value);
  if (path.is_absolute() || source_.empty()) return value;
  return (std::filesystem::path(source_).parent_path() / path).lexically_normal().string();
}

std::optional<std::vector<std::pair<std::string, std::string>>> TomlTableReader::StringTable(absl::string_view key) {
  const TomlValue* table = Typed(key, TomlType::kTable);
  if (table == nullptr) return std::nullopt;
  std::vector<std::pair<std::string, std::string>> out;
  bool all_strings = true;
  for (const TomlMember& member : table->members) {
    if (member.value.type != TomlType::kString) {
      Error(member.value.line,
            absl::StrCat(key, ".", member.key, " must be a string, got ", TomlTypeName(member.value.type)));
      all_strings = false;
      continue;
    }
    out.emplace_back(member.key, member.value.text);
  }
  if (!all_strings) return std::nullopt;
  return out;
}

std::string TomlTableReader::RequiredString(absl::string_view key) {
  if (table_.Find(key) == nullptr) {
    Error(table_.line, absl::StrCat(what_, " needs ", key, " = \"...\""));
    return "";
  }
  return String(key).value_or("");
}

int64_t TomlTableReader::RequiredInt(absl::string_view key, int64_t min, int64_t max) {
  if (table_.Find(key) == nullptr) {
    Error(table_.line, absl::StrCat(what_, " needs ", key, " = <integer>"));
    return 0;
  }
  return Int(key, min, max).value_or(0);
}

int TomlTableReader::LineOf(absl::string_view key) const {
  const TomlValue* value = table_.Find(key);
  return value != nullptr ? value->line : table_.line;
}

void TomlTableReader::Error(int line, absl::string_view message) { errors_.push_back({line, std::string(message)}); }

void TomlTableReader::Absorb(const TomlTableReader& nested) {
  errors_.insert(errors_.end(), nested.errors_.begin(), nested.errors_.end());
}

absl::Status TomlTableReader::status() const {
  if (errors_.empty()) return absl::OkStatus();
  const Problem& first = errors_.front();
  return absl::InvalidArgumentError(absl::StrCat(TomlLocation(source_, first.line), ": ", first.message));
}

}  // namespace gpusched::config
