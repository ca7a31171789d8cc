#include "daemon/core/scheduler_core.h"

#include <algorithm>
#include <limits>

#include "absl/algorithm/container.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/allocation_ranks.h"
#include "common/display_text.h"
#include "common/gpu_fraction.h"
#include "common/job_array.h"
#include "common/job_states.h"
#include "common/proto_time.h"
#include "common/share_mode_name.h"
#include "common/time_limit.h"
#include "daemon/core/container_fit.h"
#include "daemon/core/ever_fits.h"
#include "daemon/core/pass_planner.h"
#include "daemon/core/share_mix.h"

namespace gpusched::core {
SchedulerCore::SchedulerCore(const Clock& clock, CoreOptions options)
    : clock_(clock),
      options_(std::move(options)),
      liveness_(options_.node_not_responding_after, options_.node_down_after),
      usage_(options_.queues),
      forecast_(clock_, options_.kill_grace, options_.head_blocks_after, runtime_history_),
      ranking_(options_.priority_refresh) {
  auto policy = MakePlacementPolicy(options_.placement_policy);
  policy_ = policy.ok() ? *std::move(policy) : *MakePlacementPolicy(kDefaultPlacementPolicy);
  // Best fit and spread weigh no mix; FGD's is made again each pass (Schedule).
  policy_->set_share_weighing(ShareWeighing::Of(options_.share_packing, {}));
  if (!options_.queues.Compile().ok()) {
    options_.queues = QueuePolicy::Default();
    options_.queues.Compile().IgnoreError();
  }
  for (const PoolSpec& pool : options_.pools) {
    if (pool.pool_class == PoolClass::kSpot) spot_nodes_.insert(pool.nodes.begin(), pool.nodes.end());
  }
  AdoptPoolNodes();
}

GangRequest SchedulerCore::RequestForSpec(const v1::JobSpec& spec) const {
  GangRequest req = ToGangRequest(spec);
  const int queue = options_.queues.IndexOf(spec.queue());
  // A queue that is gone from the settings (daemon restarted with others):
  // its jobs may still use any node rather than none.
  if (queue >= 0) req.queue_bit = uint64_t{1} << queue;
  if (const QueueSpec* q = options_.queues.Find(spec.queue()); q != nullptr && !q->spot) req.no_spot = true;
  return req;
}

void SchedulerCore::UpsertNode(const v1::NodeInfo& info) {
  cluster_.UpsertNode(WithConfiguredNetwork(info));
  const NodeSlot* slot = cluster_.Find(info.name());
  // Queue membership reads the node's labels as registered.
  cluster_.SetAccess(info.name(), options_.queues.NodeMask(slot->info), spot_nodes_.contains(info.name()));
}

GangRequest SchedulerCore::RequestFor(const v1::Job& job) const {
  GangRequest req = RequestForSpec(job.spec());
  // A strict request that has waited its bound takes what is best now.
  if (req.topology == v1::TOPOLOGY_MODE_STRICT && job.spec().topology_wait_s() > 0 &&
      clock_.Now() - FromProtoTime(job.submit_time()) >= absl::Seconds(job.spec().topology_wait_s())) {
    req.topology = v1::TOPOLOGY_MODE_PREFER;
  }
  return req;
}

void SchedulerCore::Restore(std::vector<v1::Job> unfinished, const std::vector<v1::Node>& nodes, uint64_t max_job_id,
                            const std::vector<ClientRequest>& client_requests,
                            const std::vector<std::pair<uint64_t, v1::JobState>>& ended) {
  for (const auto& [id, state] : ended) jobs_.RestoreEnded(id, state);
  for (const v1::Node& node : nodes) {
    UpsertNode(node.info());
    // Rows stored before drains had a kind say it only in their text.
    cluster_.SetDrain(
        node.info().name(), node.drain_reason(),
        node.drain_kind() != v1::DRAIN_KIND_NONE ? node.drain_kind() : LegacyDrainKind(node.drain_reason()));
    if (node.has_reclaim_at()) reclaim_at_[node.info().name()] = FromProtoTime(node.reclaim_at());
    if (pool_of_.contains(node.info().name()) && IsPowerState(node.state())) {
      // Picks up where it was: a boot keeps its timeout running, and a
      // suspend whose outcome was lost with the daemon runs again.
      cluster_.SetState(node.info().name(), node.state(), node.reason());
      power_since_[node.info().name()] = node.has_power_since() ? FromProtoTime(node.power_since()) : clock_.Now();
      if (node.state() == v1::NODE_STATE_POWERING_DOWN) suspend_again_.insert(node.info().name());
      continue;
    }
    if (node.state() == v1::NODE_STATE_POWERED_DOWN || node.state() == v1::NODE_STATE_POWERING_DOWN) {
      // Powered down by a pool that is gone from the settings: still off,
      // not failed. Its agent brings it back up if someone starts it.
      cluster_.SetState(node.info().name(), v1::NODE_STATE_POWERED_DOWN,
                        "powered down, and in no [[pool]] now: start it by hand, its agent brings it back");
      continue;
    }
    // Nobody is connected yet: every node gets the full grace to come back.
    cluster_.SetState(node.info().name(), v1::NODE_STATE_NOT_RESPONDING,
                      "waiting for its agent to reconnect after a daemon restart");
    liveness_.Heard(node.info().name(), clock_.Now());
  }
  for (v1::Job& job : unfinished) {
    if (job.has_array()) jobs_.NoteArray(job.array().array_id(), job.array().count());
    if (job.stopping_as() != v1::JOB_STATE_UNSPECIFIED && absl::StartsWith(job.reason(), kStoppingPrefix)) {
      // Stored before stop causes: the reason carried both.
      job.set_reason(job.reason().substr(kStoppingPrefix.size()));
      if (job.stop_cause() == v1::STOP_CAUSE_UNSPECIFIED && absl::StartsWith(job.reason(), kPreflightFailedPrefix)) {
        job.set_stop_cause(v1::STOP_CAUSE_PREFLIGHT_FAILED);
      }
    }
    ActiveJob a{std::move(job), {}};
    const uint64_t id = a.job.id();
    if (a.job.state() != v1::JOB_STATE_PENDING) {
      // Placed before the restart: its GPUs stay taken until it ends.
      cluster_.Allocate(id, a.job.allocation()).IgnoreError();
      usage_.Charge(a.job, +1);
      for (const auto& part : a.job.allocation().nodes()) {
        a.progress[part.node()].started = a.job.state() == v1::JOB_STATE_RUNNING;
      }
    }
    jobs_.Add(std::move(a));
  }
  jobs_.ContinueAfter(max_job_id);
  for (const ClientRequest& request : client_requests) {
    jobs_.RememberRequest(request.user, request.request_id, request.job_id);
  }
}

absl::Status SchedulerCore::CheckStrictHonoured(const v1::JobSpec& spec) const {
  if (spec.topology() != v1::TOPOLOGY_MODE_STRICT || policy_->weighs_links()) return absl::OkStatus();
  const v1::Resources& r = spec.resources();
  if (r.nodes() <= 1 && r.gpus() <= cluster_.LargestNodeGpus()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "topology: strict asks for the best links a gang over several nodes can get, but this daemon's placement "
      "policy \"",
      policy_->name(),
      "\" does not weigh links; submit with --topology prefer or any (or run the "
      "daemon with --placement-policy topology)"));
}

