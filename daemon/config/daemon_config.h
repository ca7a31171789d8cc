#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/net/network_topology_conf.h"
#include "daemon/core/power/pool_spec.h"
#include "daemon/core/queue/queue_policy.h"

namespace gpusched::daemon {

// Where `gpuschedd serve` reads its settings when --config does not say.
inline constexpr char kDefaultDaemonConfigPath[] = "/etc/gpusched/gpuschedd.toml";

// An integer setting's default and bounds, shared by the `serve` flag and the
// gpuschedd.toml key so that the two cannot drift apart.
struct IntSetting {
  const char* key;
  int64_t default_value;
  int64_t min;
  int64_t max;
};
inline constexpr IntSetting kKillGraceMs{"kill_grace_ms", 10'000, 0, 3'600'000};
inline constexpr IntSetting kTickMs{"tick_ms", 200, 10, 60'000};
inline constexpr IntSetting kNodeNotRespondingMs{"node_not_responding_ms", 30'000, 100, 86'400'000};
inline constexpr IntSetting kNodeDownMs{"node_down_ms", 120'000, 100, 86'400'000};
// CoreOptions::head_blocks_after, in hours (0: strict queue order).
inline constexpr IntSetting kHeadBlocksAfterH{"head_blocks_after_h", core::kDefaultHeadBlocksAfterHours, 0, 8760};
// The NCCL probe's thresholds, in percent of the topology's estimate: a link
// calibration below probe_drain_below_percent on any GPU pair drains the node;
// a gang preflight below preflight_min_percent of its GPUs' ring estimate
// sends the job back to the queue and drains the node. NCCL reaches 70-90% of
// a link's rate on healthy hardware, so half is "far below".
inline constexpr IntSetting kProbeDrainBelowPercent{"probe_drain_below_percent", 50, 0, 100};
inline constexpr IntSetting kPreflightMinPercent{"preflight_min_percent", 50, 0, 100};
inline constexpr char kDefaultStateDir[] = "/var/lib/gpusched";

// What gpuschedd.toml sets. Every key is the `serve` flag of the same name
// (tick_ms is --tick-ms, log_level is --log-level); a key the file leaves out
// stays std::nullopt, and a flag given on the command line wins over the file.
// packaging/config/gpuschedd.toml documents each key.
struct DaemonConfig {
  std::optional<std::string> listen;
  std::optional<std::string> state_dir;
  std::optional<std::string> log_level;
  std::optional<std::string> placement_policy;
  std::optional<std::string> share_packing;     // best-fit or fgd
  std::optional<std::string> default_topology;  // prefer, strict or any
  std::optional<std::string> metrics_listen;
  // The Unix socket for the CLI on this host, and who may act on anyone's
  // jobs there besides root.
  std::optional<std::string> socket;
  std::optional<std::vector<std::string>> admins;
  std::optional<bool> allow_unauthenticated_tcp;
  std::optional<bool> allow_root_jobs;
  std::optional<int64_t> tick_ms;
  std::optional<int64_t> kill_grace_ms;
  std::optional<int64_t> node_not_responding_ms;
  std::optional<int64_t> node_down_ms;
  std::optional<int64_t> head_blocks_after_h;
  std::optional<int64_t> probe_drain_below_percent;
  std::optional<int64_t> preflight_min_percent;
  // network_topology: the path as resolved (relative to the file's own
  // directory) and the network it describes, already read and checked.
  std::optional<std::string> network_topology;
  std::shared_ptr<const NetworkTopologyConf> network;
  // TLS on the gRPC port (tls::kServerTlsKeys): paths resolved like
  // network_topology, the files read and checked (readable, PEM, key matching
  // certificate) with each problem at its key's line.
  std::optional<std::string> tls_cert;
  std::optional<std::string> tls_key;
  std::optional<std::string> tls_client_ca;
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
