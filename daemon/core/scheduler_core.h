#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/client_request.h"
#include "common/clock.h"
#include "common/net/network_topology_conf.h"
#include "daemon/core/array_backlog.h"
#include "daemon/core/backfill.h"
#include "daemon/core/cluster_state.h"
#include "daemon/core/effects.h"
#include "daemon/core/end_forecast.h"
#include "daemon/core/ever_fits.h"
#include "daemon/core/job_order.h"
#include "daemon/core/job_table.h"
#include "daemon/core/job_validator.h"
#include "daemon/core/node_liveness.h"
#include "daemon/core/pass_plan.h"
#include "daemon/core/pending_ranking.h"
#include "daemon/core/policy/placement_policy.h"
#include "daemon/core/power/headroom.h"
#include "daemon/core/power/pool_spec.h"
#include "daemon/core/probe_verdict.h"
#include "daemon/core/queue/dependencies.h"
#include "daemon/core/queue/fair_share.h"
#include "daemon/core/queue/limit_ledger.h"
#include "daemon/core/queue/priority.h"
#include "daemon/core/queue/queue_policy.h"
#include "daemon/core/queue/queue_usage.h"
#include "daemon/core/queue/runtime_history.h"
#include "gpusched/v1/agent.pb.h"

namespace gpusched::core {

struct CoreOptions {
  absl::Duration kill_grace = absl::Seconds(10);  // SIGTERM -> SIGKILL
  // Jobs may run as root (allow_root_jobs): submits as root are refused
  // without it, and launches say so (LaunchJob.root_allowed), so that the
  // agent holds to it by uid too.
  bool allow_root_jobs = false;
  int master_port_base = 20000;  // MASTER_PORT = base + id % span
  int master_port_span = 10000;  // stays below Linux's ephemeral range
  // How many pending jobs one pass looks at, as Slurm's default_queue_depth:
  // jobs further back keep their last reason until they come within reach.
  size_t queue_depth = 500;
  // The starvation bound, of a gang of four nodes and of a job that fits a
  // node (a gang's grows with its size: StarvationBound, end_forecast.h). A
  // gang that needs more than one node and has waited its bound goes ahead
  // of every job that has not (oldest first), and so gets the reservation,
  // which jobs smaller than a node may still use until it has waited twice
  // its bound; once the reserved job has waited its bound,
  // only hard time limits (not estimates) let other jobs use its GPUs. A job
  // that can start neither now nor by a reservation (nothing says when the
  // jobs it waits for end) lets the jobs that compete with it for nodes pass
  // it until it has waited its bound, then holds them back until it starts.
  // Zero: strict queue order (reservations come from hard time limits only,
  // and no job waits for a better placement while others pass it).
  absl::Duration head_blocks_after = absl::Hours(kDefaultHeadBlocksAfterHours);
  // How long the pending jobs' priorities hold before all are scored again
  // (pending_ranking.h): age and decaying usage move slowly, and scoring
  // 10,000 jobs on every submit is what made a submit cost milliseconds.
  // Inputs that change at once (a job ended, a node came, a new user)
  // score them again at the next pass.
  absl::Duration priority_refresh = absl::Seconds(30);
  // A node silent this long (no heartbeat, or its stream gone) takes no new
  // work; its jobs keep running, since its agent keeps them alive.
  absl::Duration node_not_responding_after = absl::Seconds(30);
  // Silent this long, it is DOWN: its gangs are stopped everywhere and end
  // NODE_FAIL, so that no half-gang holds GPUs on the other nodes.
  absl::Duration node_down_after = absl::Minutes(2);
  SpecLimits limits;
  SpecDefaults defaults;
  // Which PlacementPolicy decides where gangs go (policy/placement_policy.h);
  // an unknown name falls back to the default, so validate it first.
  std::string placement_policy = kDefaultPlacementPolicy;
  // How shares of GPUs pick their GPUs (policy/share_packing.h).
  SharePacking share_packing = SharePacking::kBestFit;
  // The cluster network as the operator wrote it (Slurm topology.conf
  // style): where it names a node, it wins over the node's own labels.
  std::shared_ptr<const NetworkTopologyConf> network;
  // Queues, their limits and preemption, and how pending jobs are ranked.
  // Compiled by the core; one that fails to compile falls back to the
  // default, so check it first (QueuePolicy::Compile).
  QueuePolicy queues = QueuePolicy::Default();
  // The share of a multi-GPU job's run time spent in communication that
  // compute does not hide: what a worse placement costs it, when a job that
  // says nothing (--topology prefer) decides between starting now spread
  // out and waiting for a better placement (wait_or_spread.h). 0: always
  // the best free now. The simulator's --comm-share sets it too.
  double spread_comm_share = 0.1;
  // How many wait-or-spread choices one pass weighs (each plans a
  // reservation): past that, jobs start where they fit, so that a pass over
  // thousands of multi-GPU jobs stays bounded.
  int spread_choices_per_pass = 8;
  // How link calibrations and gang preflights are judged.
  ProbeOptions probe;
  // Elastic node pools ([[pool]]): their nodes are known before they boot,
  // and the pass resumes and suspends them (power/boot_planner.h,
  // power/suspend_planner.h). Checked by daemon/config/pool_settings.h.
  std::vector<PoolSpec> pools;
};

struct SubmitOutcome {
  uint64_t job_id = 0;     // a job array's: its first task, which names it
  bool duplicate = false;  // the request id matched an earlier submit
};

// The scheduler's state machine: jobs, their gangs, the cluster's accounting,
// and the scheduling pass. Pure: every command takes the time from the
// injected clock and returns what must be persisted and sent as Effects.
// Single-threaded by design (the daemon's scheduler thread owns it).
class SchedulerCore {
 public:
  SchedulerCore(const Clock& clock, CoreOptions options);
  // Its parts refer to each other (the forecast to the history, the limits
  // to the queues): it stays where it was made.
  SchedulerCore(const SchedulerCore&) = delete;
  SchedulerCore& operator=(const SchedulerCore&) = delete;