absl::Status SchedulerCore::Admit(v1::JobSpec& spec) const {
  if (absl::Status s = ValidateAndNormalize(spec, options_.limits, options_.defaults); !s.ok()) return s;
  if (absl::Status s = options_.queues.Apply(spec); !s.ok()) return s;
  const QueueSpec& queue = *options_.queues.Find(spec.queue());
  // Counted as the limits count: a share or MIG instance as its part of a GPU.
  const int64_t milli = HeldGpuMilli(spec.resources());
  for (const auto& [limit, what] : {std::pair{queue.max_gpus, "in all"}, {queue.max_gpus_per_user, "per user"}}) {
    if (limit > 0 && milli > limit * 1000) {
      return absl::InvalidArgumentError(absl::StrCat("resources.gpus: ", milli / 1000.0, " GPUs, but queue \"",
                                                     queue.name, "\" allows at most ", limit, " ", what));
    }
  }
  const GangRequest request = RequestForSpec(spec);
  if (absl::Status s = ever_fits_.Check(cluster_, request); !s.ok()) return s;
  if (spec.has_container()) {
    if (absl::Status s = CheckContainerEverRuns(cluster_, request, spec.container()); !s.ok()) return s;
  }
  if (absl::Status s = CheckStrictHonoured(spec); !s.ok()) return s;
  // As in Slurm, a dependency on a job array's id waits for every task.
  google::protobuf::RepeatedPtrField<v1::Dependency> expanded;
  for (const v1::Dependency& d : spec.dependencies()) {
    for (int32_t k = 0; k < jobs_.TasksOf(d.job_id()); ++k) {
      v1::Dependency* task = expanded.Add();
      task->set_kind(d.kind());
      task->set_job_id(d.job_id() + k);
    }
  }
  spec.mutable_dependencies()->Swap(&expanded);
  return ValidateDependencies(spec, jobs_.next_id(), [this](uint64_t id) { return StateOf(id); });
}

uint64_t SchedulerCore::Enqueue(v1::JobSpec spec, const std::string& client_request_id, Effects& fx) {
  v1::Job job;
  job.set_id(jobs_.TakeId());
  *job.mutable_spec() = std::move(spec);
  *job.mutable_submit_time() = ToProtoTime(clock_.Now());
  job.set_client_request_id(client_request_id);
  job.set_held(job.spec().hold());
  const uint64_t id = job.id();
  EnqueueJob(std::move(job), fx);
  return id;
}

void SchedulerCore::EnqueueJob(v1::Job job, Effects& fx) {
  ActiveJob a;
  a.job = std::move(job);
  const uint64_t id = a.job.id();
  Transition(a, v1::JOB_STATE_PENDING, "submitted", fx);
  a.job.set_reason(std::string(kNotYetConsidered));
  Touch(a, fx);
  jobs_.RememberRequest(a.job.spec().user(), a.job.client_request_id(), id);
  jobs_.Add(std::move(a));
}

std::optional<SubmitOutcome> SchedulerCore::Retried(const v1::JobSpec& spec,
                                                    const std::string& client_request_id) const {
  std::optional<uint64_t> id = jobs_.RequestedAs(spec.user(), client_request_id);
  if (!id.has_value()) return std::nullopt;
  return SubmitOutcome{*id, true};
}

absl::StatusOr<SubmitOutcome> SchedulerCore::Submit(v1::JobSpec spec, const std::string& client_request_id,
                                                    Effects& fx) {
  if (absl::Status s = CheckClientRequestId(client_request_id); !s.ok()) return s;
  if (auto earlier = Retried(spec, client_request_id)) return *earlier;
  if (absl::Status s = Admit(spec); !s.ok()) return s;
  return SubmitOutcome{Enqueue(std::move(spec), client_request_id, fx), false};
}

