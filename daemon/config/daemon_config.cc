#include "daemon/config/daemon_config.h"

#include <system_error>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/config/toml_document.h"
#include "common/config/toml_table_reader.h"
#include "common/io/config_file/settings_file.h"
#include "common/io/tls/tls_config_keys.h"
#include "daemon/config/network_topology_file.h"
#include "daemon/config/pool_settings.h"
#include "daemon/config/queue_settings.h"
#include "daemon/store/store_url.h"

namespace gpusched::daemon {

absl::StatusOr<DaemonConfig> ParseDaemonConfig(absl::string_view text, const std::string& path) {
  auto doc = config::ParseToml(text, path);
  if (!doc.ok()) return doc.status();
  const config::SettingsTable<ServeSettings>& table = ServeSettingsTable();
  config::TomlTableReader reader(*doc, path, "");
  std::vector<absl::string_view> keys = config::KeysOf(table);
  keys.insert(keys.end(), {"queue", "priority", "pool"});
  reader.AllowOnly(keys);
  DaemonConfig config;
  config.settings = config::ReadSettings(table, reader);
  const ServeSettings& values = config.settings.values;
  if (config.settings.Sets("node_not_responding_ms") && config.settings.Sets("node_down_ms") &&
      values.node_down_ms < values.node_not_responding_ms) {
    reader.Error(reader.LineOf("node_down_ms"),
                 absl::StrCat("node_down_ms (", values.node_down_ms, ") is shorter than node_not_responding_ms (",
                              values.node_not_responding_ms, "): a node is not responding before it is down"));
  }
  if (config.settings.Sets("network_topology")) {
    auto network = ReadNetworkTopologyFile(values.network_topology);
    if (network.ok()) {
      config.network = *std::move(network);
    } else {
      reader.Error(reader.LineOf("network_topology"), network.status().message());
    }
  }
  if (config.settings.Sets("store")) {
    if (auto url = store::ParseStoreUrl(values.store); !url.ok()) {
      reader.Error(reader.LineOf("store"), url.status().message());
    }
  }
  tls::RecordTlsProblems(reader, {.cert = values.tls_cert, .key = values.tls_key, .ca = values.tls_client_ca},
                         tls::kServerTlsKeys);
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
  const std::vector<std::string> set = config::DescribeSettings(ServeSettingsTable(), config.settings);
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
