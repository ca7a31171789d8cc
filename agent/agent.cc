#include "agent/agent.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/command_dispatcher.h"
#include "agent/daemon_session.h"
#include "agent/gpu/gpu_sampler.h"
#include "agent/gpu/nvml_gpu_sampler.h"
#include "agent/host_info.h"
#include "agent/link_calibrator.h"
#include "agent/log_root.h"
#include "agent/metrics/agent_collector.h"
#include "agent/metrics/gpu_collector.h"
#include "agent/nccl/bandwidth_probe.h"
#include "agent/node_info.h"
#include "agent/node_sharing.h"
#include "agent/route_address.h"
#include "agent/runner/exec_path.h"
#include "agent/runner/interactive_sessions.h"
#include "agent/runner/job_runner.h"
#include "agent/runner/nccl_topo_file.h"
#include "agent/runner/rank_environment.h"
#include "common/io/logging/logging.h"
#include "common/io/metrics/metrics_endpoint.h"
#include "common/replica_addresses.h"
#include "common/threads/mutex.h"

namespace gpusched::agent {
namespace {

// Stop is what an operator's `systemctl stop` waits on: short, but enough for
// a job to notice SIGTERM.
constexpr absl::Duration kStopGrace = absl::Seconds(2);

absl::Status ValidateOptions(const AgentOptions& o) {
  if (o.daemon_address.empty()) return absl::InvalidArgumentError("no daemon address given");
  if (o.log_dir.empty()) return absl::InvalidArgumentError("no log directory given");
  if (o.fake_gpus < 0)
    return absl::InvalidArgumentError(absl::StrCat("fake GPU count must be >= 0, got ", o.fake_gpus));
  if (o.gpu_source == GpuSource::kFake && o.fake_gpus == 0) {
    return absl::InvalidArgumentError("the fake GPU source needs a GPU count > 0");
  }
  if (o.cpus < 0) return absl::InvalidArgumentError(absl::StrCat("cpus must be >= 0 (0 = detect), got ", o.cpus));
  if (o.memory_mb < 0) {
    return absl::InvalidArgumentError(absl::StrCat("memory must be >= 0 MB (0 = detect), got ", o.memory_mb));
  }
  if (o.heartbeat_interval <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("heartbeat interval must be positive, got ", absl::FormatDuration(o.heartbeat_interval)));
  }
  if (o.max_reconnect_backoff <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("max reconnect backoff must be positive, got ", absl::FormatDuration(o.max_reconnect_backoff)));
  }
  return absl::OkStatus();
}

// Jobs fail one by one when their logs cannot be written; better to refuse to
// start at all.
absl::Status PrepareLogDir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::FailedPreconditionError(absl::StrCat("log directory \"", dir, "\": ", ec.message()));
  return CheckLogRoot(dir);
}

// The probe `setting` (AgentOptions::nccl_probe) names, or null with why not.
// The directory this executable lives in ("" when /proc/self/exe cannot be
// read): where the package installs its helper programs beside it.
std::filesystem::path ThisProgramsDir() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path() : self.parent_path();
}

std::shared_ptr<BandwidthProbe> MakeProbe(const std::string& setting, const std::string& topology_source,
                                          std::string* why_not) {
  std::string program = setting;
  if (setting.empty()) {
    *why_not = "no NCCL probe configured (--nccl-probe)";
    return nullptr;
  }
  if (setting == "auto") {
    // Fake or file topologies describe another machine: measuring this one's
    // GPUs under their names would be wrong.
    if (topology_source != "nvml") {
      *why_not = absl::StrCat("the GPUs came from ", topology_source, ", not NVML (--nccl-probe PATH forces a probe)");
      return nullptr;
    }
    const std::filesystem::path dir = ThisProgramsDir();
    program = (dir / "gpusched-nccl-probe").string();
    if (dir.empty() || access(program.c_str(), X_OK) != 0) {
      *why_not = absl::StrCat("no gpusched-nccl-probe next to this program (", program,
                              "); the agent was built without CUDA and NCCL");
      return nullptr;
    }
  } else if (access(program.c_str(), X_OK) != 0) {
    *why_not = absl::StrCat("--nccl-probe ", program, " is not an executable file");
    return nullptr;
  }
  ProgramBandwidthProbeOptions probe;
  probe.program = program;
  // The peak is what is judged, and it comes from the large messages.
  probe.extra_args = {"--min-bytes", "1048576"};
  return std::make_shared<ProgramBandwidthProbe>(std::move(probe));
}

