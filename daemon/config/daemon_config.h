#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/net/network_topology_conf.h"
#include "daemon/config/serve_settings.h"
#include "daemon/core/power/pool_spec.h"
#include "daemon/core/queue/queue_policy.h"

namespace gpusched::daemon {

// Where `gpuschedd serve` reads its settings when --config does not say.
inline constexpr char kDefaultDaemonConfigPath[] = "/etc/gpusched/gpuschedd.toml";

// What gpuschedd.toml says. Every key of ServeSettingsTable is the `serve`
// flag of the same name (tick_ms is --tick-ms); a key the file leaves out
// keeps its default and is not in settings.keys_set, and a flag given on the
// command line wins over the file.
struct DaemonConfig {
  config::SettingsFromFile<ServeSettings> settings;
  // The network that network_topology describes, already read and checked.
  std::shared_ptr<const NetworkTopologyConf> network;
  // [[queue]] and [priority], compiled; std::nullopt when the file has neither.
  std::optional<core::QueuePolicy> queues;
  // [[pool]]: elastic node pools, checked (daemon/config/pool_settings.h).
  std::vector<core::PoolSpec> pools;
};

// Parses gpuschedd.toml text; `path` names it in errors ("PATH:LINE: ...")
// and anchors relative paths. Unknown keys, wrong types and bad values are
// errors, as is a network_topology or TLS file that cannot be read or parsed
// (reported at that key's line).
absl::StatusOr<DaemonConfig> ParseDaemonConfig(absl::string_view text, const std::string& path);

// Reads `path`; NotFound when it does not exist.
absl::StatusOr<DaemonConfig> ReadDaemonConfig(const std::string& path);

// The settings `serve` starts with: `--config PATH` when given (it must
// exist), else kDefaultDaemonConfigPath when it exists, else none (all
// std::nullopt). `used` is set to the file read, or "".
absl::StatusOr<DaemonConfig> LoadServeConfig(const std::string& flag_path, std::string* used);

// One line for `gpuschedd check-config`: the keys set and their values.
std::string DescribeDaemonConfig(const DaemonConfig& config);

}  // namespace gpusched::daemon