  // Start-up: the state the store recovered.
  // `ended`: how the jobs that finished before ended (for dependencies).
  // The fair-share usage a previous run kept (Effects::fair_share), decayed
  // from then on as if the daemon had never stopped; before the first pass.
  void RestoreFairShare(const v1::FairShareUsage& usage);
  // How often a pass hands the fair-share usage over to be kept: a restart
  // forgets at most this much of it.
  static constexpr absl::Duration kFairSharePersistEvery = QueueUsage::kKeepEvery;
  // The same at once, as of the last pass (a daemon that is stopping).
  void KeepFairShareNow(Effects& fx);
  void Restore(std::vector<v1::Job> unfinished, const std::vector<v1::Node>& nodes, uint64_t max_job_id,
               const std::vector<ClientRequest>& client_requests,
               const std::vector<std::pair<uint64_t, v1::JobState>>& ended = {});

  absl::StatusOr<SubmitOutcome> Submit(v1::JobSpec spec, const std::string& client_request_id, Effects& fx);
  // A job array: one task per index of `array` (Slurm's --array syntax,
  // common/job_array.h), each a job with `spec`, with consecutive ids. All
  // or nothing: a bad spec or array submits no task. Only the first task is
  // made a job at once; the array's record (Effects::arrays) stands for the
  // others until a pass gets to them (array_backlog.h).
  absl::StatusOr<SubmitOutcome> SubmitArray(v1::JobSpec spec, absl::string_view array,
                                            const std::string& client_request_id, Effects& fx);
  // Start-up, after Restore: the arrays whose tasks were not all made jobs.
  // DATA_LOSS naming the array when a record does not read back.
  absl::Status RestoreArrays(std::vector<JobArrayRecord> records);
  // NotFound when the job is not active (unknown, or finished and evicted).
  absl::StatusOr<v1::Job> Cancel(uint64_t job_id, const std::string& reason, Effects& fx);
  // Cancel, Hold or Release every unfinished task of the job array
  // `array_id` names; the first task it changed, as it is then. NotFound
  // when no task is left; the first task's error when none could be
  // changed (Hold: none is pending).
  absl::StatusOr<v1::Job> CancelArray(uint64_t array_id, const std::string& reason, Effects& fx);
  absl::StatusOr<v1::Job> HoldArray(uint64_t array_id, Effects& fx);
  absl::StatusOr<v1::Job> ReleaseArray(uint64_t array_id, Effects& fx);
  // Keeps a pending job from starting, or lets it again. NotFound when it is
  // not active, FailedPrecondition when it is no longer pending.
  absl::StatusOr<v1::Job> Hold(uint64_t job_id, Effects& fx);
  absl::StatusOr<v1::Job> Release(uint64_t job_id, Effects& fx);

