#include "daemon/config/daemon_config.h"

#include <system_error>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/config/host_port.h"
#include "common/config/log_levels.h"
#include "common/config/toml_document.h"
#include "common/config/toml_table_reader.h"
#include "common/io/config_file/settings_file.h"
#include "common/io/tls/tls_config_keys.h"
#include "daemon/config/network_topology_file.h"
#include "daemon/config/pool_settings.h"
#include "daemon/config/queue_settings.h"
#include "daemon/core/policy/placement_policy.h"

namespace gpusched::daemon {
namespace {

using config::TomlTableReader;

std::optional<std::string> ListenAddress(TomlTableReader& reader, absl::string_view key) {
  std::optional<std::string> value = reader.String(key);
  if (value && !config::IsHostPort(*value, /*port_zero_ok=*/true)) {
    reader.Error(reader.LineOf(key), absl::StrCat(key, " \"", *value, "\" is not HOST:PORT"));
    return std::nullopt;
  }
  return value;
}

std::optional<int64_t> Int(TomlTableReader& reader, const IntSetting& setting) {
  return reader.Int(setting.key, setting.min, setting.max);
}

}  // namespace

absl::StatusOr<DaemonConfig> ParseDaemonConfig(absl::string_view text, const std::string& path) {
  auto doc = config::ParseToml(text, path);
  if (!doc.ok()) return doc.status();
  TomlTableReader reader(*doc, path, "");
  reader.AllowOnly({"listen",
                    "state_dir",
                    "log_level",
                    "placement_policy",
                    "share_packing",
                    "default_topology",
                    "network_topology",
                    "metrics_listen",
                    kTickMs.key,
                    kKillGraceMs.key,
                    kNodeNotRespondingMs.key,
                    kNodeDownMs.key,
                    kHeadBlocksAfterH.key,
                    kProbeDrainBelowPercent.key,
                    kPreflightMinPercent.key,
                    tls::kServerTlsKeys.cert,
                    tls::kServerTlsKeys.key,
                    tls::kServerTlsKeys.ca,
                    "queue",
                    "priority",
                    "pool",
                    "socket",
                    "admins",
                    "allow_unauthenticated_tcp",
                    "allow_root_jobs"});
  DaemonConfig config;
  config.listen = ListenAddress(reader, "listen");
  config.state_dir = reader.Path("state_dir");
  config.log_level = reader.OneOf("log_level", config::LogLevelNames());
  config.placement_policy = reader.OneOf("placement_policy", core::PlacementPolicyNames());
  config.share_packing = reader.OneOf("share_packing", core::SharePackingNames());
  config.default_topology = reader.OneOf("default_topology", {"prefer", "strict", "any"});
  config.metrics_listen = ListenAddress(reader, "metrics_listen");
  config.socket = reader.Path("socket");
  config.admins = reader.StringList("admins");
  config.allow_unauthenticated_tcp = reader.Bool("allow_unauthenticated_tcp");
  config.allow_root_jobs = reader.Bool("allow_root_jobs");
  config.tick_ms = Int(reader, kTickMs);
  config.kill_grace_ms = Int(reader, kKillGraceMs);
  config.node_not_responding_ms = Int(reader, kNodeNotRespondingMs);
  config.node_down_ms = Int(reader, kNodeDownMs);
  config.head_blocks_after_h = Int(reader, kHeadBlocksAfterH);
  config.probe_drain_below_percent = Int(reader, kProbeDrainBelowPercent);
  config.preflight_min_percent = Int(reader, kPreflightMinPercent);
  if (config.node_not_responding_ms && config.node_down_ms && *config.node_down_ms < *config.node_not_responding_ms) {
    reader.Error(
        reader.LineOf(kNodeDownMs.key),
        absl::StrCat(kNodeDownMs.key, " (", *config.node_down_ms, ") is shorter than ", kNodeNotRespondingMs.key, " (",
                     *config.node_not_responding_ms, "): a node is not responding before it is down"));
  }
  config.network_topology = reader.Path("network_topology");
  if (config.network_topology) {
    auto network = ReadNetworkTopologyFile(*config.network_topology);
    if (network.ok()) {
      config.network = *std::move(network);
    } else {
      reader.Error(reader.LineOf("network_topology"), network.status().message());
    }
  }
  const tls::TlsFiles tls = tls::ReadTlsKeys(reader, tls::kServerTlsKeys);
  auto set = [](const std::string& file) { return file.empty() ? std::nullopt : std::optional<std::string>(file); };
  config.tls_cert = set(tls.cert);
  config.tls_key = set(tls.key);
  config.tls_client_ca = set(tls.ca);
  config.queues = ReadQueueSettings(*doc, reader);
  config.pools = ReadPoolSettings(*doc, reader);
  if (!reader.ok()) return reader.status();
  return config;
}

absl::StatusOr<DaemonConfig> ReadDaemonConfig(const std::string& path) {
  auto text = config::ReadConfigText(path);
  if (!text.ok()) return text.status();
  return ParseDaemonConfig(*text, path);
}

absl::StatusOr<DaemonConfig> LoadServeConfig(const std::string& flag_path, std::string* used) {
  used->clear();
  const std::optional<std::string> path = config::SettingsFileToRead(flag_path, kDefaultDaemonConfigPath);
  if (!path) return DaemonConfig{};
  auto config = ReadDaemonConfig(*path);
  if (config.ok()) *used = *path;
  return config;
}

std::string DescribeDaemonConfig(const DaemonConfig& config) {
  std::vector<std::string> set;
  auto add = [&set](absl::string_view key, const auto& value) {
    if (value) set.push_back(absl::StrCat(key, "=", *value));
  };
  add("listen", config.listen);
  add("state_dir", config.state_dir);
  add("log_level", config.log_level);
  add("placement_policy", config.placement_policy);
  add("share_packing", config.share_packing);
  add("default_topology", config.default_topology);
  add("metrics_listen", config.metrics_listen);
  add("socket", config.socket);
  if (config.admins) set.push_back(absl::StrCat("admins=", absl::StrJoin(*config.admins, ",")));
  auto add_bool = [&set](absl::string_view key, const std::optional<bool>& value) {
    if (value) set.push_back(absl::StrCat(key, "=", *value ? "true" : "false"));
  };
  add_bool("allow_unauthenticated_tcp", config.allow_unauthenticated_tcp);
  add_bool("allow_root_jobs", config.allow_root_jobs);
  add("network_topology", config.network_topology);
  add(kTickMs.key, config.tick_ms);
  add(kKillGraceMs.key, config.kill_grace_ms);
  add(kNodeNotRespondingMs.key, config.node_not_responding_ms);
  add(kNodeDownMs.key, config.node_down_ms);
  add(kHeadBlocksAfterH.key, config.head_blocks_after_h);
  add(kProbeDrainBelowPercent.key, config.probe_drain_below_percent);
  add(kPreflightMinPercent.key, config.preflight_min_percent);
  add("tls_cert", config.tls_cert);
  add("tls_key", config.tls_key);
  add("tls_client_ca", config.tls_client_ca);
  if (set.empty()) {
    std::vector<std::string> parts;
    if (config.queues) parts.push_back(DescribeQueuePolicy(*config.queues));
    if (!config.pools.empty()) parts.push_back(DescribePools(config.pools));
    return parts.empty() ? "valid, sets nothing (every setting at its default)"
                         : absl::StrCat("valid, ", absl::StrJoin(parts, "; "));
  }
  std::string line =
      absl::StrCat("valid, ", set.size(), set.size() == 1 ? " setting: " : " settings: ", absl::StrJoin(set, " "));
  if (config.network) {
    absl::StrAppend(&line, " (", config.network->switches().size(), " switches, ", config.network->blocks().size(),
                    " NVLink domains)");
  }
  if (config.queues) absl::StrAppend(&line, "; ", DescribeQueuePolicy(*config.queues));
  if (!config.pools.empty()) absl::StrAppend(&line, "; ", DescribePools(config.pools));
  return line;
}

}  // namespace gpusched::daemon
