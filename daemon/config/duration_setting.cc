#include "daemon/config/duration_setting.h"

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

}  // namespace gpusched::daemon
