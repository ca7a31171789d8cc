#include "agent/config/agent_config.h"

#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/config/gpu_share_modes.h"
#include "common/config/toml_document.h"
#include "common/config/toml_table_reader.h"
#include "common/io/config_file/settings_file.h"
#include "common/io/tls/tls_config_keys.h"

namespace gpusched::agent {
namespace {

using config::TomlTableReader;

// Node labels go to the daemon as they are; the ones placement reads
// (rack, leaf, spine, nvlink-domain) must not be empty.
void CheckLabels(TomlTableReader& reader, const std::vector<std::pair<std::string, std::string>>& labels) {
  const config::TomlValue* table = reader.Find("labels");
  for (const auto& [key, value] : labels) {
    const config::TomlValue* item = table->Find(key);
    if (key.empty()) reader.Error(item->line, "labels: a label needs a name");
    if (value.empty()) reader.Error(item->line, absl::StrCat("labels.", key, " is empty"));
  }
}

}  // namespace

absl::StatusOr<AgentConfig> ParseAgentConfig(absl::string_view text, const std::string& path) {
  auto doc = config::ParseToml(text, path);
  if (!doc.ok()) return doc.status();
  const config::SettingsTable<AgentSettings>& table = AgentSettingsTable();
  TomlTableReader reader(*doc, path, "");
  std::vector<absl::string_view> keys = config::KeysOf(table);
  keys.insert(keys.end(), {"gpu_share_modes", "labels"});
  reader.AllowOnly(keys);
  AgentConfig config;
  config.settings = config::ReadSettings(table, reader);
  const AgentSettings& values = config.settings.values;
  if (config.settings.Sets("topology_file")) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(values.topology_file, ec)) {
      reader.Error(reader.LineOf("topology_file"),
                   absl::StrCat("topology_file ", values.topology_file, " is not a readable file"));
    }
  }
  for (const std::string& mount : values.container_mounts) {
    if (mount.empty() || mount.front() != '/') {
      reader.Error(reader.LineOf("container_mounts"),
                   absl::StrCat("container_mounts: \"", mount, "\" is not an absolute path"));
    }
  }
  if (auto modes = reader.StringTable("gpu_share_modes")) {
    if (auto parsed = ParseGpuShareModes(*modes); !parsed.ok()) {
      reader.Error(reader.LineOf("gpu_share_modes"), std::string(parsed.status().message()));
    }
    config.gpu_share_modes = *std::move(modes);
  }
  if (auto labels = reader.StringTable("labels")) {
    CheckLabels(reader, *labels);
    config.labels = *std::move(labels);
  }
  tls::RecordTlsProblems(reader, {.cert = values.tls_cert, .key = values.tls_key, .ca = values.tls_ca},
                         tls::kClientTlsKeys);
  if (!reader.ok()) return reader.status();
  return config;
}

absl::StatusOr<AgentConfig> ReadAgentConfig(const std::string& path) {
  auto text = config::ReadConfigText(path);
  if (!text.ok()) return text.status();
  return ParseAgentConfig(*text, path);
}

absl::StatusOr<AgentConfig> LoadAgentConfig(const std::string& flag_path, std::string* used) {
  used->clear();
  const std::optional<std::string> path = config::SettingsFileToRead(flag_path, kDefaultAgentConfigPath);
  if (!path) return AgentConfig{};
  auto config = ReadAgentConfig(*path);
  if (config.ok()) *used = *path;
  return config;
}

std::string DescribeAgentConfig(const AgentConfig& config) {
  std::vector<std::string> set = config::DescribeSettings(AgentSettingsTable(), config.settings);
  for (const auto& [gpus, mode] : config.gpu_share_modes) {
    set.push_back(absl::StrCat("gpu_share_modes.", gpus, "=", mode));
  }
  for (const auto& [key, value] : config.labels) set.push_back(absl::StrCat("labels.", key, "=", value));
  if (set.empty()) return "valid, sets nothing (every setting at its default)";
  return absl::StrCat("valid, ", set.size(), set.size() == 1 ? " setting: " : " settings: ", absl::StrJoin(set, " "));
}

}  // namespace gpusched::agent
