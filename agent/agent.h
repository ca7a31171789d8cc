#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "agent/runner/container_launch.h"
#include "agent/runner/cpu_binding.h"
#include "common/clock.h"
#include "common/io/tls/tls_files.h"
#include "common/threads/mutex.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::metrics {
class MetricsEndpoint;
}  // namespace gpusched::metrics

namespace gpusched::agent {

enum class GpuSource { kAuto, kNvml, kFile, kFake };

struct AgentOptions {
  std::string daemon_address;  // host:port of gpuschedd
  // The time of reports and probe results (the lease and heartbeats run on
  // the monotonic clock).
  const Clock* clock = &WallClock();
  // TLS to the daemon, checked already (tls::LoadTls); std::nullopt: plaintext.
  std::optional<tls::TlsMaterial> tls;
  std::string node_name;          // default: gethostname()
  std::string advertise_address;  // how other ranks reach this node (MASTER_ADDR on rank 0); default: its address
                                  // toward the daemon
  // Where the GPUs come from (see agent/topology_discovery.h). kAuto: the
  // topology file or text when given, else fake GPUs when asked for, else NVML,
  // else none (a CPU-only node).
  GpuSource gpu_source = GpuSource::kAuto;
  std::string topology_file;  // a saved `nvidia-smi topo -m` output
  std::string topology_text;  // the same, already read (gpuschedd dev's embedded nodes)
  std::string nvml_library;   // default libnvidia-ml.so.1; tests load a fake
  int fake_gpus = 0;          // N fake GPUs, every pair SYS
  // topo -m and fake GPUs carry no model or memory; NVML ignores these.
  std::string gpu_model = "NVIDIA H100 80GB HBM3";
  int64_t gpu_memory_mb = 81559;
  int64_t cpus = 0;       // 0 = detect
  int64_t memory_mb = 0;  // 0 = detect
  std::string log_dir;    // job logs go to <log_dir>/job-<id>/rank-<R>.log
  // kNuma: each job process runs on the CPUs of its GPUs' NUMA node(s).
  CpuBindMode cpu_bind = CpuBindMode::kNuma;
  // How the node's GPUs are shared between jobs: EXCLUSIVE (one job per GPU),
  // TIMESLICE (jobs with a share take turns; shares and memory limits are
  // accounted by the scheduler, not enforced on the GPU) or MPS (jobs are
  // clients of the agent's MPS control daemon, held to their share of the
  // compute threads and their pinned-memory limit).
  v1::GpuShareMode gpu_share_mode = v1::GPU_SHARE_MODE_EXCLUSIVE;
  // Per GPU (by index), over gpu_share_mode.
  std::map<int32_t, v1::GpuShareMode> gpu_share_modes;
  // The MPS control daemon the agent runs for its MPS GPUs, and where its
  // pipe/ and log/ directories go ("" = <log_dir>/mps).
  std::string mps_control_program = "nvidia-cuda-mps-control";
  std::string mps_dir;
  // Write the topology to <log_dir>/nccl-topo.xml at start and hand it to
  // every job as NCCL_TOPO_FILE. Off by default: only NVML's topology carries
  // the real PCI bus ids NCCL needs to match its devices.
  bool nccl_topo_file = false;
  std::map<std::string, std::string> labels;
  // HOST:PORT to serve Prometheus metrics on (port 0 picks a free one): what
  // the agent runs, and with NVML each GPU's utilization, memory, temperature
  // and power, named as DCGM exporter names them. Empty: none.
  std::string metrics_listen;
  // The NCCL probe program (gpusched-nccl-probe) for link calibration and
  // job preflights: a path, "auto" (the one installed next to this program,
  // on nodes whose topology came from NVML) or "" (none: preflights are
  // skipped with a note, calibrations report the probe unavailable).
  std::string nccl_probe;
  // Calibrate the links as the agent starts (with a probe and two GPUs or
  // more); the node takes no job until the figures are in.
  bool calibrate_on_start = true;
  // The gpusched-shim executable each job's processes run under. Empty: the
  // one next to this program (in a build tree, also ../agent/ of it).
  std::string shim_program;
  // Stop() leaves the running jobs to their shims (an agent restart or
  // upgrade: the next agent adopts them) instead of killing them.
  bool keep_jobs_on_stop = false;
  // Jobs in container images (gpusched submit --image): runtime "" = none
  // here. A runtime given by name is looked up in PATH at start.
  ContainerSettings containers;
  absl::Duration heartbeat_interval = absl::Seconds(5);
  absl::Duration max_reconnect_backoff = absl::Seconds(5);
};

class CommandDispatcher;
class DaemonSession;
class GpuSampler;
class JobRunner;
class LinkCalibrator;
class MpsControlDaemon;
class InteractiveSessions;

// One node's agent: registers the node with gpuschedd, runs the jobs it is sent
// and reports their end. Holds no process-wide state (no signal handlers, reaps
// only its own children), so several can live in one process (`gpuschedd dev`).
class Agent {
 public:
  explicit Agent(AgentOptions options);
  ~Agent();  // calls Stop()
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  // Validates the options, starts the threads and returns at once; the daemon
  // connection is made in the background and remade, with backoff, when it breaks.
  absl::Status Start();
  // Kills this agent's jobs (SIGTERM, short grace, SIGKILL), waits for them,
  // disconnects and joins the threads. Safe to call twice.
  void Stop();
  // Registered with the daemon right now.
  bool connected() const;
  // http://HOST:PORT/metrics, or "" without metrics.
  std::string metrics_url() const;

 private:
  // Serves /metrics; called from Start, under mu_.
  absl::Status StartMetrics(const AgentOptions& options, const std::string& gpu_source);

  AgentOptions options_;
  // Guards the flags, and the pointers below while Start and Stop set and
  // reset them; never held while waiting.
  mutable Mutex mu_;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  std::unique_ptr<DaemonSession> session_;
  std::atomic<DaemonSession*> reports_to_{nullptr};  // session_, once it exists
  // Before the runner: jobs under MPS need it until the runner is gone.
  std::unique_ptr<MpsControlDaemon> mps_;
  std::unique_ptr<InteractiveSessions> sessions_;  // before the runner, which ends them
  std::unique_ptr<JobRunner> runner_;
  std::unique_ptr<CommandDispatcher> dispatcher_;
  std::unique_ptr<GpuSampler> gpu_sampler_;  // NVML nodes with metrics only
  std::unique_ptr<LinkCalibrator> calibrator_;
  // Last: it reads the runner, the session and the sampler from its threads.
  std::unique_ptr<metrics::MetricsEndpoint> metrics_;
};

}  // namespace gpusched::agent
