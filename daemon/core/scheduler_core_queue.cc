// SchedulerCore, the queue policy's part: ranking, queue limits, holds,
// dependencies' lookups, preemption and requeue (scheduler_core.h).
#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/gpu_fraction.h"
#include "common/job_states.h"
#include "common/proto_time.h"
#include "daemon/core/queue/attained_service.h"
#include "daemon/core/scheduler_core.h"

namespace gpusched::core {

absl::StatusOr<ActiveJob*> SchedulerCore::PendingJob(uint64_t job_id) {
  ActiveJob* a = jobs_.Find(job_id);
  if (a == nullptr) {
    if (std::optional<v1::JobState> ended = jobs_.EndedAs(job_id)) {
      return absl::FailedPreconditionError(
          absl::StrCat("job ", job_id, " has already ended (", StateName(*ended), "), it is not pending"));
    }
    return absl::NotFoundError(absl::StrCat("job ", job_id, " not found"));
  }
  if (a->job.state() != v1::JOB_STATE_PENDING) {
    return absl::FailedPreconditionError(
        absl::StrCat("job ", job_id, " is ", StateName(a->job.state()), ", not pending"));
  }
  return a;
}

absl::StatusOr<v1::Job> SchedulerCore::Hold(uint64_t job_id, Effects& fx) {
  MakeTasksThrough(job_id, fx);
  auto a = PendingJob(job_id);
  if (!a.ok()) return a.status();
  if (!(*a)->job.held()) {
    jobs_.SetHeld(**a, true);
    ClearEstimatedStart(**a, fx);
    Transition(**a, v1::JOB_STATE_PENDING, std::string(kHeldReason), fx);
  }
  return (*a)->job;
}

absl::StatusOr<v1::Job> SchedulerCore::Release(uint64_t job_id, Effects& fx) {
  MakeTasksThrough(job_id, fx);
  auto a = PendingJob(job_id);
  if (!a.ok()) return a.status();
  if ((*a)->job.held()) {
    jobs_.SetHeld(**a, false);
    Transition(**a, v1::JOB_STATE_PENDING, "released", fx);
  }
  return (*a)->job;
}

bool SchedulerCore::ShouldRequeue(const ActiveJob& a) const {
  // Demotion is the queue's own time-sharing, not a failure that repeats:
  // max_requeues does not bound it.
  if (a.job.stopping_as() == v1::JOB_STATE_PREEMPTED && a.job.stop_cause() == v1::STOP_CAUSE_DEMOTED) return true;
  if (a.job.attempt() - a.job.demotions() >= options_.queues.max_requeues) return false;
  switch (a.job.stopping_as()) {
    case v1::JOB_STATE_PREEMPTED: {
      // Its node was taken back, not its GPUs given to a higher tier.
      if (a.job.stop_cause() == v1::STOP_CAUSE_SPOT_INTERRUPTION)
        return options_.queues.RequeuesOnNodeFail(a.job.spec());
      const QueueSpec* queue = options_.queues.Find(a.job.spec().queue());
      return queue == nullptr || queue->preempt_mode == PreemptMode::kRequeue;
    }
    case v1::JOB_STATE_NODE_FAIL:
      return options_.queues.RequeuesOnNodeFail(a.job.spec()) || StoppedByPreflightBeforeStart(a);
    default: return false;
  }
}

bool SchedulerCore::StoppedByPreflightBeforeStart(const ActiveJob& a) {
  if (a.job.stop_cause() != v1::STOP_CAUSE_PREFLIGHT_FAILED) return false;
  // Where another node's part had started, the job has run, however briefly:
  // its own requeue setting decides.
  return std::none_of(a.progress.begin(), a.progress.end(), [](const auto& p) { return p.second.started; });
}

void SchedulerCore::Requeue(ActiveJob& a, Effects& fx) {
  const std::string reason = a.job.reason();
  cluster_.Release(a.job.id(), a.job.allocation());
  usage_.Charge(a.job, -1);
  for (const auto& part : a.job.allocation().nodes()) NoteUsage(part.node(), fx);
  // The event history shows how this run ended before the job waits again.
  Transition(a, a.job.stopping_as(), reason, fx);
  if (a.job.stop_cause() == v1::STOP_CAUSE_DEMOTED) a.job.set_demotions(a.job.demotions() + 1);
  a.job.clear_stopping_as();
  a.job.clear_stop_cause();
  a.job.clear_allocation();
  // What it ran stays with it: a queue that demotes ranks it by all its
  // attempts together.
  a.job.set_earlier_run_s(absl::ToInt64Seconds(AttainedService(a.job, clock_.Now())));
  a.job.clear_start_time();
  a.job.set_exit_code(0);
  a.job.set_attempt(a.job.attempt() + 1);
  a.progress.clear();
  // It keeps its submit time, and with it the age it had earned.
  Transition(a, v1::JOB_STATE_PENDING, absl::StrCat("requeued for attempt ", a.job.attempt() + 1, ": ", reason), fx);
  jobs_.Requeue(a);
}

void SchedulerCore::KeepFairShare(Effects& fx) {
  if (std::optional<v1::FairShareUsage> usage = usage_.DueToKeep(clock_.Now())) fx.fair_share = *std::move(usage);
}

void SchedulerCore::KeepFairShareNow(Effects& fx) { fx.fair_share = usage_.KeepNow(clock_.Now()); }

void SchedulerCore::RestoreFairShare(const v1::FairShareUsage& usage) { usage_.Restore(usage); }

Ranked SchedulerCore::RankPending() {
  const absl::Time now = clock_.Now();
  const bool weighted = !options_.queues.weights.all_zero();
  if (weighted) usage_.Advance(now, jobs_);
  RankInputs in{
      .now = now,
      .queues = &options_.queues,
      .queue_depth = options_.queue_depth,
      .head_blocks_after = options_.head_blocks_after,
      .largest_node_gpus = cluster_.LargestNodeGpus(),
      .history = &runtime_history_,
      .usage = &usage_,
  };
  for (const NodeScan& n : cluster_.scan()) in.cluster_gpus += n.gpu_count;
  // Tasks of a job array beyond what its limit lets start this pass take no
  // place in the queue depth: a throttled sweep of thousands must not hide
  // the jobs behind it. The array's first tasks in rank order go first.
  absl::flat_hash_map<uint64_t, int32_t> admitted;  // by array
  auto over_limit = [&](const v1::Job& job) {
    const int32_t limit = job.array().max_running();
    if (limit <= 0) return false;
    int32_t& taken = admitted[job.array().array_id()];
    if (usage_.limits().ArrayPlaced(job.array().array_id()) + taken >= limit) return true;
    ++taken;
    return false;
  };
  return ranking_.Rank(jobs_, in, over_limit);
}

bool SchedulerCore::PreemptionInFlight(uint64_t job_id) const {
  auto it = preempting_.find(job_id);
  if (it == preempting_.end()) return false;
  // A victim still placed is still stopping; placed jobs are always active.
  // One placed again since (its preemptor waited on, for a better placement)
  // counts too: stopping it again could go on for ever in one instant.
  for (uint64_t victim : it->second) {
    if (jobs_.IsPlaced(victim)) return true;
  }
  return false;
}

}  // namespace gpusched::core
