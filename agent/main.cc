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
#include "common/flags/setting_flags.h"
#include "common/io/logging/logging.h"
#include "common/io/program_pages/startup_pages.h"
#include "common/io/systemd/systemd_notifier.h"
#include "common/io/tls/tls_files.h"
#include "common/share_mode_name.h"

namespace {

constexpr int kUsageError = 2;

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

// The settings (flags over the file) in the agent's own terms; labels,
// per-GPU modes and TLS are added by the caller.
gpusched::agent::AgentOptions AgentOptionsFrom(const gpusched::agent::AgentSettings& s) {
  using gpusched::agent::GpuSource;
  gpusched::agent::AgentOptions options;
  options.daemon_address = s.daemon;
  options.node_name = s.node_name;
  options.advertise_address = s.advertise_address;
  options.gpu_source = s.gpu_source == "nvml"   ? GpuSource::kNvml
                       : s.gpu_source == "file" ? GpuSource::kFile
                       : s.gpu_source == "fake" ? GpuSource::kFake
                                                : GpuSource::kAuto;
  options.topology_file = s.topology_file;
  options.nvml_library = s.nvml_library;
  options.fake_gpus = static_cast<int>(s.fake_gpus);
  options.gpu_model = s.gpu_model;
  options.gpu_memory_mb = s.gpu_memory_mb;
  options.cpus = s.cpus;
  options.memory_mb = s.memory_mb;
  options.log_dir = s.log_dir;
  options.cpu_bind = s.cpu_bind == "none" ? gpusched::agent::CpuBindMode::kNone : gpusched::agent::CpuBindMode::kNuma;
  gpusched::ParseShareModeName(s.gpu_share_mode, &options.gpu_share_mode);
  options.mps_control_program = s.mps_control_program;
  options.mps_dir = s.mps_dir;
  options.nccl_topo_file = s.nccl_topo_file;
  options.nccl_probe = s.nccl_probe;
  options.calibrate_on_start = s.calibrate_on_start;
  options.shim_program = s.shim;
  options.keep_jobs_on_stop = s.keep_jobs_on_stop;
  options.containers.runtime = s.container_runtime;
  options.containers.oci_runtime = s.container_oci_runtime;
  options.containers.registries = s.container_registries;
  options.containers.mount_sources = s.container_mounts;
  options.containers.run_args = s.container_run_args;
  options.containers.pull_timeout = absl::Seconds(s.container_pull_timeout_s);
  options.metrics_listen = s.metrics_listen;
  options.heartbeat_interval = absl::Milliseconds(s.heartbeat_interval_ms);
  return options;
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

// Waits for SIGINT/SIGTERM (blocked in every thread). Meanwhile it unmaps
// its start-up pages once registered and, under systemd, keeps `systemctl
// status` saying whether the node is registered and pings the watchdog;
// asking the agent first means that a deadlock on its state lock stops the
// pings and gets the agent restarted.
int WaitForStopSignal(const sigset_t& signals, const gpusched::agent::Agent& agent, const std::string& daemon,
                      gpusched::service::SystemdNotifier& systemd) {
  absl::Duration wake = absl::Seconds(1);
  if (systemd.watchdog_interval()) wake = std::min(wake, *systemd.watchdog_interval());
  const timespec timeout = absl::ToTimespec(wake);
  std::optional<bool> was_connected;
  bool pages_released = false;
  while (true) {
    const int sig = sigtimedwait(&signals, nullptr, &timeout);
    if (sig > 0) return sig;
    if (!pages_released && agent.connected()) {
      // Discovery, settings and the first connection are done: their pages
      // stop being resident (an idle agent 4.9 -> 3.1 MiB).
      gpusched::io::ReleaseStartupPages("agent");
      pages_released = true;
    }
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
  CLI::App app{"gpusched node agent: registers this node with gpuschedd and runs the jobs it is sent"};
  app.set_version_flag("--version", gpusched::kVersion);
  gpusched::agent::AgentSettings settings;
  // The daemon's address: --daemon, then $GPUSCHED_ADDR, then the file (as for the CLI).
  const char* env_address = std::getenv(gpusched::kDaemonAddressEnv);
  const bool address_from_env = env_address != nullptr && *env_address != '\0';
  if (address_from_env) settings.daemon = env_address;
  gpusched::flags::AddSettingFlags(&app, gpusched::agent::AgentSettingsTable(), &settings);
  std::vector<std::string> gpu_share_modes;
  app.add_option("--gpu-share-modes", gpu_share_modes,
                 "GPUS=MODE, per GPU over --gpu-share-mode (repeatable): e.g. 0-3=mps 4-7=timeslice");
  std::vector<std::string> labels;
  app.add_option("--label", labels, "node label key=value (repeatable)");
  bool discover = false;
  std::string discover_format = "text";
  app.add_flag("--discover", discover, "print this node as it would register (GPUs, NICs, NUMA, link matrix) and exit");
  app.add_option("--discover-format", discover_format, "text, json (the NodeInfo) or nccl-xml (NCCL_TOPO_FILE)")
      ->check(CLI::IsMember({"text", "json", "nccl-xml"}))
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
  const std::string daemon_before_file = settings.daemon;
  gpusched::flags::ApplyFileUnderFlags(&app, gpusched::agent::AgentSettingsTable(), file->settings, &settings);
  if (address_from_env && app.get_option("--daemon")->count() == 0) {
    settings.daemon = daemon_before_file;
  }
  gpusched::agent::AgentOptions options = AgentOptionsFrom(settings);
  // Labels merge: --label rack=r02 replaces the file's rack and keeps the rest.
  for (const auto& [key, value] : file->labels) options.labels[key] = value;
  for (const std::string& label : labels) {
    auto eq = label.find('=');
    if (eq == std::string::npos || eq == 0) {
      return UsageError(absl::StrCat("--label \"", label, "\": expected key=value"));
    }
    options.labels[label.substr(0, eq)] = label.substr(eq + 1);
  }
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
  gpusched::SetLogLevel(settings.log_level);
  if (!config_used.empty()) gpusched::GetLogger("agent")->info("settings from {}", config_used);
  if (discover) {
    return Discover(std::move(options), discover_format == "json"       ? gpusched::agent::DiscoverFormat::kJson
                                        : discover_format == "nccl-xml" ? gpusched::agent::DiscoverFormat::kNcclXml
                                                                        : gpusched::agent::DiscoverFormat::kText);
  }
  // Checked here, before anything starts: a wrong file must not look like a
  // daemon that refuses us.
  auto tls = gpusched::tls::LoadTls({.cert = settings.tls_cert, .key = settings.tls_key, .ca = settings.tls_ca},
                                    gpusched::tls::kClientTlsKeys);
  if (!tls.ok()) {
    std::cerr << "gpusched-agent: " << tls.status().message() << "\n";
    return 1;
  }
  options.tls = *std::move(tls);

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
