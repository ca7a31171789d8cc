#include "agent/runner/job_runner.h"

#include <signal.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/runner/container_launch.h"
#include "agent/runner/launch_plan.h"
#include "agent/runner/preempt_notice.h"
#include "agent/runner/rank_environment.h"
#include "agent/runner/small_file.h"
#include "common/io/logging/logging.h"
#include "common/threads/mutex.h"

namespace gpusched::agent {
namespace {

constexpr absl::Duration kDestructorGrace = absl::Seconds(2);
// How long Shutdown waits beyond the grace for processes that ignore SIGKILL
// (stuck in the kernel, e.g. on a dead NFS mount) before it gives up on them.
constexpr absl::Duration kShutdownSlack = absl::Seconds(5);

std::chrono::steady_clock::duration ToChrono(absl::Duration d) {
  return std::chrono::nanoseconds(absl::ToInt64Nanoseconds(d));
}

std::string SignalName(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? absl::StrCat("SIG", abbrev) : absl::StrCat("signal ", sig);
}

}  // namespace

JobRunner::JobRunner(JobRunnerOptions options, ReportFn report)
    : options_(std::move(options)),
      report_(std::move(report)),
      agent_env_(InheritedAgentEnvironment()),
      log_(GetLogger(absl::StrCat("agent/", options_.node_name))),
      // By node: agents of one machine (gpuschedd dev), or of a shared
      // filesystem, may share a log dir.
      ledger_(absl::StrCat(options_.log_dir, "/running/", options_.node_name)),
      shutdown_grace_(kDestructorGrace) {
  std::set<uint64_t> running;
  {
    MutexLock lock(&mu_);  // no other thread yet; the analysis asks for it all the same
    AdoptLeftovers();
    for (const auto& [id, job] : jobs_) running.insert(id);
  }
  // Podman runs outside the lock, as everywhere else.
  if (options_.containers.enabled()) {
    const int removed =
        RemoveLeftoverContainers(options_.containers, ContainerScope(options_.log_dir, options_.node_name), running);
    if (removed > 0) log_->warn("removed {} job container(s) of jobs no longer running here", removed);
  }
  monitor_ = std::thread([this] { MonitorLoop(); });
}

void JobRunner::AdoptLeftovers() {
  ProcessLedger::Loaded loaded = ledger_.Load();
  // How the jobs a predecessor saw end did end: reported again like any
  // recent report, after the next registration.
  for (const v1::JobUpdate& report : loaded.reports) recent_.Add(report, options_.clock->Now());
  for (ProcessLedger::Recorded& left : loaded.recorded) {
    Job job;
    job.id = left.job_id;
    job.attempt = left.attempt;
    job.log_dir = JobLogDir(options_.log_dir, left.job_id);
    if (!left.this_boot) {
      ledger_.Forget(left.job_id);  // nothing of it survived the reboot
      continue;
    }
    if (!left.shim.complete()) {
      std::vector<pid_t> groups;
      for (const ShimExits::Group& g : left.shim.groups) groups.push_back(g.pgid);
      auto shim = JobShim::Adopt(left.shim.shim_pid, left.shim.shim_start, std::move(groups));
      if (shim.ok()) {
        log_->info("job {} (attempt {}): adopted from a previous agent, {} rank(s) under shim pid {}", job.id,
                   job.attempt, left.shim.groups.size(), shim->pid());
        job.shim = *std::move(shim);
        jobs_.emplace(job.id, std::move(job));
        continue;
      }
      // It may have ended between the read above and now.
      if (left.shim.shim_pid != 0) left.shim = ReadExits(left.job_id);
    }
    if (left.shim.complete()) {
      v1::JobUpdate report = FinalReport(job, left.shim);
      log_->info("job {} (attempt {}): ended while no agent ran: {}", job.id, job.attempt,
                 report.message().empty() ? absl::StrCat("exit code ", report.exit_code()) : report.message());
      KeepFinalReportLocked(report);
      continue;
    }
    // Its shim was killed, or never started: whatever of it still runs
    // goes, and the daemon, not hearing of it, takes it for lost.
    const int killed = JobShim::KillGroups(left.shim);
    ledger_.Forget(left.job_id);
    log_->warn(
        "job {} (attempt {}): its shim is gone; killed {} process group(s) it left; the daemon will take the "
        "job for lost",
        job.id, job.attempt, killed);
  }
}

v1::JobUpdate JobRunner::MakeUpdate(uint64_t job_id, int attempt, v1::JobUpdate::Kind kind, int exit_code,
                                    std::string message, std::string log_dir) {
  v1::JobUpdate u;
  u.set_job_id(job_id);
  u.set_attempt(attempt);
  u.set_kind(kind);
  u.set_exit_code(exit_code);
  u.set_message(std::move(message));
  u.set_log_dir(std::move(log_dir));
  return u;
}

JobRunner::~JobRunner() { Shutdown(kDestructorGrace); }

void JobRunner::Launch(const v1::LaunchJob& launch) {
  const uint64_t id = launch.job_id();
  const int attempt = launch.attempt();
  std::optional<v1::JobUpdate> answer;
  {
    MutexLock lock(&mu_);
    auto done = recent_.Find(id, options_.clock->Now());
    if (auto it = jobs_.find(id); it != jobs_.end()) {
      if (it->second.attempt == attempt) {
        answer = MakeUpdate(id, attempt, v1::JobUpdate::KIND_STARTED, 0, "already running", it->second.log_dir);
      } else {
        answer = MakeUpdate(
            id, attempt, v1::JobUpdate::KIND_LAUNCH_FAILED, 0,
            absl::StrCat("attempt ", it->second.attempt + 1, " of this job is still stopping on ", options_.node_name),
            "");
        answer->set_earlier_attempt_running(true);
      }
    } else if (done && done->attempt() == attempt) {
      answer = *done;
    } else if (launching_.contains(id)) {
      return;  // the first launch will answer
    } else if (shutting_down_) {
      answer = MakeUpdate(id, attempt, v1::JobUpdate::KIND_LAUNCH_FAILED, 0,
                          absl::StrCat("the agent on ", options_.node_name, " is shutting down"), "");
    } else {
      launching_.insert(id);
    }
  }
  if (answer) {
    log_->info("job {}: not starting it ({}), answering {}", id,
               answer->message().empty() ? "already ran here" : answer->message(),
               v1::JobUpdate::Kind_Name(answer->kind()));
    report_(*answer);
    return;
  }

  if (launch.has_preflight() || launch.spec().has_container()) {
    MutexLock lock(&mu_);
    preflights_.push_back(launch);
    if (!preflight_worker_.joinable()) preflight_worker_ = std::thread([this] { PreflightLoop(); });
    cv_.SignalAll();
    return;
  }
  StartAdmitted(launch, nullptr);
}

void JobRunner::KeepFinalReportLocked(const v1::JobUpdate& report) {
  recent_.Add(report, options_.clock->Now());
  // Its ranks' environments (secrets and all), written for the container
  // runtime; none where the job ran no container.
  RemoveContainerEnvFiles(ContainerEnvDir(options_.log_dir), report.job_id());
  // The ledger ages its reports by their files' times: the kernel's clock, not the runner's.
  if (absl::Status s = ledger_.Finished(report, absl::Now()); !s.ok()) {
    log_->warn("job {}: cannot keep its final report on disk: {}", report.job_id(), std::string(s.message()));
  }
}

void JobRunner::EndAdmitted(const v1::JobUpdate& report) {
  {
    MutexLock lock(&mu_);
    launching_.erase(report.job_id());
    kills_before_start_.erase(report.job_id());
    KeepFinalReportLocked(report);
  }
  cv_.SignalAll();
  report_(report);
}

void JobRunner::StartAdmitted(const v1::LaunchJob& launch, const PreflightOutcome* preflight) {
  const uint64_t id = launch.job_id();
  const int attempt = launch.attempt();
  // A job the ledger cannot hold would be lost to the next agent: it is
  // refused while nothing runs.
  bool fenced = false;
  {
    MutexLock lock(&mu_);
    auto kill = kills_before_start_.find(id);
    fenced = kill != kills_before_start_.end() && kill->second.fence;
  }
  if (fenced) {
    // The lease ran out while it was being admitted: it must not start now.
    v1::JobUpdate ended =
        MakeUpdate(id, attempt, v1::JobUpdate::KIND_EXITED, 0,
                   absl::StrCat("fenced on ", options_.node_name, " before it started; nothing ran"), "");
    ended.set_fenced(true);
    EndAdmitted(ended);
    return;
  }
  const absl::Status recorded = ledger_.Record(id, attempt);
  absl::StatusOr<Job> started = recorded.ok()
                                    ? StartProcesses(launch)
                                    : absl::ResourceExhaustedError(absl::StrCat(
                                          "cannot record the job in the agent's crash ledger: ", recorded.message()));
  if (!started.ok()) {
    const std::string log_dir = JobLogDir(options_.log_dir, id);
    log_->warn("job {}: launch failed: {}", id, std::string(started.status().message()));
    v1::JobUpdate failed =
        MakeUpdate(id, attempt, v1::JobUpdate::KIND_LAUNCH_FAILED, 0, std::string(started.status().message()), log_dir);
    // Its shim given up on may still start ranks: the daemon places nothing
    // here until that attempt's end is reported (PollLocked), and the job
    // goes back to the queue, the node being at fault.
    {
      MutexLock lock(&mu_);
      failed.set_earlier_attempt_running(absl::c_any_of(abandoned_, [&](const Abandoned& a) { return a.id == id; }));
    }
    EndAdmitted(failed);
    return;
  }

  log_->info("job {}: started {} process(es) under shim pid {}, logs in {}", id, started->shim->groups().size(),
             started->shim->pid(), started->log_dir);
  // Reported before the monitor can see the job, so that STARTED always
  // precedes EXITED.
  v1::JobUpdate report = MakeUpdate(id, attempt, v1::JobUpdate::KIND_STARTED, 0,
                                    preflight == nullptr ? "" : preflight->message, started->log_dir);
  if (preflight != nullptr) report.set_preflight_busbw_gbps(preflight->busbw_gbps);
  report_(report);
  {
    MutexLock lock(&mu_);
    launching_.erase(id);
    Job& job = jobs_[id] = *std::move(started);
    // Shutdown began while this job was starting: it must not outlive the
    // agent. (A detaching agent leaves it, like the others.)
    if (shutting_down_ && !detached_) {
      BeginKillLocked(job, shutdown_grace_, absl::StrCat("the agent on ", options_.node_name, " is stopping"));
    }
    // So did a kill, which waited for it to be here.
    if (auto kill = kills_before_start_.extract(id)) {
      BeginKillLocked(job, kill.mapped().grace, kill.mapped().reason, kill.mapped().fence);
    }
  }
  cv_.SignalAll();
}

absl::StatusOr<JobRunner::Job> JobRunner::StartProcesses(const v1::LaunchJob& launch) {
  LaunchContext context;
  context.node_name = options_.node_name;
  context.log_dir = options_.log_dir;
  context.advertise_address = options_.advertise_address;
  context.agent_env = agent_env_;
  context.topology = &options_.topology;
  context.cpu_bind = options_.cpu_bind;
  context.sharing = &options_.sharing;
  context.nccl_topo_file = options_.nccl_topo_file;
  context.containers = &options_.containers;
  if (options_.cpu_bind != CpuBindMode::kNone) {
    // Asked at each launch: an operator may move the agent (taskset, cgroup)
    // while it runs.
    auto allowed = AllowedCpusOfThisThread();
    if (allowed.ok()) {
      context.agent_cpus = *std::move(allowed);
    } else {
      log_->warn("job {}: not binding to CPUs: {}", launch.job_id(), std::string(allowed.status().message()));
      context.cpu_bind = CpuBindMode::kNone;
    }
  }
  auto plan = PrepareLaunch(launch, context);
  if (!plan.ok()) return plan.status();
  if (!plan->cpu_bind_note.empty() && !cpu_bind_note_logged_.exchange(true)) {
    log_->info(
        "job {}: not binding its processes to CPUs: {} (said once; GPUSCHED_CPU_BIND shows each "
        "process's binding)",
        launch.job_id(), plan->cpu_bind_note);
  }

  ShimSpec spec;
  spec.job_id = launch.job_id();
  {
    MutexLock lock(&mu_);
    // A tenth longer than the agent's own: a live agent fences first, and
    // says why; still well inside the daemon's margin (it gives the node up
    // at 4/3 of the lease).
    spec.lease = lease_ + lease_ / 10;
  }
  if (options_.shim_program.empty()) return absl::FailedPreconditionError("this agent has no job shim configured");
  std::optional<ProcessSpec> session_process;
  if (!launch.spec().has_container()) session_process = plan->processes.front();
  if (launch.spec().interactive()) {
    // Its ranks only hold the allocation (and its lease, and its place in
    // the ledger); its commands come as sessions.
    for (ProcessSpec& rank : plan->processes) {
      rank.executable = options_.shim_program;
      rank.argv = {options_.shim_program, "--hold"};
      rank.cleanup_argv.clear();
    }
  }
  spec.ranks = std::move(plan->processes);
  std::optional<JobShim> abandoned;
  auto shim = JobShim::Start(options_.shim_program, spec, ledger_.ExitsPathOf(launch.job_id()),
                             options_.shim_reply_within, &abandoned);
  if (abandoned.has_value()) WatchAbandoned(launch, *std::move(abandoned));
  if (!shim.ok()) return shim.status();
  Job job;
  job.id = launch.job_id();
  job.attempt = launch.attempt();
  job.log_dir = plan->job_log_dir;
  job.shim = *std::move(shim);
  job.session_process = std::move(session_process);
  return job;
}

void JobRunner::Kill(uint64_t job_id, absl::Duration grace, const std::string& reason, int attempt,
                     std::optional<absl::Time> notice_deadline) {
  KillImpl(job_id, grace, reason, /*answer_unknown=*/true, attempt, notice_deadline);
}

void JobRunner::KillIfRunning(uint64_t job_id, absl::Duration grace, const std::string& reason) {
  KillImpl(job_id, grace, reason, /*answer_unknown=*/false, 0);
}

void JobRunner::KillImpl(uint64_t job_id, absl::Duration grace, const std::string& reason, bool answer_unknown,
                         int attempt, std::optional<absl::Time> notice_deadline) {
  std::optional<v1::JobUpdate> answer;
  {
    MutexLock lock(&mu_);
    auto it = jobs_.find(job_id);
    if (it != jobs_.end()) {
      if (notice_deadline && !it->second.kill_deadline) {
        if (absl::Status s = WritePreemptNotice(it->second.log_dir, *notice_deadline, options_.clock->Now(), reason);
            !s.ok()) {
          log_->warn("job {}: no preemption notice for it: {}", job_id, std::string(s.message()));
        }
      }
      BeginKillLocked(it->second, grace, reason);
    } else if (launching_.contains(job_id)) {
      // Starting (or in its preflight): the launch answers, once it knows.
      kills_before_start_[job_id] = KillRequest{grace, reason};
    } else if (answer_unknown) {
      auto done = recent_.Find(job_id, options_.clock->Now());
      // Only the attempt asked about closes it on the daemon's side.
      answer = done && done->attempt() == attempt ? *done : NotRunning(job_id, attempt);
    }
  }
  cv_.SignalAll();
  if (answer) {
    log_->info("job {}: kill for a job that is not running here, answering {} {}", job_id,
               v1::JobUpdate::Kind_Name(answer->kind()), answer->exit_code());
    report_(*answer);
  }
}

int JobRunner::Fence(const std::string& reason) {
  int hit = 0;
  {
    MutexLock lock(&mu_);
    for (auto& [id, job] : jobs_) {
      BeginKillLocked(job, absl::ZeroDuration(), reason, /*fence=*/true);
      if (job.fenced) ++hit;
    }
    for (uint64_t id : launching_) {
      kills_before_start_[id] = KillRequest{absl::Milliseconds(1), reason, /*fence=*/true};
      ++hit;
    }
  }
  cv_.SignalAll();
  return hit;
}

void JobRunner::BeginKillLocked(Job& job, absl::Duration grace, const std::string& reason, bool fence) {
  if (fence) {
    // Only a job with a process still running is fenced: one whose ranks
    // all exited ends as it ended.
    if (ReadExits(job.id).complete()) return;
    // No grace: the daemon may place this gang elsewhere soon.
    job.fenced = true;
    if (!job.kill_deadline) job.kill_reason = reason;
    job.kill_deadline = std::chrono::steady_clock::now();
    job.sigkill_sent = true;
    log_->error("job {}: fenced, SIGKILL now ({})", job.id, reason);
    job.shim->Signal(ShimFenceSignal());
    return;
  }
  if (grace <= absl::ZeroDuration()) grace = options_.default_kill_grace;
  const SteadyTime deadline = std::chrono::steady_clock::now() + ToChrono(grace);
  if (job.kill_deadline) {
    // Already dying: a second kill may only hurry it up.
    if (deadline < *job.kill_deadline) job.kill_deadline = deadline;
    return;
  }
  log_->info("job {}: killing ({}), SIGKILL after {}", job.id, reason.empty() ? "no reason given" : reason,
             absl::FormatDuration(grace));
  job.kill_deadline = deadline;
  job.kill_reason = reason;
  job.shim->Signal(SIGTERM);
}

ShimExits JobRunner::ReadExits(uint64_t job_id) const {
  return ParseShimExits(ReadSmallFile(ledger_.ExitsPathOf(job_id)).value_or(""));
}

v1::JobUpdate JobRunner::FinalReport(const Job& job, const ShimExits& exits) const {
  int exit_code = 0;
  std::string detail;  // who set exit_code, and how
  for (const RankExit& exit : exits.exits) {
    int code;
    std::string how;
    if (exit.lost_errno != 0) {
      // Someone else reaped the shim's child: the status is gone, so do
      // not claim success.
      code = 255;
      how = absl::StrCat("exit status lost (waitpid: ", std::strerror(exit.lost_errno), ")");
    } else if (WIFSIGNALED(exit.wait_status)) {
      code = 128 + WTERMSIG(exit.wait_status);
      how = absl::StrCat("killed by ", SignalName(WTERMSIG(exit.wait_status)));
    } else {
      code = WEXITSTATUS(exit.wait_status);
      how = absl::StrCat("exited with code ", code);
    }
    log_->debug("job {}: rank {} {}", job.id, exit.rank, how);
    if (code != 0 && exit_code == 0) {
      exit_code = code;
      detail = absl::StrCat("rank ", exit.rank, " ", how);
    }
  }
  if (!exits.complete()) {
    // The shim died first: how its ranks ended is lost with it.
    if (exit_code == 0) exit_code = 255;
    detail = absl::StrCat("the job's shim", exits.shim_pid > 0 ? absl::StrCat(" (pid ", exits.shim_pid, ")") : "",
                          " died before its ranks ended", detail.empty() ? "" : absl::StrCat("; ", detail));
  }
  std::string message = detail;
  if (job.kill_deadline) {
    message = absl::StrCat("killed", job.kill_reason.empty() ? "" : absl::StrCat(" (", job.kill_reason, ")"),
                           message.empty() ? "" : absl::StrCat(": ", message));
  } else if (exits.fenced) {
    message = absl::StrCat("fenced: no agent renewed the job's lease on ", options_.node_name,
                           message.empty() ? "" : absl::StrCat(": ", message));
  }
  v1::JobUpdate report =
      MakeUpdate(job.id, job.attempt, v1::JobUpdate::KIND_EXITED, exit_code, std::move(message), job.log_dir);
  // The shim says whether a fence found a rank still running; where it
  // could not say (killed, or its file full), the runner's word stands.
  report.set_fenced(exits.fenced || (job.fenced && !exits.ended));
  return report;
}

void JobRunner::WatchAbandoned(const v1::LaunchJob& launch, JobShim shim) {
  log_->warn(
      "job {} (attempt {}): its shim (pid {}) did not answer; the launch fails, and the node takes no job "
      "until the shim has ended",
      launch.job_id(), launch.attempt(), shim.pid());
  MutexLock lock(&mu_);
  abandoned_.push_back({launch.job_id(), launch.attempt(), std::move(shim)});
}

std::vector<v1::JobUpdate> JobRunner::PollLocked(SteadyTime now) {
  std::vector<v1::JobUpdate> finished;
  for (auto it = abandoned_.begin(); it != abandoned_.end();) {
    if (!it->shim.Exited()) {
      ++it;
      continue;
    }
    log_->info("job {} (attempt {}): the shim given up on at launch has ended", it->id, it->attempt);
    finished.push_back(MakeUpdate(
        it->id, it->attempt, v1::JobUpdate::KIND_EXITED, 0,
        absl::StrCat("the shim given up on at launch has ended on ", options_.node_name, ": nothing of it runs"), ""));
    it = abandoned_.erase(it);
  }
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    Job& job = it->second;
    if (!job.shim->Exited()) {
      if (job.kill_deadline && !job.sigkill_sent && now >= *job.kill_deadline) {
        log_->info("job {}: grace period over, sending SIGKILL", job.id);
        job.sigkill_sent = true;
        job.shim->Signal(kShimKillSignal);
      }
      ++it;
      continue;
    }
    const ShimExits exits = ReadExits(job.id);
    // The shim was killed (the OOM killer, an operator): what is left of
    // its ranks goes now.
    if (!exits.complete()) JobShim::KillGroups(exits);
    v1::JobUpdate report = FinalReport(job, exits);
    log_->info("job {}: all processes exited, exit code {}{}", job.id, report.exit_code(),
               report.message().empty() ? "" : absl::StrCat(" (", report.message(), ")"));
    KeepFinalReportLocked(report);
    finished.push_back(std::move(report));
    it = jobs_.erase(it);
  }
  return finished;
}