  // An operator stops new work from going to a node (running jobs finish),
  // or lets it again. NotFound for a node that never registered; a drain
  // needs a reason, which `gpusched nodes` shows until the node is resumed.
  absl::StatusOr<v1::Node> DrainNode(const std::string& node, const std::string& reason, Effects& fx);
  absl::StatusOr<v1::Node> ResumeNode(const std::string& node, Effects& fx);
  // Asks the node's agent to calibrate its links and keeps new work away
  // until the result is in. NotFound for an unknown node; FailedPrecondition
  // when it is not up or runs jobs (their traffic would skew the figures).
  absl::StatusOr<v1::Node> ProbeNode(const std::string& node, Effects& fx);
  // A link calibration's result: placement uses its figures from now on, and
  // the node is drained when it falls short (probe_verdict.h), or the
  // probe's own drain is lifted when it passes. Judged once (Judged).
  void NodeProbed(const std::string& node, const v1::NodeProbe& probe, Effects& fx);
  // A spot interruption (scheduler_core_spot.cc): the node is taken back
  // `notice` from now. It is drained; every gang with a part there is
  // stopped at once, SIGTERM telling it the deadline (KillJob's
  // notice_deadline) and SIGKILL shortly before it, and goes back to the
  // queue by its node-failure rules (JobSpec.requeue, the queue's
  // requeue_on_node_fail). At the deadline (Tick) a pool node powers down,
  // through its pool's suspend program where it has one, and its pool may
  // resume another for the jobs that wait. A second notice can only bring
  // the deadline forward. NotFound for an unknown node, FailedPrecondition
  // for one powered down or powering down; a booting node is taken back at
  // once.
  absl::StatusOr<v1::Node> InterruptNode(const std::string& node, absl::Duration notice, const std::string& reason,
                                         Effects& fx);
  static constexpr absl::Duration kMaxInterruptNotice = absl::Hours(1);

  void AgentRegistered(const v1::RegisterNode& registration, Effects& fx, v1::RegisterAck& ack);
  // False when the node is DOWN (its gangs were given up on) or unknown: its
  // agent must register again, which reconciles the jobs it still runs.
  bool AgentHeartbeat(const std::string& node, Effects& fx);
  void AgentDisconnected(const std::string& node, Effects& fx);
  void JobUpdate(const std::string& node, const v1::JobUpdate& update, Effects& fx);

  // Time limits and node liveness; boots past their pool's resume_timeout.
  void Tick(Effects& fx);
  // A pool's program (Effects::power_requests) ended: `outcome` OK when it
  // exited 0, else why not (exit status, signal, timeout). A failed resume
  // puts its nodes back to POWERED_DOWN with the reason (their jobs are
  // placed again); a resume that succeeded still waits for the agents to
  // register. A suspend that succeeded powers the nodes down; one that
  // failed leaves them NOT_RESPONDING until their agents are heard again.
  void PowerProgramEnded(const PowerRequest& request, const absl::Status& outcome, Effects& fx);
  // One scheduling pass: ranks the pending jobs, plans (pass_planner.h)
  // and applies the plan: starts what can start, stops what a preemption
  // stops, and tells every waiting job why it waits.
  void Schedule(Effects& fx);
  // The plan the next pass would apply, without applying it: once the
  // arrays' tasks it would look at are jobs (MakeArrayTasks).
  PassPlan PlanPass();
  // The first step of a pass: each array that is not held gets as many
  // tasks made jobs as the pass could look at: queue_depth pending, or for
  // an array with a limit on tasks at once, that many.
  void MakeArrayTasks(Effects& fx);