absl::StatusOr<v1::Job> SchedulerCore::Cancel(uint64_t job_id, const std::string& reason, Effects& fx) {
  if (absl::Status s = CheckDisplayText("reason", reason, kMaxReasonBytes); !s.ok()) return s;
  MakeTasksThrough(job_id, fx);
  ActiveJob* found = jobs_.Find(job_id);
  if (found == nullptr) return absl::NotFoundError(absl::StrCat("job ", job_id, " is not active"));
  ActiveJob& a = *found;
  const std::string why = reason.empty() ? "cancelled by user" : absl::StrCat("cancelled: ", reason);
  if (a.job.state() == v1::JOB_STATE_PENDING) return EndPending(a, v1::JOB_STATE_CANCELLED, why, fx);
  if (a.job.stopping_as() == v1::JOB_STATE_UNSPECIFIED) {
    BeginStop(a, v1::JOB_STATE_CANCELLED, why, fx);
  } else if (a.job.stopping_as() == v1::JOB_STATE_PREEMPTED || a.job.stopping_as() == v1::JOB_STATE_NODE_FAIL) {
    // Already told to stop, and bound back to the queue: the cancel wins, so
    // it ends once its processes are gone.
    a.job.set_stopping_as(v1::JOB_STATE_CANCELLED);
    a.job.clear_stop_cause();
    a.job.set_reason(why);
    Touch(a, fx);
  }
  return a.job;
}

v1::Job SchedulerCore::EndPending(ActiveJob& a, v1::JobState state, const std::string& reason, Effects& fx) {
  const uint64_t id = a.job.id();
  preempting_.erase(id);
  *a.job.mutable_end_time() = ToProtoTime(clock_.Now());
  a.job.set_held(false);
  Transition(a, state, reason, fx);
  v1::Job done = a.job;
  jobs_.End(id, state);
  return done;
}

v1::NodeInfo SchedulerCore::WithConfiguredNetwork(v1::NodeInfo info) const {
  if (options_.network == nullptr) return info;
  std::optional<topology::NetworkLocation> located = options_.network->Locate(info.name());
  if (!located.has_value()) return info;
  v1::NetworkLocation* net = info.mutable_topology()->mutable_network();
  if (!located->rack.empty()) net->set_rack(located->rack);
  if (!located->leaf.empty()) net->set_leaf(located->leaf);
  if (!located->spine.empty()) net->set_spine(located->spine);
  if (!located->nvlink_domain.empty()) net->set_nvlink_domain(located->nvlink_domain);
  return info;
}

absl::StatusOr<v1::Node> SchedulerCore::DrainNode(const std::string& node, const std::string& reason, Effects& fx) {
  if (reason.empty()) return absl::InvalidArgumentError("reason: a drain needs a reason, shown until it is resumed");
  if (absl::Status s = CheckDisplayText("reason", reason, kMaxReasonBytes); !s.ok()) return s;
  if (!cluster_.SetDrain(node, reason, v1::DRAIN_KIND_OPERATOR)) {
    return absl::NotFoundError(absl::StrCat("no node ", node));
  }
  WriteNode(node, fx);
  return NodeView(*cluster_.Find(node));
}

absl::StatusOr<v1::Node> SchedulerCore::ResumeNode(const std::string& node, Effects& fx) {
  if (!cluster_.SetDrain(node, "", v1::DRAIN_KIND_NONE)) return absl::NotFoundError(absl::StrCat("no node ", node));
  WriteNode(node, fx);
  return NodeView(*cluster_.Find(node));
}

