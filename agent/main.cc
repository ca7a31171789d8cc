// gpusched-agent: the node agent. Thin wiring: flags -> AgentOptions, then run
// until SIGINT/SIGTERM.
#include <pthread.h>
#include <signal.h>
#include <time.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "agent/agent.h"
#include "agent/config/agent_config.h"
#include "agent/config/gpu_share_modes.h"
#include "agent/discover_report.h"
#include "agent/host_info.h"
#include "agent/node_info.h"
#include "agent/topology_discovery.h"
#include "common/defaults.h"
#include "common/io/logging/grpc_logging.h"
#include "common/io/logging/logging.h"
#include "common/io/systemd/systemd_notifier.h"
#include "common/io/tls/tls_files.h"
#include "common/share_mode_name.h"

namespace {

constexpr int kUsageError = 2;
using gpusched::agent::kCpus, gpusched::agent::kFakeGpus, gpusched::agent::kGpuMemoryMb,
    gpusched::agent::kHeartbeatIntervalMs, gpusched::agent::kMemoryMb, gpusched::agent::kContainerPullTimeoutS;

int UsageError(const std::string& message) {
  std::cerr << "gpusched-agent: " << message << " (see --help)\n";
  return kUsageError;
}

int Discover(gpusched::agent::AgentOptions options, gpusched::agent::DiscoverFormat format) {
  if (options.node_name.empty()) options.node_name = gpusched::agent::HostName();
  auto discovered = gpusched::agent::DiscoverTopology(options);
  if (!discovered.ok()) {
    std::cerr << "gpusched-agent: " << discovered.status().message() << "\n";
    return 1;
  }
  if (!discovered->fallback_reason.empty()) {
    std::cerr << "gpusched-agent: no GPUs: " << discovered->fallback_reason << "\n";
  }
  std::cout << gpusched::agent::DiscoverReport(gpusched::agent::DescribeNode(options, *discovered), format);
  return 0;
}

// `gpusched-agent check-config FILE`: 0 and one line when the file is good,
// else 1 and the message naming the line.
int CheckConfig(const std::string& path) {
  auto config = gpusched::agent::ReadAgentConfig(path);
  if (!config.ok()) {
    std::cerr << "gpusched-agent: " << config.status().message() << "\n";
    return 1;
  }
  std::cout << path << ": " << gpusched::agent::DescribeAgentConfig(*config) << "\n";
  return 0;
}

// Waits for SIGINT/SIGTERM (blocked in every thread). Meanwhile, under
// systemd, keeps `systemctl status` saying whether the node is registered and
// pings the watchdog; asking the agent first means that a deadlock on its
// state lock stops the pings and gets the agent restarted.
int WaitForStopSignal(const sigset_t& signals, const gpusched::agent::Agent& agent, const std::string& daemon,
                      gpusched::service::SystemdNotifier& systemd) {
  absl::Duration wake = absl::Seconds(1);
  if (systemd.watchdog_interval()) wake = std::min(wake, *systemd.watchdog_interval());
  const timespec timeout = absl::ToTimespec(wake);
  std::optional<bool> was_connected;
  while (true) {
    const int sig = sigtimedwait(&signals, nullptr, &timeout);
    if (sig > 0) return sig;
    if (!systemd.enabled()) continue;
    const bool connected = agent.connected();
    if (connected != was_connected) {
      systemd.Status(absl::StrCat(connected ? "registered with " : "connecting to ", daemon));
      was_connected = connected;
    }
    systemd.PingWatchdogIfDue();
  }
}

}  // namespace

