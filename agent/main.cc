// gpusched-agent: the node agent. Thin wiring: flags -> AgentOptions, then run
// until SIGINT/SIGTERM.
#include <pthread.h>
#include <signal.h>

#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"

#include "agent/agent.h"
#include "agent/discover_report.h"
#include "agent/host_info.h"
#include "agent/node_info.h"
#include "agent/topology_discovery.h"
#include "common/defaults.h"
#include "common/logging.h"

namespace {

constexpr int kUsageError = 2;
// Bounds that keep CLI11's range messages readable; a node with more than an
// exabyte of memory can pass 0 and be detected.
constexpr int64_t kMaxMb = int64_t{1} << 40;

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

}  // namespace

int main(int argc, char** argv) {
  gpusched::agent::AgentOptions options;
  const char* env_address = std::getenv(gpusched::kDaemonAddressEnv);
  options.daemon_address = env_address && *env_address ? env_address : gpusched::kDefaultDaemonAddress;
  options.log_dir = "/var/lib/gpusched/logs";
  std::vector<std::string> labels;
  int64_t heartbeat_ms = absl::ToInt64Milliseconds(options.heartbeat_interval);
  std::string log_level = "info";

  CLI::App app{"gpusched node agent: registers this node with gpuschedd and runs the jobs it is sent"};
  app.set_version_flag("--version", gpusched::kVersion);
  app.add_option("--daemon", options.daemon_address,
                 absl::StrCat("gpuschedd address, host:port (default: $", gpusched::kDaemonAddressEnv, ", else ",
                              gpusched::kDefaultDaemonAddress, ")"));
  app.add_option("--node-name", options.node_name, "name of this node (default: the host name)");
  app.add_option("--advertise-address", options.advertise_address,
                 "address other nodes reach this one at; MASTER_ADDR when this node holds rank 0")
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
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  app.add_option("--gpu-model", options.gpu_model, "model name of file or fake GPUs")->capture_default_str();
  app.add_option("--gpu-memory-mb", options.gpu_memory_mb, "memory of each file or fake GPU in MB")
      ->check(CLI::Range(int64_t{1}, kMaxMb))
      ->capture_default_str();
  app.add_option("--cpus", options.cpus, "CPUs to offer (default: detect)")->check(CLI::Range(0, 1 << 20));
  app.add_option("--memory-mb", options.memory_mb, "memory to offer in MB (default: detect)")
      ->check(CLI::Range(int64_t{0}, kMaxMb));
  app.add_option("--log-dir", options.log_dir, "job logs go to <dir>/job-<id>/rank-<R>.log")->capture_default_str();
  std::string cpu_bind = "numa";
  app.add_option("--cpu-bind", cpu_bind,
                 "numa: run each job process on the CPUs of its GPU's NUMA node (within the agent's own CPUs); "
                 "none: leave processes where the agent runs")
      ->check(CLI::IsMember({"none", "numa"}))
      ->capture_default_str();
  app.add_flag("--nccl-topo-file", options.nccl_topo_file,
               "write this node's topology to <log-dir>/nccl-topo.xml and set NCCL_TOPO_FILE for jobs that set "
               "none (meant for NVML-discovered nodes)");
  app.add_option("--label", labels, "node label key=value (repeatable)");
  app.add_option("--heartbeat-interval-ms", heartbeat_ms, "heartbeat interval until the daemon sets one")
      ->check(CLI::Range(int64_t{1}, int64_t{3'600'000}))
      ->capture_default_str();
  bool discover = false;
  std::string discover_format = "text";
  app.add_flag("--discover", discover,
               "print this node as it would register (GPUs, NICs, NUMA, link matrix) and exit");
  app.add_option("--discover-format", discover_format, "text, json (the NodeInfo) or nccl-xml (NCCL_TOPO_FILE)")
      ->check(CLI::IsMember({"text", "json", "nccl-xml"}))
      ->capture_default_str();
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}))
      ->capture_default_str();

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help, --version
  } catch (const CLI::ParseError& e) {
    return UsageError(e.what());
  }
  for (const std::string& label : labels) {
    auto eq = label.find('=');
    if (eq == std::string::npos || eq == 0) {
      return UsageError(absl::StrCat("--label \"", label, "\": expected key=value"));
    }
    options.labels[label.substr(0, eq)] = label.substr(eq + 1);
  }
  options.heartbeat_interval = absl::Milliseconds(heartbeat_ms);
  options.cpu_bind = cpu_bind == "none" ? gpusched::agent::CpuBindMode::kNone : gpusched::agent::CpuBindMode::kNuma;
  options.gpu_source = gpu_source == "nvml"   ? gpusched::agent::GpuSource::kNvml
                       : gpu_source == "file" ? gpusched::agent::GpuSource::kFile
                       : gpu_source == "fake" ? gpusched::agent::GpuSource::kFake
                                              : gpusched::agent::GpuSource::kAuto;
  gpusched::SetLogLevel(log_level);
  if (discover) {
    return Discover(std::move(options), discover_format == "json"       ? gpusched::agent::DiscoverFormat::kJson
                                        : discover_format == "nccl-xml" ? gpusched::agent::DiscoverFormat::kNcclXml
                                                                        : gpusched::agent::DiscoverFormat::kText);
  }

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
  int sig = 0;
  sigwait(&stop_signals, &sig);
  log->info("received {}, stopping (running jobs are killed)", sig == SIGINT ? "SIGINT" : "SIGTERM");
  agent.Stop();
  return 0;
}