void SchedulerCore::AgentRegistered(const v1::RegisterNode& registration, Effects& fx, v1::RegisterAck& ack) {
  const std::string& name = registration.node().name();
  // The calibration it carries is judged once (Judged); without one (a
  // restarted agent) the node keeps the figures the daemon has.
  const NodeSlot* known = cluster_.Find(name);
  const bool new_calibration =
      registration.node().has_probe() && (known == nullptr || !Judged(*known, registration.node().probe()));
  v1::NodeInfo info = registration.node();
  if (!info.has_probe() && known != nullptr && known->info.has_probe()) *info.mutable_probe() = known->info.probe();
  const bool suspending = known != nullptr && known->state == v1::NODE_STATE_POWERING_DOWN;
  const bool was_powered_down = known != nullptr && IsPowerState(known->state);
  // A booting pool node is up only with all the GPUs its pool says it has:
  // an agent that started before the driver saw them would otherwise take
  // work it cannot run, and make the pool boot another node for it.
  const PoolSpec* pool = PoolOf(name);
  const bool short_of_gpus = known != nullptr && known->state == v1::NODE_STATE_POWERING_UP && pool != nullptr &&
                             info.gpus_size() < pool->shape.gpus_size();
  // Noted before UpsertNode, while the node is still in the state it leaves.
  if (short_of_gpus) {
    NotePowerTransition(name, v1::NODE_STATE_POWERING_UP,
                        absl::StrCat("its agent registered with ", info.gpus_size(), " of ", pool->shape.gpus_size(),
                                     " GPUs: not up until it has them all"),
                        fx);
  } else if (was_powered_down && !suspending) {
    NotePowerTransition(name, v1::NODE_STATE_UP, absl::StrCat("its agent registered with ", info.gpus_size(), " GPUs"),
                        fx);
  }
  UpsertNode(info);
  if (short_of_gpus) cluster_.SetState(name, v1::NODE_STATE_POWERING_UP, fx.power_transitions.back().reason);
  // A node being suspended stays so: its agent may reconnect before the
  // machine stops, and no job may go there meanwhile.
  if (!suspending && !short_of_gpus) {
    cluster_.SetState(name, v1::NODE_STATE_UP, "");
    power_since_.erase(name);
  }
  liveness_.Heard(name, clock_.Now());
  ack.set_node(name);
  if (new_calibration) JudgeCalibration(name, fx);
  if (registration.probe_pending()) {
    SetProbeDrain(name, v1::DRAIN_KIND_LINK_PROBE,
                  absl::StrCat(kProbeDrainPrefix, "measuring links (the agent calibrates them as it starts)"), fx);
  }

  std::set<uint64_t> reported;
  std::set<uint64_t> killed;
  for (int i = 0; i < registration.running_job_ids_size(); ++i) {
    const uint64_t id = registration.running_job_ids(i);
    const int attempt = i < registration.running_job_attempts_size() ? registration.running_job_attempts(i) : 0;
    const ActiveJob* a = jobs_.Find(id);
    // Not ours to run here (any more): unknown, placed elsewhere, given up
    // on, or an earlier attempt of a requeued job.
    auto part = a == nullptr ? nullptr : &a->progress;
    if (part == nullptr || !part->contains(name) || part->at(name).exited || a->job.attempt() != attempt) {
      ack.add_kill_job_ids(id);
      killed.insert(id);
    } else {
      reported.insert(id);
      // Being stopped when its agent went away: an agent that restarted and
      // kept the job never heard the kill, and the old one's grace died with it.
      if (a->job.stopping_as() != v1::JOB_STATE_UNSPECIFIED) {
        fx.agent_commands.push_back({name, KillMessage(id, attempt, a->job.reason())});
      }
    }
  }
  // Until the agent reports them gone, their processes may still run: no
  // new job (another attempt of the same gang, say) goes there.
  cluster_.SetUnconfirmedKills(name, killed);
  // The agent kills its jobs when it has heard nothing for this long; the
  // daemon gives a silent node's gangs up only at node_down_after, by which
  // time they are gone. The margin is for the kill itself and for timers.
  ack.set_fence_after_ms(absl::ToInt64Milliseconds(options_.node_down_after * 3 / 4));
  // Collected first: a lost gang part can finish its job, which forgets it.
  std::vector<uint64_t> here;
  for (const auto& [id, a] : jobs_.active()) {
    if (a.progress.contains(name)) here.push_back(id);
  }
  for (uint64_t id : here) {
    ActiveJob& a = jobs_.at(id);
    auto progress = a.progress.find(name);
    if (progress->second.exited || reported.contains(id)) continue;
    if (!progress->second.started) {
      // The launch may have been lost with the old connection; agents ignore
      // a launch they already have, so sending it again is safe.
      for (const auto& part : a.job.allocation().nodes()) {
        if (part.node() == name) fx.agent_commands.push_back({name, LaunchMessage(a.job, part)});
      }
    } else {
      NodeExited(a, name, -1, absl::StrCat("its processes on ", name, " were lost"), v1::JOB_STATE_NODE_FAIL, fx);
    }
  }
  WriteNode(name, fx);
}

bool SchedulerCore::AgentHeartbeat(const std::string& node, Effects& fx) {
  // A heartbeat proves a live stream again. A DOWN node's gangs were given
  // up on: it comes back only by registering, which reconciles its jobs.
  const NodeSlot* slot = cluster_.Find(node);
  if (slot == nullptr || slot->state == v1::NODE_STATE_DOWN) return false;
  liveness_.Heard(node, clock_.Now());
  if (slot->state == v1::NODE_STATE_NOT_RESPONDING) {
    cluster_.SetState(node, v1::NODE_STATE_UP, "");
    WriteNode(node, fx);
  }
  return true;
}

void SchedulerCore::AgentDisconnected(const std::string& node, Effects& fx) {
  const NodeSlot* slot = cluster_.Find(node);
  // A pool node's agent goes away as it powers down; one that boots has none yet.
  if (slot == nullptr || slot->state == v1::NODE_STATE_DOWN || IsPowerState(slot->state)) return;
  cluster_.SetState(node, v1::NODE_STATE_NOT_RESPONDING, "agent disconnected");
  WriteNode(node, fx);
}

void SchedulerCore::CheckNodeLiveness(absl::Time now, Effects& fx) {
  const NodeLiveness::Verdicts verdicts = liveness_.Judge(cluster_, now);
  for (const auto& [name, silent] : verdicts.not_responding) {
    cluster_.SetState(name, v1::NODE_STATE_NOT_RESPONDING,
                      absl::StrCat("no heartbeat for ", absl::FormatDuration(absl::Trunc(silent, absl::Seconds(1)))));
    WriteNode(name, fx);
  }
  for (const auto& [name, silent] : verdicts.down) {
    const std::string why = absl::StrCat("node ", name, " is down: silent for ",
                                         absl::FormatDuration(absl::Trunc(silent, absl::Seconds(1))));
    cluster_.SetState(name, v1::NODE_STATE_DOWN, why);
    FailJobsOn(name, why, fx);
    WriteNode(name, fx);
  }
}

void SchedulerCore::FailJobsOn(const std::string& node, const std::string& why, Effects& fx) {
  std::vector<uint64_t> here;
  for (uint64_t id : jobs_.placed()) {
    const ActiveJob& a = jobs_.at(id);
    auto progress = a.progress.find(node);
    if (progress != a.progress.end() && !progress->second.exited) here.push_back(id);
  }
  // Its part is given up on; the rest of each gang is stopped and the job
  // ends NODE_FAIL once those nodes confirm.
  for (uint64_t id : here) NodeExited(jobs_.at(id), node, -1, why, v1::JOB_STATE_NODE_FAIL, fx);
}

