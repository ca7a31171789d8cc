#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/nccl/bandwidth_probe.h"
#include "agent/nccl/preflight_check.h"
#include "agent/runner/container_launch.h"
#include "agent/runner/cpu_binding.h"
#include "agent/runner/gpu_sharing.h"
#include "agent/runner/job_shim.h"
#include "agent/runner/process_ledger.h"
#include "agent/runner/recent_exits.h"
#include "common/clock.h"
#include "common/threads/mutex.h"
#include "common/topology/node_topology.h"
#include "gpusched/v1/agent.pb.h"
#include "spdlog/logger.h"

namespace gpusched::agent {

struct JobRunnerOptions {
  // When reports were made, for how long a final report is kept to answer a
  // resent launch or kill, and the "now" of preemption notices.
  const Clock* clock = &WallClock();
  std::string node_name;
  std::string log_dir;  // must exist
  std::string advertise_address = "127.0.0.1";
  // The node as discovered: NCCL NIC hints and CPU binding come from it (see
  // PrepareLaunch). Empty (no GPUs, no NICs): neither.
  topology::NodeTopology topology;
  CpuBindMode cpu_bind = CpuBindMode::kNuma;
  // How the node's GPUs are shared (AgentOptions::gpu_share_mode): a launch
  // with a GPU share is refused on GPUs not shared the way it was placed.
  GpuSharing sharing;
  std::string nccl_topo_file;  // NCCL_TOPO_FILE for every job that sets none; "" = none
  // For a KillJob with grace_ms <= 0: an unset grace should not cost a job its checkpoint.
  absl::Duration default_kill_grace = absl::Seconds(10);
  // How often the monitor looks for exited processes and overdue kills.
  absl::Duration poll_interval = absl::Milliseconds(20);
  // Runs the NCCL preflight of launches that ask for one; null: this agent
  // has no probe, and such launches start with a note that it was skipped.
  std::shared_ptr<BandwidthProbe> probe;
  // The gpusched-shim executable that holds each job's processes.
  std::string shim_program;
  // How long a launch waits for its shim to say the ranks started before it
  // fails (JobShim::Start's reply_base): well inside the lease, since a
  // launch holds up the stream that renews it.
  absl::Duration shim_reply_within = absl::Seconds(30);
  // How jobs in container images run here (disabled: they are refused).
  ContainerSettings containers;
};

// Runs the job processes of one node and says what became of them. Every
// outcome goes to the report callback as a JobUpdate, in order per job:
// STARTED then EXITED, or LAUNCH_FAILED, or PREFLIGHT_FAILED. Launches with a
// preflight, or with a container image to fetch, wait for it on a worker
// thread of their own, one at a time.
//
// Each job's processes on this node are the children of its shim
// (gpusched-shim), not of the runner: a runner that is detached (an agent
// restart) or dies leaves them running, and the next runner on this node
// adopts them from the ledger and reports how they end. A shim whose lease is
// not renewed (RenewLeases) kills its job. The runner reaps only the shims it
// started, by pidfd, so several runners and whatever else forks can share a
// process.
class JobRunner {
 public:
  using ReportFn = std::function<void(const v1::JobUpdate&)>;

  JobRunner(JobRunnerOptions options, ReportFn report);
  ~JobRunner();  // Shutdown with a short grace
  JobRunner(const JobRunner&) = delete;
  JobRunner& operator=(const JobRunner&) = delete;

  // Idempotent per job id: a job already running is answered with STARTED
  // again, one that ended lately with its stored final report.
  void Launch(const v1::LaunchJob& launch);
  // SIGTERM to every process group of the job, SIGKILL after `grace` (<= 0:
  // the default grace). A job not running here is answered with its stored final
  // report, or EXITED 0 "not running on <node>", so the daemon can close it.
  // `attempt` is the one the answer is about (LaunchJob.attempt); whatever
  // runs for the job is stopped.
  // With `notice_deadline` (a preemption), the job is told first when it
  // must be gone (preempt_notice.h).
  void Kill(uint64_t job_id, absl::Duration grace, const std::string& reason, int attempt = 0,
            std::optional<absl::Time> notice_deadline = std::nullopt);
  // The same without the answer for jobs that are not running.
  void KillIfRunning(uint64_t job_id, absl::Duration grace, const std::string& reason);
  // The daemon renewed the agent's lease (a registration or heartbeat
  // acknowledged): so are the jobs' shims'. `lease`: how long until they
  // fence themselves without another renewal, for the shims started from now.
  void RenewLeases(absl::Duration lease);
  // The agent's lease ran out: every job here, running or starting, is
  // SIGKILLed now, and its EXITED report carries fenced, so that the daemon
  // requeues it rather than failing it (a job whose processes had all exited
  // already is left to report how it ended). Returns how many jobs it hit.
  int Fence(const std::string& reason);

  std::vector<uint64_t> RunningJobIds() const;
  // The job's rank-0 process as launched here, for an interactive session
  // (InteractiveSessions); nullopt when the job does not run here, runs in
  // a container, or was adopted from an earlier agent.
  std::optional<ProcessSpec> SessionProcessOf(uint64_t job_id) const;
  struct RunningJob {
    uint64_t id = 0;
    int attempt = 0;
  };
  std::vector<RunningJob> RunningJobs() const;
  struct Load {
    int64_t jobs = 0;   // jobs with a process still here
    int64_t ranks = 0;  // their processes that have not exited
  };
  Load CurrentLoad() const;
  // Final reports of the last hour (at most 1000), oldest first; none for a
  // job with an attempt running or launching here now: that report is an
  // earlier attempt's, and the daemon would read it as this one's end (and
  // take the node for free of it).
  std::vector<v1::JobUpdate> RecentReports();

