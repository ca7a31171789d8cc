#pragma once

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "cli/local_context.h"
#include "common/io/tls/tls_files.h"

namespace gpusched::cli {

// The environment variables of the three TLS settings.
inline constexpr char kTlsCaEnv[] = "GPUSCHED_TLS_CA";
inline constexpr char kTlsCertEnv[] = "GPUSCHED_TLS_CERT";
inline constexpr char kTlsKeyEnv[] = "GPUSCHED_TLS_KEY";

// --tls-ca, --tls-cert, --tls-key as given (std::nullopt: not given).
struct TlsFlags {
  std::optional<std::string> ca;
  std::optional<std::string> cert;
  std::optional<std::string> key;
};

// Each setting on its own: --tls-ca > $GPUSCHED_TLS_CA > the first cli.toml
// that sets tls_ca (the user's, then the system's, as CliConfigPaths), and the
// same for tls_cert and tls_key. So /etc/gpusched/cli.toml can name the
// cluster's CA for everyone while each user's own file names their
// certificate. Relative paths from the command line or the environment are
// taken from the current directory, those in a file from the file's.
//
// std::nullopt when none is set (plaintext), else the checked files; a usage
// error names the setting and the file at fault. The config files are read
// only when a setting is left to them.
absl::StatusOr<std::optional<tls::TlsMaterial>> ResolveTls(const TlsFlags& flags, const LocalContext& ctx);

}  // namespace gpusched::cli