void SchedulerCore::JobUpdate(const std::string& node, const v1::JobUpdate& update, Effects& fx) {
  if (update.kind() != v1::JobUpdate::KIND_STARTED && cluster_.ConfirmKilled(node, update.job_id())) {
    WriteNode(node, fx);
  }
  ActiveJob* found = jobs_.Find(update.job_id());
  if (found == nullptr || update.attempt() < found->job.attempt()) {
    // Finished already (a repeated report), or an attempt given up on. One
    // that only now started (a preflight that outlasted a partition) runs on
    // GPUs that are no longer its own: stop it.
    if (update.kind() == v1::JobUpdate::KIND_STARTED) {
      fx.agent_commands.push_back(
          {node, KillMessage(update.job_id(), update.attempt(),
                             absl::StrCat("attempt ", update.attempt() + 1, " of job ", update.job_id(),
                                          " was given up on; it started too late"))});
    }
    return;
  }
  ActiveJob& a = *found;
  if (update.attempt() != a.job.attempt()) return;  // from the future: a confused agent
  auto progress = a.progress.find(node);
  if (progress == a.progress.end() || progress->second.exited) return;
  // What the agent says goes into reasons every user sees.
  const std::string message = ToDisplayText(update.message(), kMaxReasonBytes);

  switch (update.kind()) {
    case v1::JobUpdate::KIND_STARTED: {
      progress->second.started = true;
      for (auto& part : *a.job.mutable_allocation()->mutable_nodes()) {
        if (part.node() != node) continue;
        part.set_log_dir(update.log_dir());
        part.set_preflight_busbw_gbps(update.preflight_busbw_gbps());
      }
      bool all_started = true;
      for (const auto& [n, p] : a.progress) all_started = all_started && p.started;
      if (all_started && a.job.state() == v1::JOB_STATE_STARTING) {
        *a.job.mutable_start_time() = ToProtoTime(clock_.Now());
        Transition(a, v1::JOB_STATE_RUNNING, absl::StrCat("running on ", a.progress.size(), " node(s)"), fx);
      } else {
        Touch(a, fx);
      }
      break;
    }
    case v1::JobUpdate::KIND_LAUNCH_FAILED: {
      // An earlier attempt still dying there is the node's business, not a
      // fault of the job: it goes back to the queue. So does a container
      // job that asked to be requeued (--requeue yes): its image may be out
      // of that node's reach, not missing.
      const v1::JobSpec& spec = a.job.spec();
      const bool requeue_asked = spec.has_container() && spec.has_requeue() && spec.requeue();
      NodeExited(a, node, -1, absl::StrCat("launch failed on ", node, ": ", message),
                 update.earlier_attempt_running() || requeue_asked ? v1::JOB_STATE_NODE_FAIL : v1::JOB_STATE_FAILED,
                 fx);
      // And the node gets no job until the agent says that attempt is gone:
      // placed there again at once, the job would only be refused again.
      if (update.earlier_attempt_running()) cluster_.AddUnconfirmedKill(node, update.job_id());
      break;
    }
    case v1::JobUpdate::KIND_PREFLIGHT_FAILED:
      // The node, not the job, is at fault: it takes no more work, and the
      // job goes back to the queue (ShouldRequeue) to be placed elsewhere.
      SetProbeDrain(node, v1::DRAIN_KIND_PREFLIGHT,
                    absl::StrCat(kPreflightDrainPrefix, "job ", a.job.id(), ": ", message), fx);
      for (auto& part : *a.job.mutable_allocation()->mutable_nodes()) {
        if (part.node() == node) part.set_preflight_busbw_gbps(update.preflight_busbw_gbps());
      }
      if (a.job.stopping_as() == v1::JOB_STATE_UNSPECIFIED) a.job.set_stop_cause(v1::STOP_CAUSE_PREFLIGHT_FAILED);
      NodeExited(a, node, -1, absl::StrCat(kPreflightFailedPrefix, node, ": ", message), v1::JOB_STATE_NODE_FAIL, fx);
      break;
    case v1::JobUpdate::KIND_EXITED:
      if (update.fenced()) {
        // Its agent lost the daemon for the lease and killed it: the node
        // failed the job, as if it had gone down.
        NodeExited(a, node, -1, absl::StrCat("its processes on ", node, " were fenced: ", message),
                   v1::JOB_STATE_NODE_FAIL, fx);
        break;
      }
      NodeExited(
          a, node, update.exit_code(),
          update.exit_code() == 0 ? "" : absl::StrCat("a process on ", node, " exited with code ", update.exit_code()),
          v1::JOB_STATE_FAILED, fx);
      break;
    default: break;
  }
}

void SchedulerCore::NodeExited(ActiveJob& a, const std::string& node, int exit_code, const std::string& why,
                               v1::JobState stop_as, Effects& fx) {
  a.progress[node].exited = true;
  if (exit_code != 0 && a.job.exit_code() == 0) a.job.set_exit_code(exit_code);
  if (exit_code != 0 && a.job.stopping_as() == v1::JOB_STATE_UNSPECIFIED) {
    // One rank down means the gang cannot go on: stop the others too.
    BeginStop(a, stop_as, why, fx);
  }
  for (const auto& [n, p] : a.progress) {
    if (!p.exited) {
      Touch(a, fx);
      return;
    }
  }
  Finish(a, fx);
}

void SchedulerCore::BeginStop(ActiveJob& a, v1::JobState final_state, const std::string& reason, Effects& fx,
                              std::optional<StopNotice> notice) {
  a.job.set_stopping_as(final_state);
  for (const auto& [node, p] : a.progress) {
    if (!p.exited) fx.agent_commands.push_back({node, KillMessage(a.job.id(), a.job.attempt(), reason, notice)});
  }
  Transition(a, a.job.state(), absl::StrCat(kStoppingPrefix, reason), fx);
  a.job.set_reason(reason);  // the event says it stops; the job's stopping_as does
  Touch(a, fx);
}

