#include "agent/config/agent_config.h"

#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/config/gpu_share_modes.h"
#include "common/config/host_port.h"
#include "common/config/log_levels.h"
#include "common/config/toml_document.h"
#include "common/config/toml_table_reader.h"
#include "common/io/config_file/settings_file.h"
#include "common/io/tls/tls_config_keys.h"

namespace gpusched::agent {
namespace {

using config::TomlTableReader;

std::optional<std::string> Address(TomlTableReader& reader, absl::string_view key, bool port_zero_ok) {
  std::optional<std::string> value = reader.String(key);
  if (value && !config::IsHostPort(*value, port_zero_ok)) {
    reader.Error(reader.LineOf(key), absl::StrCat(key, " \"", *value, "\" is not HOST:PORT"));
    return std::nullopt;
  }
  return value;
}

std::optional<int64_t> Int(TomlTableReader& reader, const AgentIntSetting& setting) {
  return reader.Int(setting.key, setting.min, setting.max);
}

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
  TomlTableReader reader(*doc, path, "");
  reader.AllowOnly({"daemon",
                    "node_name",
                    "advertise_address",
                    "gpu_source",
                    "topology_file",
                    "nvml_library",
                    kFakeGpus.key,
                    "gpu_model",
                    kGpuMemoryMb.key,
                    kCpus.key,
                    kMemoryMb.key,
                    "log_dir",
                    "cpu_bind",
                    "gpu_share_mode",
                    "gpu_share_modes",
                    "mps_control_program",
                    "mps_dir",
                    "nccl_topo_file",
                    "nccl_probe",
                    "calibrate_on_start",
                    "shim",
                    "keep_jobs_on_stop",
                    "container_runtime",
                    "container_oci_runtime",
                    "container_registries",
                    "container_mounts",
                    "container_run_args",
                    kContainerPullTimeoutS.key,
                    "labels",
                    "metrics_listen",
                    kHeartbeatIntervalMs.key,
                    "log_level",
                    tls::kClientTlsKeys.ca,
                    tls::kClientTlsKeys.cert,
                    tls::kClientTlsKeys.key});
  AgentConfig config;
  config.daemon = Address(reader, "daemon", /*port_zero_ok=*/false);
  config.node_name = reader.String("node_name");
  if (config.node_name && config.node_name->empty()) reader.Error(reader.LineOf("node_name"), "node_name is empty");
  config.advertise_address = reader.String("advertise_address");
  config.gpu_source = reader.OneOf("gpu_source", {"auto", "nvml", "file", "fake"});
  config.topology_file = reader.Path("topology_file");
  if (config.topology_file) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(*config.topology_file, ec)) {
      reader.Error(reader.LineOf("topology_file"),
                   absl::StrCat("topology_file ", *config.topology_file, " is not a readable file"));
    }
  }
  config.nvml_library = reader.String("nvml_library");
  config.fake_gpus = Int(reader, kFakeGpus);
  config.gpu_model = reader.String("gpu_model");
  config.gpu_memory_mb = Int(reader, kGpuMemoryMb);
  config.cpus = Int(reader, kCpus);
  config.memory_mb = Int(reader, kMemoryMb);
  config.log_dir = reader.Path("log_dir");
  config.cpu_bind = reader.OneOf("cpu_bind", {"none", "numa"});
  config.gpu_share_mode =
      reader.OneOf("gpu_share_mode", {std::begin(kGpuShareModeWords), std::end(kGpuShareModeWords)});
  if (auto modes = reader.StringTable("gpu_share_modes")) {
    if (auto parsed = ParseGpuShareModes(*modes); !parsed.ok()) {
      reader.Error(reader.LineOf("gpu_share_modes"), std::string(parsed.status().message()));
    }
    config.gpu_share_modes = *std::move(modes);
  }
  if (std::optional<std::string> program = reader.String("mps_control_program")) {
    // A bare name is looked up in PATH; anything with a '/' is a path.
    config.mps_control_program =
        program->find('/') == std::string::npos ? *program : reader.Path("mps_control_program").value_or(*program);
  }
  config.mps_dir = reader.Path("mps_dir");
  config.nccl_topo_file = reader.Bool("nccl_topo_file");
  if (std::optional<std::string> probe = reader.String("nccl_probe")) {
    config.nccl_probe = *probe == "auto" || probe->empty() ? *probe : reader.Path("nccl_probe").value_or(*probe);
  }
  config.calibrate_on_start = reader.Bool("calibrate_on_start");
  config.shim = reader.Path("shim");
  config.keep_jobs_on_stop = reader.Bool("keep_jobs_on_stop");
  config.container_runtime = reader.String("container_runtime");
  config.container_oci_runtime = reader.String("container_oci_runtime");
  config.container_registries = reader.StringList("container_registries");
  config.container_mounts = reader.StringList("container_mounts");
  for (const std::string& mount : config.container_mounts.value_or(std::vector<std::string>{})) {
    if (mount.empty() || mount.front() != '/') {
      reader.Error(reader.LineOf("container_mounts"),
                   absl::StrCat("container_mounts: \"", mount, "\" is not an absolute path"));
    }
  }
  config.container_run_args = reader.StringList("container_run_args");
  config.container_pull_timeout_s = Int(reader, kContainerPullTimeoutS);
  config.metrics_listen = Address(reader, "metrics_listen", /*port_zero_ok=*/true);
  config.heartbeat_interval_ms = Int(reader, kHeartbeatIntervalMs);
  config.log_level = reader.OneOf("log_level", config::LogLevelNames());
  if (auto labels = reader.StringTable("labels")) {
    CheckLabels(reader, *labels);
    config.labels = *std::move(labels);
  }
  const tls::TlsFiles tls = tls::ReadTlsKeys(reader, tls::kClientTlsKeys);
  auto set = [](const std::string& file) { return file.empty() ? std::nullopt : std::optional<std::string>(file); };
  config.tls_ca = set(tls.ca);
  config.tls_cert = set(tls.cert);
  config.tls_key = set(tls.key);
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
  std::vector<std::string> set;
  auto add = [&set](absl::string_view key, const auto& value) {
    if (value) set.push_back(absl::StrCat(key, "=", *value));
  };
  add("daemon", config.daemon);
  add("node_name", config.node_name);
  add("advertise_address", config.advertise_address);
  add("gpu_source", config.gpu_source);
  add("topology_file", config.topology_file);
  add("nvml_library", config.nvml_library);
  add(kFakeGpus.key, config.fake_gpus);
  add("gpu_model", config.gpu_model);
  add(kGpuMemoryMb.key, config.gpu_memory_mb);
  add(kCpus.key, config.cpus);
  add(kMemoryMb.key, config.memory_mb);
  add("log_dir", config.log_dir);
  add("cpu_bind", config.cpu_bind);
  add("gpu_share_mode", config.gpu_share_mode);
  for (const auto& [gpus, mode] : config.gpu_share_modes)
    set.push_back(absl::StrCat("gpu_share_modes.", gpus, "=", mode));
  add("mps_control_program", config.mps_control_program);
  add("mps_dir", config.mps_dir);
  if (config.nccl_topo_file) set.push_back(absl::StrCat("nccl_topo_file=", *config.nccl_topo_file ? "true" : "false"));
  if (config.nccl_probe) set.push_back(absl::StrCat("nccl_probe=", *config.nccl_probe));
  if (config.calibrate_on_start) {
    set.push_back(absl::StrCat("calibrate_on_start=", *config.calibrate_on_start ? "true" : "false"));
  }
  add("shim", config.shim);
  if (config.keep_jobs_on_stop) {
    set.push_back(absl::StrCat("keep_jobs_on_stop=", *config.keep_jobs_on_stop ? "true" : "false"));
  }
  add("container_runtime", config.container_runtime);
  add("container_oci_runtime", config.container_oci_runtime);
  auto add_list = [&set](absl::string_view key, const std::optional<std::vector<std::string>>& list) {
    if (list) set.push_back(absl::StrCat(key, "=[", absl::StrJoin(*list, ","), "]"));
  };
  add_list("container_registries", config.container_registries);
  add_list("container_mounts", config.container_mounts);
  add_list("container_run_args", config.container_run_args);
  add(kContainerPullTimeoutS.key, config.container_pull_timeout_s);
  add("metrics_listen", config.metrics_listen);
  add(kHeartbeatIntervalMs.key, config.heartbeat_interval_ms);
  add("log_level", config.log_level);
  add("tls_ca", config.tls_ca);
  add("tls_cert", config.tls_cert);
  add("tls_key", config.tls_key);
  for (const auto& [key, value] : config.labels) set.push_back(absl::StrCat("labels.", key, "=", value));
  if (set.empty()) return "valid, sets nothing (every setting at its default)";
  return absl::StrCat("valid, ", set.size(), set.size() == 1 ? " setting: " : " settings: ", absl::StrJoin(set, " "));
}

}  // namespace gpusched::agent
