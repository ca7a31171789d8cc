#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/config/settings_table.h"
#include "common/defaults.h"

namespace gpusched::agent {

inline constexpr char kDefaultAgentLogDir[] = "/var/lib/gpusched/logs";
// A node with more than an exabyte of memory can pass 0 and be detected.
inline constexpr int64_t kMaxMegabytes = int64_t{1} << 40;

// The settings of gpusched-agent, at their defaults. Each is a key of
// agent.toml and a flag (AgentSettingsTable); labels and gpu_share_modes
// are tables in the file and repeated key=value flags, read on their own
// (agent_config.h).
struct AgentSettings {
  std::string daemon = kDefaultDaemonAddress;  // $GPUSCHED_ADDR between the flag and the file
  std::string node_name;                       // "": the host name
  std::string advertise_address;               // "": this host's address on the route to the daemon
  std::string gpu_source = "auto";
  std::string topology_file;
  std::string nvml_library;
  int64_t fake_gpus = 0;
  std::string gpu_model = "NVIDIA H100 80GB HBM3";
  int64_t gpu_memory_mb = 81559;
  int64_t cpus = 0;       // 0: detect
  int64_t memory_mb = 0;  // 0: detect
  std::string log_dir = kDefaultAgentLogDir;
  std::string cpu_bind = "numa";
  std::string gpu_share_mode = "exclusive";
  std::string mps_control_program = "nvidia-cuda-mps-control";
  std::string mps_dir;  // "": <log_dir>/mps
  bool nccl_topo_file = false;
  std::string nccl_probe = "auto";
  bool calibrate_on_start = true;
  std::string shim;  // "": the one next to the agent
  bool keep_jobs_on_stop = true;
  std::string container_runtime;
  std::string container_oci_runtime;
  std::vector<std::string> container_registries;
  std::vector<std::string> container_mounts;
  std::vector<std::string> container_run_args;
  int64_t container_pull_timeout_s = 900;
  std::string metrics_listen;
  int64_t heartbeat_interval_ms = 5000;
  std::string log_level = "info";
  std::string tls_ca;
  std::string tls_cert;
  std::string tls_key;
};

// One row per setting (key, flag, help, type and range, member): it makes
// the flags, reads agent.toml, decides which wins and describes the file for
// check-config; packaging/config/agent.toml documents each key (a test holds
// it to that).
const config::SettingsTable<AgentSettings>& AgentSettingsTable();

}  // namespace gpusched::agent
