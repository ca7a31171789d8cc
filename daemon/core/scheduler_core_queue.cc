// SchedulerCore, the queue policy's part: ranking, queue limits, holds,
// dependencies' lookups, preemption and requeue (scheduler_core.h).
#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/gpu_fraction.h"
#include "common/job_states.h"
#include "common/proto_time.h"
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
        absl::StrCat("job ", job_id, " is ", v1::JobState_Name(a->job.state()), ", not pending"));
  }
  return a;
}

absl::StatusOr<v1::Job> SchedulerCore::Hold(uint64_t job_id, Effects& fx) {
  auto a = PendingJob(job_id);
  if (!a.ok()) return a.status();
  if (!(*a)->job.held()) {
    (*a)->job.set_held(true);
    ClearEstimatedStart(**a, fx);
    Transition(**a, v1::JOB_STATE_PENDING, std::string(kHeldReason), fx);
  }
  return (*a)->job;
}

absl::StatusOr<v1::Job> SchedulerCore::Release(uint64_t job_id, Effects& fx) {
  auto a = PendingJob(job_id);
  if (!a.ok()) return a.status();
  if ((*a)->job.held()) {
    (*a)->job.set_held(false);
    Transition(**a, v1::JOB_STATE_PENDING, "released", fx);
  }
  return (*a)->job;
}

bool SchedulerCore::ShouldRequeue(const ActiveJob& a) const {
  if (a.job.attempt() >= options_.queues.max_requeues) return false;
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
  a.job.clear_stopping_as();
  a.job.clear_stop_cause();
  a.job.clear_allocation();
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

namespace {

// A held job whose row says so already: a pass has nothing to tell it.
bool SaysHeld(const v1::Job& job) {
  return job.wait_cause() == v1::WAIT_CAUSE_HELD && !job.has_estimated_start_time() && job.reason() == kHeldReason;
}

}  // namespace

SchedulerCore::Ranked SchedulerCore::RankPending() {
  const absl::Time now = clock_.Now();
  Ranked out;
  // Tasks of a job array beyond what its limit lets start this pass take no
  // place in the queue depth: a throttled sweep of thousands must not hide
  // the jobs behind it. The array's first tasks in queue order go first.
  // Held tasks are set aside before this: they would take a place they
  // cannot use.
  absl::flat_hash_map<uint64_t, int32_t> admitted;  // by array
  auto over_limit = [&](const v1::Job& job) {
    const int32_t limit = job.array().max_running();
    if (limit <= 0) return false;
    int32_t& taken = admitted[job.array().array_id()];
    if (usage_.limits().ArrayPlaced(job.array().array_id()) + taken >= limit) return true;
    ++taken;
    return false;
  };
  // A held job is not ranked (Slurm gives it priority 0), and one whose row
  // says so already needs nothing from the pass: thousands of held jobs
  // would otherwise be scored and told again by every pass.
  auto set_aside_if_held = [&](ActiveJob* a) {
    if (!a->job.held()) return false;
    if (!SaysHeld(a->job)) out.held.push_back(a);
    return true;
  };
  if (options_.queues.weights.all_zero()) {
    // The queue's own order is the ranking: only the jobs a pass looks at
    // are touched, as many as queue_depth.
    scores_.clear();
    for (const auto& [key, a] : jobs_.pending()) {
      if (set_aside_if_held(a)) continue;
      // Past the depth only the held are looked for, to say why they wait.
      if (out.order.size() >= options_.queue_depth) continue;
      if (over_limit(a->job)) {
        out.throttled.push_back(a);
        continue;
      }
      PriorityScore score;
      score.job = score.total = static_cast<double>(key.priority);
      scores_.emplace_back(key.job_id, score);
      out.order.push_back(a);
    }
    return out;
  }
  usage_.Advance(now, jobs_);

  PriorityContext context{&options_.queues, now, 0, options_.queues.MaxTier()};
  for (const NodeScan& n : cluster_.scan()) context.cluster_gpus += n.gpu_count;
  const int64_t largest_node_gpus = cluster_.LargestNodeGpus();
  // Every pass ranks the whole queue (age and usage move with the clock):
  // the fair-share factor once per user and account, not once per job.
  absl::flat_hash_map<std::pair<absl::string_view, absl::string_view>, double> fair_share_of;
  // The starvation bound: ranking favours short work, so a gang that needs
  // more than one node (several nodes free at once, which jobs ending one by
  // one never give it) could wait without end. Once it has waited
  // head_blocks_after it is due: ahead of every job that is not, oldest
  // first, and so the first to get a reservation. A job that fits on one
  // node needs no such help: it gets one whenever a node drains.
  struct Candidate {
    bool due;
    double total;
    QueueKey key;
    ActiveJob* job;
  };
  std::vector<Candidate> ranked;
  ranked.reserve(jobs_.pending().size());
  scores_.clear();
  scores_.reserve(jobs_.pending().size());
  for (const auto& [key, a] : jobs_.pending()) {
    if (set_aside_if_held(a)) continue;
    const v1::JobSpec& spec = a->job.spec();
    auto [it, fresh] =
        fair_share_of.try_emplace(std::pair<absl::string_view, absl::string_view>(spec.user(), spec.account()), 0.0);
    if (fresh) it->second = usage_.FairShareFactor(spec.user(), spec.account());
    const RuntimeEstimate estimate = runtime_history_.Estimate(spec);
    const absl::Duration expected = EndForecast::Run(spec, estimate);
    PriorityScore score = ScoreJob(spec, absl::FromUnixNanos(key.submit_ns), it->second, expected, context);
    score.expected_run = expected;
    score.estimate = estimate;
    scores_.emplace_back(key.job_id, score);
    if (over_limit(a->job)) {
      out.throttled.push_back(a);
      continue;
    }
    const bool due = spec.resources().gpus() > largest_node_gpus &&
                     now - absl::FromUnixNanos(key.submit_ns) >= options_.head_blocks_after;
    ranked.push_back({due, score.total, key, a});
  }
  // Equal totals keep the old order (priority, then submission): a total order, so passes are deterministic.
  auto before = [](const Candidate& a, const Candidate& b) {
    if (a.due != b.due) return a.due;
    if (a.due) return a.key.submit_ns < b.key.submit_ns || (a.key.submit_ns == b.key.submit_ns && a.key < b.key);
    return a.total > b.total || (a.total == b.total && a.key < b.key);
  };
  // Only the first queue_depth are looked at: no need to sort the rest.
  if (ranked.size() > options_.queue_depth) {
    std::nth_element(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(options_.queue_depth), ranked.end(),
                     before);
    ranked.resize(options_.queue_depth);
  }
  std::sort(ranked.begin(), ranked.end(), before);
  out.order.reserve(ranked.size());
  for (const Candidate& r : ranked) out.order.push_back(r.job);
  return out;
}

std::optional<PriorityScore> SchedulerCore::PriorityOf(uint64_t job_id) const {
  for (const auto& [id, score] : scores_) {
    if (id == job_id) return score;
  }
  return std::nullopt;
}

bool SchedulerCore::PreemptionInFlight(uint64_t job_id) const {
  auto it = preempting_.find(job_id);
  if (it == preempting_.end()) return false;
  // A victim still placed is still stopping; placed jobs are always active.
  for (uint64_t victim : it->second) {
    if (jobs_.IsPlaced(victim)) return true;
  }
  return false;
}

}  // namespace gpusched::core