  // Active jobs only (pending, starting, running); nullptr otherwise. For
  // a task its array's record still stands for: the record's prototype,
  // which has the spec and state the task has (not its id or index).
  const v1::Job* FindActive(uint64_t job_id) const;
  // An active task of the job array `array_id` names, or nullptr.
  const v1::Job* FindActiveArrayTask(uint64_t array_id) const;
  std::vector<v1::Node> Nodes() const;
  // Up to `limit` nodes in name order, from the first named after `after`.
  std::vector<v1::Node> NodesAfter(const std::string& after, size_t limit) const;
  std::optional<v1::Node> FindNode(const std::string& name) const;
  // Each [[pool]] as it stands: nodes by state, GPUs paid and used, demand.
  std::vector<v1::PoolStatus> Pools() const;
  const ClusterState& cluster() const { return cluster_; }
  // The pending jobs' priorities as of the last pass (never persisted):
  // what changed since the last call, for the daemon's readers; one job's.
  PendingRanking::ScoreUpdates TakePriorityUpdates() { return ranking_.TakeScoreUpdates(); }
  std::optional<PriorityScore> PriorityOf(uint64_t job_id) const { return ranking_.ScoreOf(job_id); }
  const QueuePolicy& queues() const { return options_.queues; }
  // A job that ended on its own after running `ran`: what jobs like it that
  // give no time limit are expected to take. The core learns from the jobs
  // it finishes; the daemon also feeds it the recent history at startup.
  void LearnRunTime(const v1::JobSpec& spec, absl::Duration ran) { runtime_history_.Record(spec, ran); }
  RuntimeEstimate EstimateRunTime(const v1::JobSpec& spec) const { return runtime_history_.Estimate(spec); }

 private:
  // The event of a gang that begins to stop reads "stopping: <why>"; the
  // job's reason is <why> (stopping_as says it stops). Rows stored before
  // had the prefix in the reason too: Restore takes it off.
  static constexpr absl::string_view kStoppingPrefix = "stopping: ";
  // How the reason of a gang stopped by a failed preflight begins (its
  // stop_cause is PREFLIGHT_FAILED); Restore reads it only from rows stored
  // before stop causes.
  static constexpr absl::string_view kPreflightFailedPrefix = "preflight failed on ";

