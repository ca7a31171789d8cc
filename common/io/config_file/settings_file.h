#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "common/config/toml_document.h"

// Settings files on disk: which one a binary reads, and their text read with
// a bound. The parsing itself (common/config) stays pure.
namespace gpusched::config {

// The settings file a binary reads: `flag_path` when given (it must then
// exist), else `default_path` when it exists, else none (all defaults).
std::optional<std::string> SettingsFileToRead(const std::string& flag_path, const char* default_path);

// The largest settings file (or file a setting names) that is read.
inline constexpr size_t kMaxConfigFileBytes = size_t{16} << 20;

// The text of a settings file; NotFound when it does not exist, and an error
// naming `path` and the reason when it cannot be read or is larger than
// kMaxConfigFileBytes.
absl::StatusOr<std::string> ReadConfigText(const std::string& path);

// ReadConfigText, then ParseToml with `path` as the source.
absl::StatusOr<TomlValue> ReadTomlFile(const std::string& path);

}  // namespace gpusched::config