void JobRunner::MonitorLoop() {
  MutexLock lock(&mu_);
  while (true) {
    std::vector<v1::JobUpdate> finished = PollLocked(std::chrono::steady_clock::now());
    if (!finished.empty()) {
      // Outside the lock: the callback may block on the connection.
      mu_.Unlock();
      for (const v1::JobUpdate& report : finished) report_(report);
      mu_.Lock();
      cv_.SignalAll();
    }
    if (monitor_stop_) return;
    cv_.WaitFor(&mu_, options_.poll_interval);
  }
}

std::optional<ProcessSpec> JobRunner::SessionProcessOf(uint64_t job_id) const {
  MutexLock lock(&mu_);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end() || it->second.kill_deadline) return std::nullopt;
  return it->second.session_process;
}

std::vector<uint64_t> JobRunner::RunningJobIds() const {
  std::vector<uint64_t> ids;
  for (const RunningJob& job : RunningJobs()) ids.push_back(job.id);
  return ids;
}

std::vector<JobRunner::RunningJob> JobRunner::RunningJobs() const {
  MutexLock lock(&mu_);
  std::vector<RunningJob> running;
  for (const auto& [id, job] : jobs_) running.push_back({id, job.attempt});
  return running;
}

JobRunner::Load JobRunner::CurrentLoad() const {
  MutexLock lock(&mu_);
  Load load;
  load.jobs = static_cast<int64_t>(jobs_.size());
  for (const auto& [id, job] : jobs_) {
    const ShimExits exits = ReadExits(id);
    if (exits.groups.size() > exits.exits.size())
      load.ranks += static_cast<int64_t>(exits.groups.size() - exits.exits.size());
  }
  return load;
}