int main(int argc, char** argv) {
  gpusched::agent::AgentOptions options;
  const char* env_address = std::getenv(gpusched::kDaemonAddressEnv);
  options.daemon_address = env_address && *env_address ? env_address : gpusched::kDefaultDaemonAddress;
  options.log_dir = gpusched::agent::kDefaultAgentLogDir;
  std::vector<std::string> labels;
  int64_t heartbeat_ms = absl::ToInt64Milliseconds(options.heartbeat_interval);
  std::string log_level = "info";

  CLI::App app{"gpusched node agent: registers this node with gpuschedd and runs the jobs it is sent"};
  app.set_version_flag("--version", gpusched::kVersion);
  app.add_option("--daemon", options.daemon_address,
                 absl::StrCat("gpuschedd address, host:port (default: $", gpusched::kDaemonAddressEnv, ", else ",
                              gpusched::kDefaultDaemonAddress, ")"));
  gpusched::tls::TlsFiles tls_files;
  app.add_option("--tls-ca", tls_files.ca,
                 "PEM CA certificates that signed the daemon's certificate: connect over TLS (default: plaintext)");
  app.add_option("--tls-cert", tls_files.cert,
                 "PEM certificate (then its chain) to prove this node to a daemon that requires client "
                 "certificates; with --tls-key and --tls-ca");
  app.add_option("--tls-key", tls_files.key, "PEM private key of --tls-cert, unencrypted");
  app.add_option("--node-name", options.node_name, "name of this node (default: the host name)");
  app.add_option("--advertise-address", options.advertise_address,
                 "address other nodes reach this one at; MASTER_ADDR when this node holds rank 0 (default: this host's "
                 "address on the route to the daemon)")
      ->capture_default_str();
  std::string gpu_source = "auto";
  app.add_option("--gpu-source", gpu_source,
                 "where the GPUs come from: auto (--topology-file, else --fake-gpus, else NVML, else none), "
                 "nvml, file or fake")
      ->check(CLI::IsMember({"auto", "nvml", "file", "fake"}))
      ->capture_default_str();
  app.add_option("--topology-file", options.topology_file,
                 "a saved `nvidia-smi topo -m` output: GPUs wired like that machine, without its GPUs")
      ->check(CLI::ExistingFile);
  app.add_option("--nvml-library", options.nvml_library,
                 "NVML library to load (default libnvidia-ml.so.1, found the usual way)");
  app.add_option("--fake-gpus", options.fake_gpus, "pretend this node has N GPUs (no topology: every pair SYS)")
      ->check(CLI::Range(kFakeGpus.min, kFakeGpus.max))
      ->capture_default_str();
  app.add_option("--gpu-model", options.gpu_model, "model name of file or fake GPUs")->capture_default_str();
  app.add_option("--gpu-memory-mb", options.gpu_memory_mb, "memory of each file or fake GPU in MB")
      ->check(CLI::Range(kGpuMemoryMb.min, kGpuMemoryMb.max))
      ->capture_default_str();
  app.add_option("--cpus", options.cpus, "CPUs to offer (default: detect)")->check(CLI::Range(kCpus.min, kCpus.max));
  app.add_option("--memory-mb", options.memory_mb, "memory to offer in MB (default: detect)")
      ->check(CLI::Range(kMemoryMb.min, kMemoryMb.max));
  app.add_option("--log-dir", options.log_dir, "job logs go to <dir>/job-<id>/rank-<R>.log")->capture_default_str();
  std::string cpu_bind = "numa";
  app.add_option("--cpu-bind", cpu_bind,
                 "numa: run each job process on the CPUs of its GPU's NUMA node (within the agent's own CPUs); "
                 "none: leave processes where the agent runs")
      ->check(CLI::IsMember({"none", "numa"}))
      ->capture_default_str();
  std::string gpu_share_mode = "exclusive";
  app.add_option("--gpu-share-mode", gpu_share_mode,
                 "how this node's GPUs are shared: exclusive (one job per GPU), timeslice (jobs asking for a "
                 "share of a GPU take turns on it; their shares and memory limits are accounted, not enforced) "
                 "or mps (jobs run as clients of the agent's MPS control daemon, held to their share and memory "
                 "limit); GPUs in MIG mode are shared as their MIG instances (mig) whatever this says")
      ->check(CLI::IsMember({"exclusive", "timeslice", "mps", "mig"}))
      ->capture_default_str();
  std::vector<std::string> gpu_share_modes;
  app.add_option("--gpu-share-modes", gpu_share_modes,
                 "GPUS=MODE, per GPU over --gpu-share-mode (repeatable): e.g. 0-3=mps 4-7=timeslice");
  app.add_option("--mps-control-program", options.mps_control_program,
                 "the MPS control daemon the agent runs for its MPS GPUs (a name in PATH or a path)")
      ->capture_default_str();
  app.add_option("--mps-dir", options.mps_dir,
                 "where the MPS control daemon's pipe/ and log/ directories go (default <log-dir>/mps)");
  app.add_flag("--nccl-topo-file", options.nccl_topo_file,
               "write this node's topology to <log-dir>/nccl-topo.xml and set NCCL_TOPO_FILE for jobs that set "
               "none (meant for NVML-discovered nodes)");
  options.nccl_probe = "auto";
  app.add_option("--nccl-probe", options.nccl_probe,
                 "the NCCL probe for link calibration and job preflights: auto (gpusched-nccl-probe next to this "
                 "program, on NVML nodes), a path, or \"\" for none")
      ->capture_default_str();
  app.add_option("--calibrate-on-start", options.calibrate_on_start,
                 "measure the GPU links with the NCCL probe as the agent starts (true/false)")
      ->capture_default_str();
  app.add_option("--shim", options.shim_program,
                 "the gpusched-shim that holds each job's processes (default: the one next to this program)");
  options.keep_jobs_on_stop = true;
  app.add_option("--keep-jobs-on-stop", options.keep_jobs_on_stop,
                 "on SIGTERM, leave running jobs to their shims for the next agent to adopt (a restart or an "
                 "upgrade); false: kill them (true/false)")
      ->capture_default_str();
  app.add_option("--container-runtime", options.containers.runtime,
                 "run jobs that name an image with this container runtime (podman, or a path); empty: none");
  app.add_option("--container-oci-runtime", options.containers.oci_runtime,
                 "podman --runtime for job containers (runc where cgroups are hybrid v1/v2, which crun refuses)");
  app.add_option("--container-registry", options.containers.registries,
                 "a registry job images may come from (repeatable; none given: any)");
  app.add_option("--container-mount", options.containers.mount_sources,
                 "a host path jobs may mount into their containers, with what lies below it (repeatable)");
  app.add_option("--container-run-arg", options.containers.run_args,
                 "one more podman run argument for every job container, as --container-run-arg=--ulimit "
                 "(repeatable, in order)");
  int64_t container_pull_timeout_s = 900;
  app.add_option("--container-pull-timeout-s", container_pull_timeout_s, "how long pulling a job's image may take")
      ->check(CLI::Range(kContainerPullTimeoutS.min, kContainerPullTimeoutS.max))
      ->capture_default_str();
  app.add_option("--label", labels, "node label key=value (repeatable)");
  app.add_option("--metrics-listen", options.metrics_listen,
                 "serve Prometheus metrics at http://ADDR:PORT/metrics (e.g. 0.0.0.0:6872): running jobs and, with "
                 "NVML, per-GPU utilization, memory, temperature and power in DCGM exporter names; off when not given");
  app.add_option("--heartbeat-interval-ms", heartbeat_ms, "heartbeat interval until the daemon sets one")
      ->check(CLI::Range(kHeartbeatIntervalMs.min, kHeartbeatIntervalMs.max))
      ->capture_default_str();
  bool discover = false;
  std::string discover_format = "text";
  app.add_flag("--discover", discover, "print this node as it would register (GPUs, NICs, NUMA, link matrix) and exit");
  app.add_option("--discover-format", discover_format, "text, json (the NodeInfo) or nccl-xml (NCCL_TOPO_FILE)")
      ->check(CLI::IsMember({"text", "json", "nccl-xml"}))
      ->capture_default_str();
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}))
      ->capture_default_str();

  std::string config_path;
  app.add_option("--config", config_path,
                 "settings file; every key is the flag of the same name, and a flag given here wins "
                 "(default: /etc/gpusched/agent.toml when it exists)")
      ->check(CLI::ExistingFile);
  CLI::App* check_config =
      app.add_subcommand("check-config", "check an agent.toml: exit 0 with a summary, or 1 naming the bad line");
  std::string check_config_path;
  check_config->add_option("FILE", check_config_path, "the file to check")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help, --version
  } catch (const CLI::ParseError& e) {
    return UsageError(e.what());
  }
  if (*check_config) return CheckConfig(check_config_path);

  // agent.toml under the command line: a key counts where its flag was not given.
  std::string config_used;
  auto file = gpusched::agent::LoadAgentConfig(config_path, &config_used);
  if (!file.ok()) {
    std::cerr << "gpusched-agent: " << file.status().message() << "\n";
    return 1;
  }
  auto unless_flag = [&app](const char* flag, const auto& value, auto& target) {
    if (value.has_value() && app.get_option(flag)->count() == 0) target = *value;
  };
  // The daemon address: --daemon, then $GPUSCHED_ADDR, then the file (as for the CLI).
  if (env_address == nullptr || *env_address == '\0') unless_flag("--daemon", file->daemon, options.daemon_address);
  unless_flag("--node-name", file->node_name, options.node_name);
  unless_flag("--advertise-address", file->advertise_address, options.advertise_address);
  unless_flag("--gpu-source", file->gpu_source, gpu_source);
  unless_flag("--topology-file", file->topology_file, options.topology_file);
  unless_flag("--nvml-library", file->nvml_library, options.nvml_library);
  unless_flag("--fake-gpus", file->fake_gpus, options.fake_gpus);
  unless_flag("--gpu-model", file->gpu_model, options.gpu_model);
  unless_flag("--gpu-memory-mb", file->gpu_memory_mb, options.gpu_memory_mb);
  unless_flag("--cpus", file->cpus, options.cpus);
  unless_flag("--memory-mb", file->memory_mb, options.memory_mb);
  unless_flag("--log-dir", file->log_dir, options.log_dir);
  unless_flag("--cpu-bind", file->cpu_bind, cpu_bind);
  unless_flag("--gpu-share-mode", file->gpu_share_mode, gpu_share_mode);
  unless_flag("--mps-control-program", file->mps_control_program, options.mps_control_program);
  unless_flag("--mps-dir", file->mps_dir, options.mps_dir);
  unless_flag("--nccl-topo-file", file->nccl_topo_file, options.nccl_topo_file);
  unless_flag("--nccl-probe", file->nccl_probe, options.nccl_probe);
  unless_flag("--calibrate-on-start", file->calibrate_on_start, options.calibrate_on_start);
  unless_flag("--shim", file->shim, options.shim_program);
  unless_flag("--keep-jobs-on-stop", file->keep_jobs_on_stop, options.keep_jobs_on_stop);
  unless_flag("--metrics-listen", file->metrics_listen, options.metrics_listen);
  unless_flag("--container-runtime", file->container_runtime, options.containers.runtime);
  unless_flag("--container-oci-runtime", file->container_oci_runtime, options.containers.oci_runtime);
  unless_flag("--container-registry", file->container_registries, options.containers.registries);
  unless_flag("--container-mount", file->container_mounts, options.containers.mount_sources);
  unless_flag("--container-run-arg", file->container_run_args, options.containers.run_args);
  unless_flag("--container-pull-timeout-s", file->container_pull_timeout_s, container_pull_timeout_s);
  unless_flag("--heartbeat-interval-ms", file->heartbeat_interval_ms, heartbeat_ms);
  unless_flag("--log-level", file->log_level, log_level);
  unless_flag("--tls-ca", file->tls_ca, tls_files.ca);
  unless_flag("--tls-cert", file->tls_cert, tls_files.cert);
  unless_flag("--tls-key", file->tls_key, tls_files.key);
  // Labels merge: --label rack=r02 replaces the file's rack and keeps the rest.
  for (const auto& [key, value] : file->labels) options.labels[key] = value;
  for (const std::string& label : labels) {
    auto eq = label.find('=');
    if (eq == std::string::npos || eq == 0) {
      return UsageError(absl::StrCat("--label \"", label, "\": expected key=value"));
    }
    options.labels[label.substr(0, eq)] = label.substr(eq + 1);
  }
  options.heartbeat_interval = absl::Milliseconds(heartbeat_ms);
  options.containers.pull_timeout = absl::Seconds(container_pull_timeout_s);
  options.cpu_bind = cpu_bind == "none" ? gpusched::agent::CpuBindMode::kNone : gpusched::agent::CpuBindMode::kNuma;
  gpusched::ParseShareModeName(gpu_share_mode, &options.gpu_share_mode);
  // The flags replace the file's table as a whole: per GPU, one source.
  std::vector<std::pair<std::string, std::string>> per_gpu = file->gpu_share_modes;
  if (!gpu_share_modes.empty()) per_gpu.clear();
  for (const std::string& flag : gpu_share_modes) {
    auto entry = gpusched::agent::SplitGpuShareModesFlag(flag);
    if (!entry.ok()) return UsageError(std::string(entry.status().message()));
    per_gpu.push_back(*std::move(entry));
  }
  auto modes = gpusched::agent::ParseGpuShareModes(per_gpu);
  if (!modes.ok()) return UsageError(std::string(modes.status().message()));
  for (const auto& [index, word] : *modes) gpusched::ParseShareModeName(word, &options.gpu_share_modes[index]);
  options.gpu_source = gpu_source == "nvml"   ? gpusched::agent::GpuSource::kNvml
                       : gpu_source == "file" ? gpusched::agent::GpuSource::kFile
                       : gpu_source == "fake" ? gpusched::agent::GpuSource::kFake
                                              : gpusched::agent::GpuSource::kAuto;
  gpusched::SetLogLevel(log_level);
  if (!config_used.empty()) gpusched::GetLogger("agent")->info("settings from {}", config_used);
  if (discover) {
    return Discover(std::move(options), discover_format == "json"       ? gpusched::agent::DiscoverFormat::kJson
                                        : discover_format == "nccl-xml" ? gpusched::agent::DiscoverFormat::kNcclXml
                                                                        : gpusched::agent::DiscoverFormat::kText);
  }
  // Checked here, before anything starts: a wrong file must not look like a
  // daemon that refuses us.
  auto tls = gpusched::tls::LoadTls(tls_files, gpusched::tls::kClientTlsKeys);
  if (!tls.ok()) {
    std::cerr << "gpusched-agent: " << tls.status().message() << "\n";
    return 1;
  }
  options.tls = *std::move(tls);
  gpusched::RouteGrpcLogsToSpdlog();

  // Blocked before any thread exists, so every thread inherits the mask and
  // the signals wait for sigwait below (job processes get a clean mask).
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  auto log = gpusched::GetLogger("agent");
  gpusched::agent::Agent agent(options);
  if (absl::Status s = agent.Start(); !s.ok()) {
    std::cerr << "gpusched-agent: " << s.message() << "\n";
    return 1;
  }
  // Ready once the agent runs its loop, not once it is registered: an agent
  // must start (and keep its jobs) while the daemon is away.
  gpusched::service::SystemdNotifier systemd;
  systemd.Ready(absl::StrCat("connecting to ", options.daemon_address));
  const int sig = WaitForStopSignal(stop_signals, agent, options.daemon_address, systemd);
  log->info("received {}, stopping ({})", sig == SIGINT ? "SIGINT" : "SIGTERM",
            options.keep_jobs_on_stop ? "running jobs keep running under their shims, for the next agent to adopt"
                                      : "running jobs are killed");
  systemd.Stopping();
  agent.Stop();
  return 0;
}
