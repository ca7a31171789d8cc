#pragma once

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gpusched::cli {

// What cli.toml may set (packaging/config/cli.toml documents it).
struct CliConfig {
  std::optional<std::string> address;
  // TLS to the daemon (tls::kClientTlsKeys), resolved against the file's
  // directory, each file checked. They need not come together: a user's file
  // may name a certificate and leave the CA to /etc/gpusched/cli.toml.
  std::optional<std::string> tls_ca;
  std::optional<std::string> tls_cert;
  std::optional<std::string> tls_key;
};

// Unknown keys are errors rather than ignored: a misspelt `address` would
// otherwise send the CLI silently to the default daemon. Errors read
// "PATH:LINE: what is wrong".
absl::StatusOr<CliConfig> ParseCliConfig(absl::string_view text, absl::string_view path);

// std::nullopt when the file does not exist; an error when it exists but
// cannot be read or parsed.
absl::StatusOr<std::optional<CliConfig>> ReadCliConfig(const std::string& path);

}  // namespace gpusched::cli