// The shim named, else the one installed next to this program; in a build
// tree gpuschedd (daemon/) runs agents whose shim is in agent/.
absl::StatusOr<std::string> ResolveShim(const std::string& setting) {
  std::vector<std::string> candidates;
  if (!setting.empty()) {
    candidates.push_back(setting);
  } else if (const std::filesystem::path dir = ThisProgramsDir(); !dir.empty()) {
    candidates.push_back((dir / "gpusched-shim").string());
    candidates.push_back((dir.parent_path() / "agent" / "gpusched-shim").string());
  }
  for (const std::string& program : candidates) {
    if (access(program.c_str(), X_OK) == 0) return program;
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "no job shim: ", candidates.empty() ? "cannot read /proc/self/exe" : absl::StrJoin(candidates, " or "),
      " is not an executable file (gpusched-shim comes with the agent; --shim PATH names another)"));
}

}  // namespace

Agent::Agent(AgentOptions options) : options_(std::move(options)) {}

Agent::~Agent() {
  Stop();
  // A start that failed half way: the jobs it adopted are not its to kill.
  if (runner_ != nullptr) runner_->Detach();
  reports_to_.store(nullptr, std::memory_order_release);
  // Stop() joined every thread; the session still points at the dispatcher,
  // the dispatcher at the runner.
  metrics_.reset();
  calibrator_.reset();  // joins a calibration under way, which reports through the session
  session_.reset();
  runner_.reset();
  dispatcher_.reset();
}