std::vector<v1::JobUpdate> JobRunner::RecentReports() {
  MutexLock lock(&mu_);
  std::vector<v1::JobUpdate> reports = recent_.All(options_.clock->Now());
  std::erase_if(reports, [&](const v1::JobUpdate& report) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return jobs_.contains(report.job_id()) || launching_.contains(report.job_id());
  });
  return reports;
}

void JobRunner::RenewLeases(absl::Duration lease) {
  MutexLock lock(&mu_);
  lease_ = lease;
  for (const auto& [id, job] : jobs_) job.shim->Signal(kShimRenewSignal);
}

bool JobRunner::JobsFenceThemselves() const {
  MutexLock lock(&mu_);
  return lease_ > absl::ZeroDuration();
}

std::vector<v1::JobUpdate> JobRunner::StartedReports() const {
  MutexLock lock(&mu_);
  std::vector<v1::JobUpdate> started;
  for (const auto& [id, job] : jobs_) {
    started.push_back(MakeUpdate(id, job.attempt, v1::JobUpdate::KIND_STARTED, 0, "already running", job.log_dir));
  }
  return started;
}

int JobRunner::Detach() {
  MutexLock one_at_a_time(&shutdown_mu_);
  int left = 0;
  {
    MutexLock lock(&mu_);
    if (monitor_stop_) return 0;
    shutting_down_ = true;
    detached_ = true;
    // A launch under way finishes first, so that its job is left like the others.
    const SteadyTime give_up = std::chrono::steady_clock::now() + ToChrono(kShutdownSlack);
    while (!launching_.empty() && cv_.WaitUntil(&mu_, give_up)) {
    }
    left = static_cast<int>(jobs_.size());
    monitor_stop_ = true;
    cv_.SignalAll();
  }
  if (monitor_.joinable()) monitor_.join();
  if (preflight_worker_.joinable()) preflight_worker_.join();
  if (left > 0) log_->info("leaving {} job(s) running under their shims, for the next agent to adopt", left);
  return left;
}