v1::DaemonMessage SchedulerCore::KillMessage(uint64_t job_id, int32_t attempt, const std::string& reason,
                                             std::optional<StopNotice> notice) const {
  v1::DaemonMessage msg;
  v1::KillJob& kill = *msg.mutable_kill();
  kill.set_job_id(job_id);
  kill.set_grace_ms(absl::ToInt64Milliseconds(notice ? notice->grace : options_.kill_grace));
  kill.set_reason(reason);
  kill.set_attempt(attempt);
  if (notice) kill.set_notice_deadline_unix_ms(absl::ToUnixMillis(notice->deadline));
  return msg;
}

void SchedulerCore::Finish(ActiveJob& a, Effects& fx) {
  if (ShouldRequeue(a)) {
    Requeue(a, fx);
    return;
  }
  v1::JobState final_state = a.job.stopping_as();
  if (final_state == v1::JOB_STATE_UNSPECIFIED) {
    final_state = a.job.exit_code() == 0 ? v1::JOB_STATE_COMPLETED : v1::JOB_STATE_FAILED;
  }
  std::string reason = a.job.reason();
  if (final_state == v1::JOB_STATE_COMPLETED) reason = "all processes exited with code 0";
  cluster_.Release(a.job.id(), a.job.allocation());
  usage_.Charge(a.job, -1);
  a.job.clear_stopping_as();
  a.job.clear_stop_cause();
  *a.job.mutable_end_time() = ToProtoTime(clock_.Now());
  for (const auto& part : a.job.allocation().nodes()) NoteUsage(part.node(), fx);
  Transition(a, final_state, reason, fx);
  // Only a run that ended by itself says how long such jobs take.
  if ((final_state == v1::JOB_STATE_COMPLETED || final_state == v1::JOB_STATE_FAILED) && a.job.has_start_time()) {
    runtime_history_.Record(a.job.spec(), clock_.Now() - FromProtoTime(a.job.start_time()));
  }
  jobs_.End(a.job.id(), final_state);
}

void SchedulerCore::Tick(Effects& fx) {
  const absl::Time now = clock_.Now();
  CheckNodeLiveness(now, fx);
  CheckBoots(now, fx);
  CheckReclaims(now, fx);
  std::vector<uint64_t> expired;
  for (uint64_t id : jobs_.placed()) {
    const ActiveJob& a = jobs_.at(id);
    const int64_t limit = a.job.spec().time_limit_s();
    if (limit <= 0 || a.job.state() != v1::JOB_STATE_RUNNING || a.job.stopping_as() != v1::JOB_STATE_UNSPECIFIED) {
      continue;
    }
    if (now - FromProtoTime(a.job.start_time()) >= absl::Seconds(limit)) expired.push_back(id);
  }
  for (uint64_t id : expired) {
    ActiveJob& a = jobs_.at(id);
    BeginStop(a, v1::JOB_STATE_TIMEOUT,
              absl::StrCat("time limit of ", FormatTimeLimit(a.job.spec().time_limit_s()), " reached"), fx);
  }
}

PassPlan SchedulerCore::PlanPass() { return PlanFor(RankPending(), /*keep_starts=*/false); }

void SchedulerCore::Schedule(Effects& fx) {
  MakeArrayTasks(fx);
  if (options_.share_packing == SharePacking::kFgd || options_.share_packing == SharePacking::kFillFgd) {
    // FGD and fill-fgd weigh a share's choice against what the cluster runs
    // and awaits.
    std::vector<GangRequest> requests;
    requests.reserve(jobs_.active().size());
    for (const auto& [id, a] : jobs_.active()) requests.push_back(ToGangRequest(a.job.spec()));
    policy_->set_share_weighing(ShareWeighing::Of(options_.share_packing, ShareMixOf(requests)));
  }
  const Ranked ranked = RankPending();
  KeepFairShare(fx);
  const PassPlan plan = PlanFor(ranked, /*keep_starts=*/true);
  Apply(plan, ranked, fx);
  PlanPower(plan, ranked, fx);
}

PassPlan SchedulerCore::PlanFor(const Ranked& ranked, bool keep_starts) {
  auto jobs_of = [](const std::vector<ActiveJob*>& active) {
    std::vector<const v1::Job*> jobs;
    jobs.reserve(active.size());
    for (const ActiveJob* a : active) jobs.push_back(&a->job);
    return jobs;
  };
  std::vector<const v1::Job*> placed;
  placed.reserve(jobs_.placed().size());
  for (uint64_t id : jobs_.placed()) placed.push_back(&jobs_.at(id).job);
  // Named, since the inputs only refer to them.
  auto state_of = [this](uint64_t id) { return StateOf(id); };
  auto preemption_in_flight = [this](uint64_t id) { return PreemptionInFlight(id); };
  auto request_for = [this](const v1::Job& job) { return RequestFor(job); };
  PassPlanner planner(PassInputs{
      .cluster = cluster_,
      .policy = *policy_,
      .forecast = forecast_,
      .queues = options_.queues,
      .limits = usage_.limits(),
      .placed = std::move(placed),
      .spread_comm_share = options_.spread_comm_share,
      .spread_choices = options_.spread_choices_per_pass,
      .state_of = state_of,
      .preemption_in_flight = preemption_in_flight,
      .request_for = request_for,
      .keep_starts = keep_starts,
  });
  return planner.Plan(jobs_of(ranked.order), jobs_of(ranked.throttled), jobs_of(ranked.held));
}