absl::Status Agent::Start() {
  MutexLock lock(&mu_);
  if (started_) return absl::FailedPreconditionError("the agent was already started");

  AgentOptions options = options_;
  if (options.node_name.empty()) options.node_name = HostName();
  if (absl::Status s = ValidateOptions(options); !s.ok()) return s;
  if (options.advertise_address.empty()) {
    // What the other nodes of a gang dial as MASTER_ADDR: this host's address
    // toward the daemon, not loopback, unless the operator says otherwise.
    // Replicas of one daemon sit on one network: the first one's route serves.
    auto routed = LocalAddressToward(ReplicaAddresses(options.daemon_address).current());
    if (!routed.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot work out this node's address (set --advertise-address): ", routed.status().message()));
    }
    options.advertise_address = *routed;
  }
  // Absolute, so that job logs land where the operator meant even though jobs
  // run in other directories.
  std::error_code ec;
  std::filesystem::path log_dir = std::filesystem::absolute(options.log_dir, ec);
  if (!ec) options.log_dir = log_dir.lexically_normal().string();
  if (options.log_dir.size() > 1 && options.log_dir.back() == '/') options.log_dir.pop_back();
  if (absl::Status s = PrepareLogDir(options.log_dir); !s.ok()) return s;

  auto discovered = DiscoverTopology(options);
  if (!discovered.ok()) return discovered.status();
  auto log = GetLogger(absl::StrCat("agent/", options.node_name));
  if (!discovered->fallback_reason.empty()) {
    log->warn("no GPUs: {}; this node runs CPU jobs only", discovered->fallback_reason);
  }
  if (options.containers.enabled()) {
    auto runtime =
        ResolveExecutable(options.containers.runtime, std::getenv("PATH") ? std::getenv("PATH") : kFallbackPath);
    if (!runtime.ok() || access(runtime->c_str(), X_OK) != 0) {
      return absl::FailedPreconditionError(absl::StrCat("container_runtime \"", options.containers.runtime,
                                                        "\": no such executable (install podman, or leave "
                                                        "container_runtime unset for a node without containers)"));
    }
    options.containers.runtime = *runtime;
  }
  v1::NodeInfo node = DescribeNode(options, *discovered);
  *node.mutable_containers() = options.containers.Support();

  auto shim = ResolveShim(options.shim_program);
  if (!shim.ok()) return shim.status();
  JobRunnerOptions runner_options;
  runner_options.clock = options.clock;
  runner_options.shim_program = *std::move(shim);
  runner_options.node_name = options.node_name;
  runner_options.log_dir = options.log_dir;
  runner_options.advertise_address = options.advertise_address;
  runner_options.cpu_bind = options.cpu_bind;
  runner_options.containers = options.containers;
  auto sharing = StartGpuSharing(options, node, log, &mps_);
  if (!sharing.ok()) return sharing.status();
  runner_options.sharing = *std::move(sharing);
  if (options.nccl_topo_file) {
    auto written = WriteNcclTopoFile(discovered->topology, options.log_dir);
    if (!written.ok()) return written.status();
    runner_options.nccl_topo_file = *written;
    if (discovered->source != "nvml") {
      log->warn(
          "--nccl-topo-file: the topology came from {}, not NVML, so the GPUs in {} carry placeholder PCI "
          "bus ids that NCCL will not match to its devices; jobs get it as NCCL_TOPO_FILE all the same",
          discovered->source, *written);
    }
  }
  std::string no_probe;
  std::shared_ptr<BandwidthProbe> probe = MakeProbe(options.nccl_probe, discovered->source, &no_probe);
  if (probe == nullptr) log->info("no NCCL link calibration or preflight: {}", no_probe);
  runner_options.probe = probe;
  runner_options.topology = std::move(discovered->topology);
  const topology::NodeTopology topology = runner_options.topology;
  const std::string nccl_topo_file = runner_options.nccl_topo_file;
  SessionOptions session_options;
  session_options.daemon_address = options.daemon_address;
  session_options.tls = options.tls;
  session_options.node_name = options.node_name;
  session_options.heartbeat_interval = options.heartbeat_interval;
  session_options.max_backoff = options.max_reconnect_backoff;
  session_options.initial_backoff = std::min(session_options.initial_backoff, options.max_reconnect_backoff);

  // The runner reports through the session, the session hands commands to the
  // dispatcher, the dispatcher drives the runner. Jobs adopted from a previous
  // agent may end before the session exists: their reports are kept
  // (RecentReports) and go out after the registration.
  // Sessions before the runner, which ends them as their jobs end; they
  // start from the runner's view of a job, asked only once sessions come.
  sessions_ = std::make_unique<InteractiveSessions>(
      [this](const v1::SessionOutput& output) {
        DaemonSession* session = reports_to_.load(std::memory_order_acquire);
        if (session == nullptr) return;
        v1::AgentMessage message;
        *message.mutable_session_output() = output;
        session->Send(std::move(message));
      },
      [this](uint64_t job_id) { return runner_->SessionProcessOf(job_id); });
  runner_ = std::make_unique<JobRunner>(std::move(runner_options), [this](const v1::JobUpdate& update) {
    if (update.kind() != v1::JobUpdate::KIND_STARTED) {
      sessions_->EndJob(update.job_id(), update.message().empty() ? std::string("the job ended")
                                                                  : absl::StrCat("the job ended: ", update.message()));
    }
    DaemonSession* session = reports_to_.load(std::memory_order_acquire);
    if (session == nullptr) return;
    v1::AgentMessage message;
    *message.mutable_job_update() = update;
    session->Send(std::move(message));
  });
  calibrator_ = std::make_unique<LinkCalibrator>(
      probe, no_probe, topology,
      [this](const v1::NodeProbe& result) {
        v1::AgentMessage message;
        *message.mutable_probe_result() = result;
        session_->Send(std::move(message));
      },
      *options.clock);
  dispatcher_ = std::make_unique<CommandDispatcher>(node, runner_.get(), calibrator_.get(), sessions_.get());
  session_ = std::make_unique<DaemonSession>(session_options, dispatcher_.get());
  reports_to_.store(session_.get(), std::memory_order_release);
  const bool calibrate = probe != nullptr && options.calibrate_on_start && topology.num_gpus() >= 2;
  log->info("node {} ({} GPUs from {}, {} NICs, {} CPUs, {} MB): job logs in {}, daemon at {}, CPU binding {}{}",
            node.name(), node.gpus_size(), node.topology().source(), node.topology().nics_size(), node.cpus(),
            node.memory_mb(), options.log_dir, absl::StrCat(options.daemon_address, options.tls ? " (TLS)" : ""),
            options.cpu_bind == CpuBindMode::kNone ? "off" : "by NUMA node",
            nccl_topo_file.empty() ? "" : absl::StrCat(", NCCL_TOPO_FILE ", nccl_topo_file));
  if (!options.metrics_listen.empty()) {
    // Before the session starts: a bad address fails start-up before the
    // node registers.
    if (absl::Status s = StartMetrics(options, discovered->source); !s.ok()) return s;
    log->info("metrics on {}", metrics_->url());
  }
  // Before the first registration, which then says a calibration is under way.
  if (calibrate) calibrator_->Start();
  session_->Start();
  started_ = true;
  return absl::OkStatus();
}