void JobRunner::Shutdown(absl::Duration grace) {
  MutexLock one_at_a_time(&shutdown_mu_);
  {
    MutexLock lock(&mu_);
    if (monitor_stop_) return;
    shutting_down_ = true;
    shutdown_grace_ = grace;
    const std::string reason = absl::StrCat("the agent on ", options_.node_name, " is stopping");
    for (auto& [id, job] : jobs_) BeginKillLocked(job, grace, reason);
    cv_.SignalAll();
    const SteadyTime give_up = std::chrono::steady_clock::now() + ToChrono(grace + kShutdownSlack);
    while (!(jobs_.empty() && launching_.empty()) && cv_.WaitUntil(&mu_, give_up)) {
    }
    if (!jobs_.empty()) {
      std::vector<uint64_t> stuck;
      for (const auto& [id, job] : jobs_) stuck.push_back(id);
      log_->error("jobs {} still have processes after SIGKILL; leaving them behind", absl::StrJoin(stuck, ","));
    }
    monitor_stop_ = true;
    cv_.SignalAll();
  }
  // The monitor hands out the reports of its last round before it returns.
  if (monitor_.joinable()) monitor_.join();
  if (preflight_worker_.joinable()) preflight_worker_.join();
}

v1::JobUpdate JobRunner::NotRunning(uint64_t job_id, int attempt) const {
  return MakeUpdate(job_id, attempt, v1::JobUpdate::KIND_EXITED, 0, absl::StrCat("not running on ", options_.node_name),
                    "");
}

}  // namespace gpusched::agent
