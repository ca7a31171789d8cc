#include "agent/config/agent_settings.h"

#include <iterator>

#include "absl/strings/str_cat.h"
#include "agent/config/gpu_share_modes.h"
#include "common/config/log_levels.h"

namespace gpusched::agent {

const config::SettingsTable<AgentSettings>& AgentSettingsTable() {
  using config::BoolSetting, config::ChoiceSetting, config::IntSetting, config::ListSetting, config::TextSetting;
  using config::SettingType;
  using S = AgentSettings;
  static const std::string daemon_help =
      absl::StrCat("gpuschedd address, host:port, or its replicas comma-separated (default: $", kDaemonAddressEnv,
                   ", else ", kDefaultDaemonAddress, ")");
  static const config::SettingsTable<AgentSettings> table = {
      {TextSetting("daemon", SettingType::kHostPortList, daemon_help.c_str()), &S::daemon},
      {TextSetting("node_name", SettingType::kNonEmptyString, "name of this node (default: the host name)"),
       &S::node_name},
      {TextSetting("advertise_address", SettingType::kString,
                   "address other nodes reach this one at; MASTER_ADDR when this node holds rank 0 (default: this "
                   "host's address on the route to the daemon)"),
       &S::advertise_address},
      {ChoiceSetting("gpu_source", {"auto", "nvml", "file", "fake"},
                     "where the GPUs come from: auto (--topology-file, else --fake-gpus, else NVML, else none), "
                     "nvml, file or fake"),
       &S::gpu_source},
      {TextSetting("topology_file", SettingType::kExistingFile,
                   "a saved `nvidia-smi topo -m` output: GPUs wired like that machine, without its GPUs"),
       &S::topology_file},
      {TextSetting("nvml_library", SettingType::kString,
                   "NVML library to load (default libnvidia-ml.so.1, found the usual way)"),
       &S::nvml_library},
      {IntSetting("fake_gpus", 0, 1024, "pretend this node has N GPUs (no topology: every pair SYS)"), &S::fake_gpus},
      {TextSetting("gpu_model", SettingType::kString, "model name of file or fake GPUs"), &S::gpu_model},
      {IntSetting("gpu_memory_mb", 1, kMaxMegabytes, "memory of each file or fake GPU in MB"), &S::gpu_memory_mb},
      {IntSetting("cpus", 0, 1 << 20, "CPUs to offer (0: detect)"), &S::cpus},
      {IntSetting("memory_mb", 0, kMaxMegabytes, "memory to offer in MB (0: detect)"), &S::memory_mb},
      {TextSetting("log_dir", SettingType::kPath, "job logs go to <dir>/job-<id>/rank-<R>.log"), &S::log_dir},
      {ChoiceSetting("cpu_bind", {"none", "numa"},
                     "numa: run each job process on the CPUs of its GPU's NUMA node (within the agent's own CPUs); "
                     "none: leave processes where the agent runs"),
       &S::cpu_bind},
      {ChoiceSetting("gpu_share_mode", {std::begin(kGpuShareModeWords), std::end(kGpuShareModeWords)},
                     "how this node's GPUs are shared: exclusive (one job per GPU), timeslice (jobs asking for a "
                     "share of a GPU take turns on it; their shares and memory limits are accounted, not enforced) "
                     "or mps (jobs run as clients of the agent's MPS control daemon, held to their share and memory "
                     "limit); GPUs in MIG mode are shared as their MIG instances (mig) whatever this says"),
       &S::gpu_share_mode},
      {TextSetting("mps_control_program", SettingType::kProgram,
                   "the MPS control daemon the agent runs for its MPS GPUs (a name in PATH or a path)"),
       &S::mps_control_program},
      {TextSetting("mps_dir", SettingType::kPath,
                   "where the MPS control daemon's pipe/ and log/ directories go (default <log-dir>/mps)"),
       &S::mps_dir},
      {BoolSetting("nccl_topo_file",
                   "write this node's topology to <log-dir>/nccl-topo.xml and set NCCL_TOPO_FILE for jobs that set "
                   "none (meant for NVML-discovered nodes)"),
       &S::nccl_topo_file},
      {TextSetting("nccl_probe", SettingType::kProgram,
                   "the NCCL probe for link calibration and job preflights: auto (gpusched-nccl-probe next to this "
                   "program, on NVML nodes), a path, or \"\" for none"),
       &S::nccl_probe},
      {BoolSetting("calibrate_on_start", "measure the GPU links with the NCCL probe as the agent starts (true/false)"),
       &S::calibrate_on_start},
      {TextSetting("shim", SettingType::kPath,
                   "the gpusched-shim that holds each job's processes (default: the one next to this program)"),
       &S::shim},
      {BoolSetting("keep_jobs_on_stop",
                   "on SIGTERM, leave running jobs to their shims for the next agent to adopt (a restart or an "
                   "upgrade); false: kill them (true/false)"),
       &S::keep_jobs_on_stop},
      {TextSetting("container_runtime", SettingType::kString,
                   "run jobs that name an image with this container runtime (podman, or a path); empty: none"),
       &S::container_runtime},
      {TextSetting("container_oci_runtime", SettingType::kString,
                   "podman --runtime for job containers (runc where cgroups are hybrid v1/v2, which crun refuses)"),
       &S::container_oci_runtime},
      {ListSetting("container_registries", "--container-registry",
                   "a registry job images may come from (repeatable; none given: any)"),
       &S::container_registries},
      {ListSetting("container_mounts", "--container-mount",
                   "a host path jobs may mount into their containers, with what lies below it (repeatable)"),
       &S::container_mounts},
      {ListSetting("container_run_args", "--container-run-arg",
                   "one more podman run argument for every job container, as --container-run-arg=--ulimit "
                   "(repeatable, in order)"),
       &S::container_run_args},
      {IntSetting("container_pull_timeout_s", 1, 24 * 3600, "how long pulling a job's image may take, in seconds"),
       &S::container_pull_timeout_s},
      {TextSetting("metrics_listen", SettingType::kListenAddress,
                   "serve Prometheus metrics at http://ADDR:PORT/metrics (e.g. 0.0.0.0:6872): running jobs and, "
                   "with NVML, per-GPU utilization, memory, temperature and power in DCGM exporter names; off when "
                   "not given"),
       &S::metrics_listen},
      {IntSetting("heartbeat_interval_ms", 1, 3'600'000, "heartbeat interval until the daemon sets one"),
       &S::heartbeat_interval_ms},
      {ChoiceSetting("log_level", config::LogLevelNames(), "trace, debug, info, warn, error, critical or off"),
       &S::log_level},
      {TextSetting("tls_ca", SettingType::kPath,
                   "PEM CA certificates that signed the daemon's certificate: connect over TLS (default: plaintext)"),
       &S::tls_ca},
      {TextSetting("tls_cert", SettingType::kPath,
                   "PEM certificate (then its chain) to prove this node to a daemon that requires client "
                   "certificates; with --tls-key and --tls-ca"),
       &S::tls_cert},
      {TextSetting("tls_key", SettingType::kPath, "PEM private key of --tls-cert, unencrypted"), &S::tls_key},
  };
  return table;
}

}  // namespace gpusched::agent
