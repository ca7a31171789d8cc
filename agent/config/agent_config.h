#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gpusched::agent {

// Where gpusched-agent reads its settings when --config does not say.
inline constexpr char kDefaultAgentConfigPath[] = "/etc/gpusched/agent.toml";

// An integer setting's bounds, shared by the flag and the agent.toml key.
struct AgentIntSetting {
  const char* key;
  int64_t min;
  int64_t max;
};
// A node with more than an exabyte of memory can pass 0 and be detected.
inline constexpr int64_t kMaxMegabytes = int64_t{1} << 40;
inline constexpr AgentIntSetting kFakeGpus{"fake_gpus", 0, 1024};
inline constexpr AgentIntSetting kGpuMemoryMb{"gpu_memory_mb", 1, kMaxMegabytes};
inline constexpr AgentIntSetting kCpus{"cpus", 0, 1 << 20};
inline constexpr AgentIntSetting kMemoryMb{"memory_mb", 0, kMaxMegabytes};
inline constexpr AgentIntSetting kHeartbeatIntervalMs{"heartbeat_interval_ms", 1, 3'600'000};
inline constexpr AgentIntSetting kContainerPullTimeoutS{"container_pull_timeout_s", 1, 24 * 3600};
inline constexpr char kDefaultAgentLogDir[] = "/var/lib/gpusched/logs";

// What agent.toml sets. Every key is the gpusched-agent flag of the same name
// (log_dir is --log-dir); labels is a table (`[labels]` or `labels = {rack =
// "r01"}`) where the flag is repeated --label rack=r01. A key the file leaves
// out stays std::nullopt; a flag given on the command line wins over the file
// (for labels: key by key). packaging/config/agent.toml documents each key.
struct AgentConfig {
  std::optional<std::string> daemon;
  std::optional<std::string> node_name;
  std::optional<std::string> advertise_address;
  std::optional<std::string> gpu_source;     // auto, nvml, file or fake
  std::optional<std::string> topology_file;  // resolved against the file's directory
  std::optional<std::string> nvml_library;
  std::optional<int64_t> fake_gpus;
  std::optional<std::string> gpu_model;
  std::optional<int64_t> gpu_memory_mb;
  std::optional<int64_t> cpus;
  std::optional<int64_t> memory_mb;
  std::optional<std::string> log_dir;         // resolved against the file's directory
  std::optional<std::string> cpu_bind;        // none or numa
  std::optional<std::string> gpu_share_mode;  // exclusive, timeslice or mps
  // [gpu_share_modes]: GPU indices -> mode, over gpu_share_mode (in file
  // order; checked by ParseGpuShareModes). The flag is repeated
  // --gpu-share-modes 0-3=mps.
  std::vector<std::pair<std::string, std::string>> gpu_share_modes;
  std::optional<std::string> mps_control_program;  // nvidia-cuda-mps-control, or a path
  std::optional<std::string> mps_dir;              // resolved against the file's directory
  std::optional<bool> nccl_topo_file;
  std::optional<std::string> nccl_probe;  // "auto", "" or a path (resolved against the file's directory)
  std::optional<bool> calibrate_on_start;
  std::optional<std::string> shim;  // a path (resolved against the file's directory)
  std::optional<bool> keep_jobs_on_stop;
  // Jobs in container images: the runtime ("podman" or a path; "" = none),
  // Podman's --runtime, the registries and host paths jobs may use, more
  // `podman run` arguments, and how long a pull may take. The lists replace
  // the flags' as a whole.
  std::optional<std::string> container_runtime;
  std::optional<std::string> container_oci_runtime;
  std::optional<std::vector<std::string>> container_registries;
  std::optional<std::vector<std::string>> container_mounts;
  std::optional<std::vector<std::string>> container_run_args;
  std::optional<int64_t> container_pull_timeout_s;
  std::optional<std::string> metrics_listen;
  std::optional<int64_t> heartbeat_interval_ms;
  std::optional<std::string> log_level;
  std::vector<std::pair<std::string, std::string>> labels;  // in file order
  // TLS to the daemon (tls::kClientTlsKeys), resolved against the file's
  // directory; the files read and checked, each problem at its key's line.
  std::optional<std::string> tls_ca;
  std::optional<std::string> tls_cert;
  std::optional<std::string> tls_key;
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