absl::Status Agent::StartMetrics(const AgentOptions& options, const std::string& gpu_source) {
  std::vector<std::shared_ptr<prometheus::Collectable>> collectables;
  // Called from the endpoint's threads: reads only what outlives it.
  collectables.push_back(std::make_shared<AgentCollector>(options.node_name, [this] {
    const JobRunner::Load load = runner_->CurrentLoad();
    return AgentCollector::Status{load.jobs, load.ranks, session_->connected()};
  }));
  // GPU readings come from NVML only: fake and file GPUs have none to give.
  if (gpu_source == "nvml") {
    auto sampler =
        NvmlGpuSampler::Open(options.nvml_library.empty() ? NvmlLibrary::kDefaultPath : options.nvml_library);
    if (sampler.ok()) {
      gpu_sampler_ = *std::move(sampler);
      collectables.push_back(std::make_shared<GpuCollector>(options.node_name, gpu_sampler_.get()));
    } else {
      GetLogger(absl::StrCat("agent/", options.node_name))
          ->warn("no GPU metrics: {}", std::string(sampler.status().message()));
    }
  }
  auto endpoint = metrics::MetricsEndpoint::Start(options.metrics_listen, std::move(collectables));
  if (!endpoint.ok()) return endpoint.status();
  metrics_ = *std::move(endpoint);
  return absl::OkStatus();
}

void Agent::Stop() {
  {
    MutexLock lock(&mu_);
    if (!started_ || stopped_) return;
    stopped_ = true;
  }
  calibrator_->Stop();
  // Sessions are the agent's children: they end with it, and say so while
  // the daemon can still hear.
  sessions_->EndAll("the node's agent is stopping");
  // Only shims with a lease may be left: they fence themselves when no agent
  // comes back, where leaseless ones (no registration yet, or a daemon that
  // gives none) would run on unwatched.
  if (options_.keep_jobs_on_stop && runner_->JobsFenceThemselves()) {
    const int left = runner_->Detach();
    // The jobs left running are its clients; the next agent adopts it.
    if (mps_ && left > 0) mps_->Detach();
    if (mps_ && left == 0) mps_->Stop();
  } else {
    // Jobs first, while still connected, so that their exits reach the daemon.
    runner_->Shutdown(kStopGrace);
    if (mps_) mps_->Stop();
  }
  session_->Stop();
}

std::string Agent::metrics_url() const {
  MutexLock lock(&mu_);
  return metrics_ ? metrics_->url() : "";
}

bool Agent::connected() const {
  MutexLock lock(&mu_);
  return started_ && session_->connected();
}

}  // namespace gpusched::agent
