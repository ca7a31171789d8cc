#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent/config/agent_settings.h"

namespace gpusched::agent {

// Where gpusched-agent reads its settings when --config does not say.
inline constexpr char kDefaultAgentConfigPath[] = "/etc/gpusched/agent.toml";

// What agent.toml says. Every key of AgentSettingsTable is the
// gpusched-agent flag of the same name (log_dir is --log-dir); a key the file
// leaves out keeps its default and is not in settings.keys_set, and a flag
// given on the command line wins over the file.
struct AgentConfig {
  config::SettingsFromFile<AgentSettings> settings;
  // [gpu_share_modes]: GPU indices -> mode, over gpu_share_mode (in file
  // order; checked by ParseGpuShareModes). The flag is repeated
  // --gpu-share-modes 0-3=mps, and replaces the table as a whole.
  std::vector<std::pair<std::string, std::string>> gpu_share_modes;
  // [labels] (or `labels = {rack = "r01"}`), in file order; the flag is
  // repeated --label rack=r01, and wins key by key.
  std::vector<std::pair<std::string, std::string>> labels;
};

// Parses agent.toml text; `path` names it in errors ("PATH:LINE: ..."). Unknown
// keys, wrong types and bad values are errors, as is a topology_file that does
// not exist or a TLS file that cannot be used.
absl::StatusOr<AgentConfig> ParseAgentConfig(absl::string_view text, const std::string& path);

// Reads `path`; NotFound when it does not exist.
absl::StatusOr<AgentConfig> ReadAgentConfig(const std::string& path);

// `--config PATH` when given (it must exist), else kDefaultAgentConfigPath
// when it exists, else nothing set. `used` is set to the file read, or "".
absl::StatusOr<AgentConfig> LoadAgentConfig(const std::string& flag_path, std::string* used);

// One line for `gpusched-agent check-config`: the keys set and their values.
std::string DescribeAgentConfig(const AgentConfig& config);

}  // namespace gpusched::agent
