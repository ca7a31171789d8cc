#pragma once

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gpusched::cli {

// What cli.toml may set (packaging/config/cli.toml documents it).
struct CliConfig {
  std::optional<std::string> address;
};

// Unknown keys are errors rather than ignored: a misspelt `address` would
// otherwise send the CLI silently to the default daemon. Errors read
// "PATH:LINE: what is wrong".
absl::StatusOr<CliConfig> ParseCliConfig(absl::string_view text, absl::string_view path);

// std::nullopt when the file does not exist; an error when it exists but
// cannot be read or parsed.
absl::StatusOr<std::optional<CliConfig>> ReadCliConfig(const std::string& path);

}  // namespace gpusched::cli
