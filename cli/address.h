#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/local_context.h"

namespace gpusched::cli {

// The config files consulted, most specific first:
// ($XDG_CONFIG_HOME or ~/.config)/gpusched/cli.toml, then <system>/cli.toml.
std::vector<std::string> CliConfigPaths(const LocalContext& ctx);

// --addr > $GPUSCHED_ADDR > the first config file that sets `address` >
// kDefaultDaemonAddress. A source that wins is validated; the ones below it
// are not read, so a broken config file can always be bypassed with --addr.
absl::StatusOr<std::string> ResolveDaemonAddress(const std::optional<std::string>& flag, const LocalContext& ctx);

// HOST:PORT, [V6]:PORT, or a gRPC target with a scheme (unix:/path, dns:///h:p);
// or several HOST:PORT, comma-separated: the replicas of one daemon.
bool IsValidDaemonAddress(const std::string& address);

}  // namespace gpusched::cli