  void Transition(ActiveJob& a, v1::JobState state, const std::string& reason, Effects& fx);
  void Touch(const ActiveJob& a, Effects& fx) { fx.jobs[a.job.id()] = a.job; }
  // A preemption tells the job when it must be gone (KillJob's
  // notice_deadline): `grace` until SIGKILL, the deadline a little later.
  struct StopNotice {
    absl::Duration grace;
    absl::Time deadline;
  };
  void BeginStop(ActiveJob& a, v1::JobState final_state, const std::string& reason, Effects& fx,
                 std::optional<StopNotice> notice = std::nullopt);
  // SIGTERM, the configured grace (or the notice's), SIGKILL for `attempt` of the job.
  v1::DaemonMessage KillMessage(uint64_t job_id, int32_t attempt, const std::string& reason,
                                std::optional<StopNotice> notice = std::nullopt) const;
  // `stop_as` is the end state if this exit is the first sign of trouble.
  void NodeExited(ActiveJob& a, const std::string& node, int exit_code, const std::string& why, v1::JobState stop_as,
                  Effects& fx);
  void Finish(ActiveJob& a, Effects& fx);  // releases and forgets the job, or requeues it
  // Ends a job that never started (cancelled, or a dependency never met).
  v1::Job EndPending(ActiveJob& a, v1::JobState state, const std::string& reason, Effects& fx);
  // Active jobs' current state, finished jobs' final one; nullopt: no such job.
  std::optional<v1::JobState> StateOf(uint64_t job_id) const;
  absl::StatusOr<ActiveJob*> PendingJob(uint64_t job_id);
  // Preempted or node-failed, and its queue and attempt count allow another go.
  bool ShouldRequeue(const ActiveJob& a) const;
  // A gang stopped because a node failed its preflight before any part of it
  // started: back to the queue whatever its requeue setting.
  static bool StoppedByPreflightBeforeStart(const ActiveJob& a);
  void Requeue(ActiveJob& a, Effects& fx);
  std::vector<uint64_t> ActiveArrayTasks(uint64_t array_id) const;
  absl::StatusOr<v1::Job> ForEachTask(uint64_t array_id, const std::function<absl::StatusOr<v1::Job>(uint64_t)>& act);
  // HoldArray and ReleaseArray: the tasks made jobs, and the array's record
  // for those still to make.
  absl::StatusOr<v1::Job> HoldOrReleaseArray(uint64_t array_id, bool hold, Effects& fx);
  // The earlier submit of the same user that a retried request id names, or
  // nullopt.
  std::optional<SubmitOutcome> Retried(const v1::JobSpec& spec, const std::string& client_request_id) const;
  // Checks a spec and fills in its defaults, as for a submit.
  absl::Status Admit(v1::JobSpec& spec) const;
  // Queues an admitted spec as a new pending job; its id.
  uint64_t Enqueue(v1::JobSpec spec, const std::string& client_request_id, Effects& fx);
  // Queues a new pending job made ready (id, spec, submit time, held).
  void EnqueueJob(v1::Job job, Effects& fx);
  // Makes the next `count` tasks of an array in the backlog jobs, and hands
  // its record over to be kept; the entry goes once every task is a job.
  void MakeTasks(ArrayBacklog::Entry& entry, int32_t count, Effects& fx);
  // Before a command on one job: the tasks of its array up to it are made
  // jobs, when the array's record still stands for it.
  void MakeTasksThrough(uint64_t job_id, Effects& fx);

  // Hands the fair-share usage over to be kept (Effects::fair_share), at
  // most every kFairSharePersistEvery.
  void KeepFairShare(Effects& fx);
  // Ranks the pending jobs (pending_ranking.h).
  Ranked RankPending();
  // Plans a pass over them; `keep_starts`: the plan's starts stay taken in
  // the cluster, for Apply.
  PassPlan PlanFor(const Ranked& ranked, bool keep_starts);
  // Applies a plan made with keep_starts over `ranked`.
  void Apply(const PassPlan& plan, const Ranked& ranked, Effects& fx);
  bool PreemptionInFlight(uint64_t job_id) const;
  GangRequest RequestForSpec(const v1::JobSpec& spec) const;
  // A node (re)registered or restored: its network tiers from the operator's
  // topology file, and the queues that may use it.
  void UpsertNode(const v1::NodeInfo& info);
  // Launches `a` on the allocation it holds in the cluster already.
  void Start(ActiveJob& a, Effects& fx);
  v1::DaemonMessage LaunchMessage(const v1::Job& job, const v1::NodeAllocation& part) const;
  v1::Node NodeView(const NodeSlot& slot) const;
  void WriteNode(const std::string& name, Effects& fx) const;
  // A job started or ended on the node: its usage changed, not its row.
  void NoteUsage(const std::string& name, Effects& fx) const;
  void SetWaitReason(ActiveJob& a, v1::WaitCause cause, const std::string& reason, Effects& fx);
  void ClearEstimatedStart(ActiveJob& a, Effects& fx);
  void CheckNodeLiveness(absl::Time now, Effects& fx);
  // Elastic pools (scheduler_core_power.cc). Their nodes that never
  // registered are added as the pool's shape, powered down.
  void AdoptPoolNodes();
  // After a pass: resumes what the jobs it left waiting need, suspends what
  // has idled long enough, and tells the jobs that wait for a boot.
  void PlanPower(const PassPlan& plan, const Ranked& ranked, Effects& fx);
  void CheckBoots(absl::Time now, Effects& fx);
  // Spot nodes whose interruption deadline passed are taken back.
  void CheckReclaims(absl::Time now, Effects& fx);
  // Powers `nodes` of pool `p` down with its suspend program.
  void RequestSuspend(int p, const std::vector<std::string>& nodes,
                      const std::function<std::string(const std::string&)>& why, Effects& fx);
  void SetPowerState(const std::string& node, v1::NodeState state, const std::string& reason, Effects& fx);
  // Notes that `node` goes from its current state to `to` (Effects::power_transitions).
  void NotePowerTransition(const std::string& node, v1::NodeState to, const std::string& reason, Effects& fx) const;
  const PoolSpec* PoolOf(const std::string& node) const;
  // "waiting for gpu[017-020] to boot (resume started 40 s ago, timeout 10:00)"
  std::string BootWaitReason(const std::vector<std::string>& nodes) const;
  void FailJobsOn(const std::string& node, const std::string& why, Effects& fx);
  // Drains the node with `reason` as `kind` (LINK_PROBE or PREFLIGHT), or
  // lifts the probe's or a preflight's drain (reason empty); anyone else's
  // drain (an operator's, a spot interruption's) is left as it is.
  void SetProbeDrain(const std::string& node, v1::DrainKind kind, const std::string& reason, Effects& fx);
  // Whether `probe` is the calibration the node has, already judged. A
  // calibration is judged once: the same one again (an agent's registration
  // carries its last one) changes nothing, so that it neither undoes an
  // operator's resume nor lifts a later preflight's drain.
  static bool Judged(const NodeSlot& slot, const v1::NodeProbe& probe);
  // Drains the known node when its calibration falls short, or lifts the
  // probe's drain when it passes.
  void JudgeCalibration(const std::string& node, Effects& fx);

