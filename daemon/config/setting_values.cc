#include "daemon/config/setting_values.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "common/time_limit.h"

namespace gpusched::daemon {

std::optional<int64_t> ReadDuration(config::TomlTableReader& reader, absl::string_view key) {
  std::optional<std::string> text = reader.String(key);
  if (!text) return std::nullopt;
  auto seconds = ParseTimeLimit(*text);
  if (!seconds.ok()) {
    reader.Error(reader.LineOf(key), absl::StrCat(key, ": ", seconds.status().message()));
    return std::nullopt;
  }
  return *seconds;
}

std::optional<double> ReadNumber(config::TomlTableReader& reader, absl::string_view key, double max) {
  const config::TomlValue* value = reader.Find(key);
  if (value == nullptr) return std::nullopt;
  double v = 0;
  if (value->type == config::TomlType::kFloat) {
    v = value->number;
  } else if (value->type == config::TomlType::kInteger) {
    v = static_cast<double>(value->integer);
  } else {
    reader.Error(reader.LineOf(key), absl::StrCat(key, " must be a number, got ", config::TomlTypeName(value->type)));
    return std::nullopt;
  }
  if (!(v >= 0) || v > max) {
    reader.Error(reader.LineOf(key), absl::StrCat(key, " ", v, " is not between 0 and ", max));
    return std::nullopt;
  }
  return v;
}

}  // namespace gpusched::daemon