  // Kills every job (SIGTERM, `grace`, SIGKILL), waits for them, reports their
  // exits and stops the monitor. Launches after this fail. Safe to call twice.
  void Shutdown(absl::Duration grace);
  // Stops the monitor and leaves the running jobs to their shims, for the
  // next runner on this node to adopt. Launches after this fail. Returns how
  // many it left. After it, Shutdown does nothing.
  int Detach();
  // Whether the shims started now get a lease (RenewLeases gave one), so
  // that jobs left by Detach cannot outlive an agent that never returns.
  bool JobsFenceThemselves() const;
  // STARTED again for every job running here: a job adopted from an agent
  // that died before its STARTED left must still be counted as started.
  std::vector<v1::JobUpdate> StartedReports() const;

 private:
  using SteadyTime = std::chrono::steady_clock::time_point;
  struct Job {
    uint64_t id = 0;
    int attempt = 0;
    std::string log_dir;
    std::optional<JobShim> shim;  // the parent of its processes
    std::optional<SteadyTime> kill_deadline;
    bool sigkill_sent = false;
    std::string kill_reason;
    bool fenced = false;  // killed by Fence: its report says so
    // Its rank 0 as launched (not in a container): what an interactive
    // session of the job starts from. Unset for jobs adopted from an
    // earlier agent.
    std::optional<ProcessSpec> session_process;
  };

  // What a kill of a job still launching asks for, applied once it runs.
  struct KillRequest {
    absl::Duration grace;
    std::string reason;
    bool fence = false;
  };

  // The part of Launch after the job was admitted (in launching_): start its
  // processes and report. `preflight`: the one it passed, for the report.
  void StartAdmitted(const v1::LaunchJob& launch, const PreflightOutcome* preflight);
  absl::StatusOr<Job> StartProcesses(const v1::LaunchJob& launch);
  // A shim that did not answer its launch (JobShim::Start's `abandoned`):
  // watched until it ends, when that attempt's end is reported.
  void WatchAbandoned(const v1::LaunchJob& launch, JobShim shim);
  static v1::JobUpdate MakeUpdate(uint64_t job_id, int attempt, v1::JobUpdate::Kind kind, int exit_code,
                                  std::string message, std::string log_dir);
  // Final report of an admitted launch that never started; it leaves launching_.
  void EndAdmitted(const v1::JobUpdate& report);
  void PreflightLoop();
  // Picks up what the previous runner on this node left (ProcessLedger).
  void AdoptLeftovers() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  ShimExits ReadExits(uint64_t job_id) const;
  // Keeps a job's final report, in memory and in the ledger, for repeats.
  void KeepFinalReportLocked(const v1::JobUpdate& report) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // How a job whose shim is gone ended, from its exits file.
  v1::JobUpdate FinalReport(const Job& job, const ShimExits& exits) const;
  void KillImpl(uint64_t job_id, absl::Duration grace, const std::string& reason, bool answer_unknown, int attempt,
                std::optional<absl::Time> notice_deadline = std::nullopt);
  // `fence`: SIGKILL at once, and the report says fenced.
  void BeginKillLocked(Job& job, absl::Duration grace, const std::string& reason, bool fence = false)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::vector<v1::JobUpdate> PollLocked(SteadyTime now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void MonitorLoop();
  v1::JobUpdate NotRunning(uint64_t job_id, int attempt) const;

  const JobRunnerOptions options_;
  const ReportFn report_;
  const std::map<std::string, std::string> agent_env_;
  std::shared_ptr<spdlog::logger> log_;
  ProcessLedger ledger_;  // <log_dir>/running/<node>: what runs per job, and how ended ones ended
  // Unbound processes are the rule on a node whose topology describes another
  // machine; one line says so, not one per job.
  std::atomic<bool> cpu_bind_note_logged_{false};

  Mutex shutdown_mu_;  // one Shutdown at a time; it joins the monitor
  mutable Mutex mu_;
  CondVar cv_;
  std::map<uint64_t, Job> jobs_ ABSL_GUARDED_BY(mu_);
  struct Abandoned {
    uint64_t id = 0;
    int attempt = 0;
    JobShim shim;
  };
  std::vector<Abandoned> abandoned_ ABSL_GUARDED_BY(mu_);
  std::set<uint64_t> launching_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, KillRequest> kills_before_start_ ABSL_GUARDED_BY(mu_);  // of jobs in launching_
  std::deque<v1::LaunchJob> preflights_ ABSL_GUARDED_BY(mu_);                // waiting for the worker
  std::thread preflight_worker_;  // started with the first preflight (under mu_), joined after the monitor stops
  RecentExits recent_ ABSL_GUARDED_BY(mu_);
  bool shutting_down_ ABSL_GUARDED_BY(mu_) = false;
  bool detached_ ABSL_GUARDED_BY(mu_) = false;  // Detach: the jobs are left running
  absl::Duration shutdown_grace_ ABSL_GUARDED_BY(mu_);
  bool monitor_stop_ ABSL_GUARDED_BY(mu_) = false;
  absl::Duration lease_ ABSL_GUARDED_BY(mu_) = absl::ZeroDuration();  // for the shims started next
  std::thread monitor_;
};

}  // namespace gpusched::agent
