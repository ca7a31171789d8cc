#include "common/config/settings_table.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/config/host_port.h"

namespace gpusched::config {
namespace {

bool IsAddress(SettingType type) { return type == SettingType::kHostPort || type == SettingType::kListenAddress; }

bool IsHostPortList(absl::string_view text) {
  if (text.empty()) return false;
  for (absl::string_view one : absl::StrSplit(text, ',')) {
    if (!IsHostPort(std::string(absl::StripAsciiWhitespace(one)), /*listen=*/false)) return false;
  }
  return true;
}

}  // namespace

SettingSpec TextSetting(const char* key, SettingType type, const char* help) {
  SettingSpec spec;
  spec.key = key;
  spec.help = help;
  spec.type = type;
  return spec;
}

SettingSpec IntSetting(const char* key, int64_t min, int64_t max, const char* help) {
  SettingSpec spec = TextSetting(key, SettingType::kInt, help);
  spec.min = min;
  spec.max = max;
  return spec;
}

SettingSpec BoolSetting(const char* key, const char* help) { return TextSetting(key, SettingType::kBool, help); }

SettingSpec ChoiceSetting(const char* key, std::vector<std::string> choices, const char* help) {
  SettingSpec spec = TextSetting(key, SettingType::kChoice, help);
  spec.choices = std::move(choices);
  return spec;
}

SettingSpec ListSetting(const char* key, const char* flag, const char* help) {
  SettingSpec spec = TextSetting(key, SettingType::kStringList, help);
  spec.flag = flag;
  return spec;
}

SettingSpec ProgramWide(SettingSpec spec) {
  spec.program_wide = true;
  return spec;
}

std::string FlagName(const SettingSpec& spec) {
  if (spec.flag != nullptr) return spec.flag;
  return absl::StrCat("--", absl::StrReplaceAll(spec.key, {{"_", "-"}}));
}

size_t ValueIndexOf(SettingType type) {
  switch (type) {
    case SettingType::kInt: return 1;
    case SettingType::kBool: return 2;
    case SettingType::kStringList: return 3;
    default: return 0;
  }
}

std::string CheckSettingText(const SettingSpec& spec, const std::string& text) {
  if (IsAddress(spec.type) && !IsHostPort(text, spec.type == SettingType::kListenAddress)) {
    return absl::StrCat("\"", text, "\" is not HOST:PORT");
  }
  if (spec.type == SettingType::kHostPortList && !IsHostPortList(text)) {
    return absl::StrCat("\"", text, "\" is not HOST:PORT, nor several of them comma-separated");
  }
  if (spec.type == SettingType::kNonEmptyString && text.empty()) return "must not be empty";
  return "";
}

std::optional<SettingValue> ReadSetting(TomlTableReader& reader, const SettingSpec& spec) {
  switch (spec.type) {
    case SettingType::kInt: {
      std::optional<int64_t> value = reader.Int(spec.key, spec.min, spec.max);
      if (!value) return std::nullopt;
      return *value;
    }
    case SettingType::kBool: {
      std::optional<bool> value = reader.Bool(spec.key);
      if (!value) return std::nullopt;
      return *value;
    }
    case SettingType::kStringList: {
      std::optional<std::vector<std::string>> value = reader.StringList(spec.key);
      if (!value) return std::nullopt;
      return *std::move(value);
    }
    case SettingType::kChoice: {
      std::optional<std::string> value = reader.OneOf(spec.key, spec.choices);
      if (!value) return std::nullopt;
      return *std::move(value);
    }
    case SettingType::kPath:
    case SettingType::kExistingFile: {
      std::optional<std::string> value = reader.Path(spec.key);
      if (!value) return std::nullopt;
      return *std::move(value);
    }
    case SettingType::kProgram: {
      std::optional<std::string> value = reader.String(spec.key);
      if (!value) return std::nullopt;
      if (value->find('/') == std::string::npos) return *std::move(value);
      return reader.Path(spec.key).value_or(*value);
    }
    case SettingType::kString:
    case SettingType::kNonEmptyString:
    case SettingType::kHostPort:
    case SettingType::kHostPortList:
    case SettingType::kListenAddress: {
      std::optional<std::string> value = reader.String(spec.key);
      if (!value) return std::nullopt;
      if (std::string problem = CheckSettingText(spec, *value); !problem.empty()) {
        reader.Error(reader.LineOf(spec.key), absl::StrCat(spec.key, " ", problem));
        return std::nullopt;
      }
      return *std::move(value);
    }
  }
  return std::nullopt;
}

std::string FormatSetting(const SettingValue& value) {
  struct Format {
    std::string operator()(const std::string& text) const { return text; }
    std::string operator()(int64_t number) const { return absl::StrCat(number); }
    std::string operator()(bool flag) const { return flag ? "true" : "false"; }
    std::string operator()(const std::vector<std::string>& list) const {
      return absl::StrCat("[", absl::StrJoin(list, ","), "]");
    }
  };
  return std::visit(Format{}, value);
}

}  // namespace gpusched::config