  GangRequest RequestFor(const v1::Job& job) const;
  // A strict gang over several nodes under a policy blind to links is
  // refused: it would otherwise be split as if it had said prefer.
  absl::Status CheckStrictHonoured(const v1::JobSpec& spec) const;
  // The node as registered, with the network tiers the operator's topology
  // file gives it.
  v1::NodeInfo WithConfiguredNetwork(v1::NodeInfo info) const;

  const Clock& clock_;
  CoreOptions options_;
  std::unique_ptr<PlacementPolicy> policy_;
  ClusterState cluster_;
  // Admit's "could it ever fit" answers; Admit is const, and the cache is
  // not part of the core's state.
  mutable EverFitsCache ever_fits_;
  JobTable jobs_;
  ArrayBacklog arrays_;  // the array tasks not made jobs yet
  NodeLiveness liveness_;
  QueueUsage usage_;  // fair share, and what placed jobs hold against limits
  RuntimeHistory runtime_history_;
  EndForecast forecast_;
  PendingRanking ranking_;
  std::map<uint64_t, std::vector<uint64_t>> preempting_;  // job -> gangs stopped for it
  // Elastic pools: each pool node's pool (index into options_.pools), since
  // when a node is in its power state, since when an up pool node has had no
  // job, and each pool's resumes and suspends of the last minute (rates).
  std::map<std::string, int> pool_of_;
  std::map<std::string, absl::Time> power_since_;
  std::map<std::string, absl::Time> idle_since_;
  std::vector<std::vector<absl::Time>> resumed_, suspended_;
  // The request each node's current power state came from (PowerRequest::id).
  std::map<std::string, uint64_t> power_request_of_;
  uint64_t next_power_request_ = 1;
  // The GPUs jobs waited for more nodes for, pass by pass (headroom).
  DemandWindow demand_;
  // Nodes restored POWERING_DOWN: their suspend runs again (its outcome was lost).
  std::set<std::string> suspend_again_;
  // The GPUs in use on each pool's nodes, pass by pass (target_utilization).
  std::vector<DemandWindow> in_use_;
  // Nodes of spot pools (NodeSlot::spot), elastic or not.
  std::set<std::string> spot_nodes_;
  // Spot-interrupted nodes: when each is taken back (Node.reclaim_at).
  std::map<std::string, absl::Time> reclaim_at_;
};

}  // namespace gpusched::core