void SchedulerCore::Apply(const PassPlan& plan, const Ranked& ranked, Effects& fx) {
  // The plan names jobs by id; a pass over thousands looks each up once.
  absl::flat_hash_map<uint64_t, ActiveJob*> pending;
  pending.reserve(ranked.order.size() + ranked.throttled.size() + ranked.held.size());
  for (const std::vector<ActiveJob*>* list : {&ranked.order, &ranked.throttled, &ranked.held}) {
    for (ActiveJob* a : *list) pending.emplace(a->job.id(), a);
  }
  for (const auto& [id, reason] : plan.cancels) EndPending(*pending.at(id), v1::JOB_STATE_CANCELLED, reason, fx);
  for (const PlannedPreemption& p : plan.preemptions) {
    // Told when they must be gone, so that they can checkpoint first.
    const StopNotice notice{options_.kill_grace, clock_.Now() + options_.kill_grace};
    for (uint64_t victim : p.victims) {
      ActiveJob& a = jobs_.at(victim);
      auto demoted = absl::c_find_if(p.demoted, [victim](const auto& d) { return d.first == victim; });
      if (demoted != p.demoted.end()) a.job.set_stop_cause(v1::STOP_CAUSE_DEMOTED);
      BeginStop(a, v1::JOB_STATE_PREEMPTED, demoted != p.demoted.end() ? demoted->second : p.why, fx, notice);
    }
    preempting_[p.job_id] = p.victims;
  }
  for (const PlannedWait& w : plan.waits) {
    ActiveJob& a = *pending.at(w.job_id);
    if (!w.estimated_start.has_value()) {
      ClearEstimatedStart(a, fx);
    } else if (!a.job.has_estimated_start_time() || FromProtoTime(a.job.estimated_start_time()) != *w.estimated_start) {
      *a.job.mutable_estimated_start_time() = ToProtoTime(*w.estimated_start);
      Touch(a, fx);
    }
    SetWaitReason(a, ToProto(w.cause), w.reason, fx);
  }
  for (const std::string& error : plan.internal_errors) fx.internal_errors.push_back(error);
  // The planner left the starts taken in the cluster: they are charged to
  // their jobs here.
  for (const PlannedStart& start : plan.starts) {
    ActiveJob& a = *pending.at(start.job_id);
    *a.job.mutable_allocation() = start.allocation;
    usage_.Charge(a.job, +1);
    jobs_.Place(a);
    Start(a, fx);
  }
}

void SchedulerCore::Start(ActiveJob& a, Effects& fx) {
  v1::Allocation& allocation = *a.job.mutable_allocation();
  allocation.set_master_addr(allocation.nodes(0).address());
  allocation.set_master_port(options_.master_port_base +
                             static_cast<int>(a.job.id() % static_cast<uint64_t>(options_.master_port_span)));
  a.job.clear_estimated_start_time();
  preempting_.erase(a.job.id());
  std::vector<std::string> where;
  for (const auto& part : a.job.allocation().nodes()) {
    a.progress[part.node()] = NodeProgress{};
    fx.agent_commands.push_back({part.node(), LaunchMessage(a.job, part)});
    std::vector<std::string> slices;
    for (const v1::MigSlice& mig : part.mig_slices()) {
      slices.push_back(absl::StrCat(mig.profile(), " on GPU ", mig.gpu_index(), " (MIG device ", mig.mig_index(), ")"));
    }
    where.push_back(
        absl::StrCat(part.node(), part.gpu_indices_size() > 0 ? " GPUs " : "", absl::StrJoin(part.gpu_indices(), ","),
                     slices.empty() ? "" : absl::StrCat(" MIG ", absl::StrJoin(slices, ", ")),
                     part.gpu_share_milli() > 0
                         ? absl::StrCat(" (", part.gpu_share_milli() / 10.0, "% and ", part.gpu_mem_limit_mb(),
                                        " MB of each, ", ShareModeName(part.gpu_share_mode()), ")")
                         : ""));
    NoteUsage(part.node(), fx);
  }
  Transition(a, v1::JOB_STATE_STARTING, absl::StrCat("placed on ", absl::StrJoin(where, "; ")), fx);
}

v1::DaemonMessage SchedulerCore::LaunchMessage(const v1::Job& job, const v1::NodeAllocation& part) const {
  v1::DaemonMessage msg;
  v1::LaunchJob* launch = msg.mutable_launch();
  launch->set_job_id(job.id());
  launch->set_attempt(job.attempt());
  launch->set_root_allowed(options_.allow_root_jobs);
  if (job.has_array()) *launch->mutable_array() = job.array();
  *launch->mutable_spec() = job.spec();
  *launch->mutable_gpu_indices() = part.gpu_indices();
  launch->set_gpu_share_milli(part.gpu_share_milli());
  launch->set_gpu_mem_limit_mb(part.gpu_mem_limit_mb());
  launch->set_gpu_share_mode(part.gpu_share_mode());
  *launch->mutable_mig_slices() = part.mig_slices();
  launch->set_node_rank(part.node_rank());
  launch->set_nnodes(job.allocation().nodes_size());
  // Ranks number one worker per GPU (one per node without GPUs). In per-GPU
  // mode each is a process; in per-node mode the node's process is its first
  // worker, the way torchrun numbers the workers it starts.
  int world = 0, offset = 0;
  for (const auto& p : job.allocation().nodes()) {
    const int procs = RanksOn(p);
    if (p.node_rank() < part.node_rank()) offset += procs;
    world += procs;
  }
  launch->set_world_size(world);
  launch->set_rank_offset(offset);
  launch->set_master_addr(job.allocation().master_addr());
  launch->set_master_port(job.allocation().master_port());
  const NodeSlot* slot = cluster_.Find(part.node());
  if (job.spec().preflight() && slot != nullptr) {
    if (auto preflight = PreflightFor(slot->topology, part, options_.probe.preflight_min)) {
      *launch->mutable_preflight() = *std::move(preflight);
    }
  }
  return msg;
}

void SchedulerCore::ClearEstimatedStart(ActiveJob& a, Effects& fx) {
  if (!a.job.has_estimated_start_time()) return;
  a.job.clear_estimated_start_time();
  Touch(a, fx);
}

void SchedulerCore::SetWaitReason(ActiveJob& a, v1::WaitCause cause, const std::string& reason, Effects& fx) {
  if (a.job.reason() == reason && a.job.wait_cause() == cause) return;
  a.job.set_reason(reason);
  a.job.set_wait_cause(cause);
  Touch(a, fx);
}

void SchedulerCore::Transition(ActiveJob& a, v1::JobState state, const std::string& reason, Effects& fx) {
  a.job.set_state(state);
  a.job.set_reason(reason);
  a.job.clear_wait_cause();  // until a pass says why it waits
  v1::JobEvent& event = fx.events.emplace_back();
  event.set_job_id(a.job.id());
  *event.mutable_time() = ToProtoTime(clock_.Now());
  event.set_state(state);
  event.set_reason(reason);
  Touch(a, fx);
}

const v1::Job* SchedulerCore::FindActive(uint64_t job_id) const {
  if (const ActiveJob* a = jobs_.Find(job_id)) return &a->job;
  const ArrayBacklog::Entry* entry = arrays_.Covering(job_id);
  return entry == nullptr ? nullptr : &entry->record.prototype;
}

namespace {

void SetUsage(const NodeSlot& slot, v1::Node& node) {
  node.set_gpus_free(slot.FreeGpus());
  node.set_cpus_free(slot.FreeCpus());
  node.set_mem_free_mb(slot.FreeMemMb());
  node.clear_running_jobs();
  for (uint64_t id : slot.jobs) node.add_running_jobs(id);
  node.clear_gpu_holders();
  for (int p = 0; p < slot.info.gpus_size(); ++p) {
    v1::GpuHolders& holders = *node.add_gpu_holders();
    holders.set_index(slot.info.gpus(p).index());
    if (slot.gpu_owner[p] == kMigGpuOwner) {
      for (uint64_t job : slot.mig_owner[p]) holders.add_mig_holders(job);
      continue;
    }
    if (slot.gpu_owner[p] != kSharedGpuOwner) {
      holders.set_job_id(slot.gpu_owner[p]);
      continue;
    }
    holders.set_shared_mem_mb(slot.gpu_shares[p].mem_used_mb);
    holders.set_mps_user(slot.gpu_shares[p].mps_user);
    for (const auto& [job, milli] : slot.gpu_shares[p].jobs) {
      v1::GpuShareHolder& share = *holders.add_shares();
      share.set_job_id(job);
      share.set_milli(milli);
    }
  }
}

}  // namespace

v1::Node SchedulerCore::NodeView(const NodeSlot& slot) const {
  v1::Node node;
  *node.mutable_info() = slot.info;
  node.set_state(slot.state);
  node.set_reason(slot.reason);
  node.set_drain_reason(slot.drain_reason);
  node.set_drain_kind(slot.drain_kind);
  for (uint64_t id : slot.unconfirmed_kills) node.add_unconfirmed_kills(id);
  if (const PoolSpec* pool = PoolOf(slot.info.name())) node.set_pool(pool->name);
  if (auto since = power_since_.find(slot.info.name()); since != power_since_.end() && IsPowerState(slot.state)) {
    *node.mutable_power_since() = ToProtoTime(since->second);
  }
  if (std::optional<absl::Time> seen = liveness_.LastSeen(slot.info.name())) {
    *node.mutable_last_seen() = ToProtoTime(*seen);
  }
  if (auto at = reclaim_at_.find(slot.info.name()); at != reclaim_at_.end()) {
    *node.mutable_reclaim_at() = ToProtoTime(at->second);
  }
  SetUsage(slot, node);
  return node;
}

std::vector<v1::Node> SchedulerCore::Nodes() const {
  return NodesAfter("", std::numeric_limits<size_t>::max());  // names are never empty
}

std::vector<v1::Node> SchedulerCore::NodesAfter(const std::string& after, size_t limit) const {
  std::vector<v1::Node> out;
  for (auto it = cluster_.nodes().upper_bound(after); it != cluster_.nodes().end() && out.size() < limit; ++it) {
    out.push_back(NodeView(it->second));
  }
  return out;
}

std::optional<v1::Node> SchedulerCore::FindNode(const std::string& name) const {
  const NodeSlot* slot = cluster_.Find(name);
  if (slot == nullptr) return std::nullopt;
  return NodeView(*slot);
}

void SchedulerCore::WriteNode(const std::string& name, Effects& fx) const {
  if (const NodeSlot* slot = cluster_.Find(name)) {
    fx.nodes[name] = NodeView(*slot);
    fx.node_usage.erase(name);
  }
}

void SchedulerCore::NoteUsage(const std::string& name, Effects& fx) const {
  const NodeSlot* slot = cluster_.Find(name);
  if (slot == nullptr) return;
  if (auto row = fx.nodes.find(name); row != fx.nodes.end()) return SetUsage(*slot, row->second);
  NodeUsage& usage = fx.node_usage[name];
  usage = NodeUsage{slot->gpu_count, slot->FreeGpus(), slot->state, !slot->drain_reason.empty(), {}};
  if ((slot->shareable_mask | slot->mig_mask) != 0) {
    v1::Node holders;
    SetUsage(*slot, holders);
    usage.parts = NodeUsage::PartsOf(slot->info, holders.gpu_holders());
  }
}

}  // namespace gpusched::core
