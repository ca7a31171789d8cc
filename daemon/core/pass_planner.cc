#include "daemon/core/pass_planner.h"

#include <utility>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/proto_time.h"
#include "daemon/core/queue/attained_service.h"
#include "daemon/core/queue/dependencies.h"
#include "daemon/core/queue/preemption.h"
#include "daemon/core/released_jobs.h"
#include "daemon/core/wait_or_spread.h"

namespace gpusched::core {
namespace {

// Why a job waits when a job ahead of it can neither start nor be given a
// reservation. It names no job: it then stays the same while the head of
// the queue changes, instead of rewriting (and persisting) every waiting
// job's row each time a job starts.
constexpr absl::string_view kBlockedBehindHead = "waiting behind a higher-priority job that cannot start yet";

// What a job its queue demoted is told when a fresh job stops it: its own
// run and threshold, which depend on its size where the queue counts per GPU.
std::string DemotedVictimReason(const v1::Job& by, const QueueSpec& by_queue, const v1::Job& victim,
                                const QueueSpec& victim_queue, absl::Time now) {
  std::string threshold = absl::FormatDuration(DemoteAfter(victim, victim_queue));
  if (victim_queue.demote_after_per_gpu) {
    absl::StrAppend(&threshold, " (", absl::FormatDuration(absl::Seconds(victim_queue.demote_after_s)), " per GPU)");
  }
  return absl::StrCat("preempted by job ", by.id(), " of queue ", by_queue.name,
                      ", not demoted: least attained service first (this job has run ",
                      absl::FormatDuration(absl::Trunc(AttainedService(victim, now), absl::Seconds(1))), ", past the ",
                      threshold, " after which its queue demotes it)");
}

}  // namespace

PassPlanner::PassPlanner(PassInputs inputs)
    : in_(std::move(inputs)),
      now_(in_.forecast.now()),
      largest_node_gpus_(in_.cluster.LargestNodeGpus()),
      spread_choices_left_(in_.spread_choices) {}

PassPlanner::~PassPlanner() = default;

PassPlan PassPlanner::Plan(const std::vector<const v1::Job*>& order, const std::vector<const v1::Job*>& throttled,
                           const std::vector<const v1::Job*>& held) {
  for (const v1::Job* t : throttled) Wait(*t, WaitCause::kArrayLimit, LimitLedger::ArrayLimitReason(*t));
  // Like a job over its queue's limit, a held job neither takes a
  // reservation nor holds back the jobs behind it.
  for (const v1::Job* h : held) Wait(*h, WaitCause::kHeld, std::string(kHeldReason));
  for (const v1::Job* job : order) PlanJob(*job);
  // The scratch back as it was: holds first, then the planned starts.
  holds_.clear();
  if (!in_.keep_starts) {
    for (size_t i = plan_.starts.size(); i-- > 0;) {
      in_.cluster.Release(plan_.starts[i].job_id, plan_.starts[i].allocation);
    }
  }
  plan_.reservations.assign(std::make_move_iterator(reservations_.begin()),
                            std::make_move_iterator(reservations_.end()));
  return std::move(plan_);
}

void PassPlanner::PlanJob(const v1::Job& job) {
  if (WaitsForDependencies(job)) return;
  const GangRequest request = in_.request_for(job);
  if ((request.queue_bit & blocked_) != 0) return Wait(job, WaitCause::kBlocked, std::string(kBlockedBehindHead));
  // Over a limit it could not start even on free GPUs: it neither takes a
  // reservation nor holds back the jobs behind it.
  if (in_.limits.OverArrayLimit(job)) return Wait(job, WaitCause::kArrayLimit, LimitLedger::ArrayLimitReason(job));
  if (std::string limit = in_.limits.QueueLimitReason(job); !limit.empty()) {
    return Wait(job, WaitCause::kQueueLimit, std::move(limit));
  }
  const PlacementResult placement = Place(request);
  if (!placement.placed()) {
    if (!BackfillOntoReserved(job, request)) WaitOrReserve(job, request, placement.reason());
    return;
  }
  if (WaitsForBetter(job, request, placement)) return;
  Start(job, placement.allocation());
}

bool PassPlanner::WaitsForDependencies(const v1::Job& job) {
  if (job.spec().dependencies_size() == 0) return false;
  // A job cancelled earlier in this pass counts as cancelled already, so
  // that a chain of dependants ends in one pass.
  const DependencyVerdict verdict = CheckDependencies(job.spec(), [this](uint64_t id) -> std::optional<v1::JobState> {
    if (cancelled_.contains(id)) return v1::JOB_STATE_CANCELLED;
    return in_.state_of(id);
  });
  switch (verdict.kind) {
    case DependencyVerdict::kMet: return false;
    case DependencyVerdict::kNever:
      cancelled_.insert(job.id());
      plan_.cancels.emplace_back(job.id(), verdict.reason);
      return true;
    case DependencyVerdict::kWaiting: Wait(job, WaitCause::kDependency, verdict.reason); return true;
  }
  return false;
}

PlacementResult PassPlanner::Place(const GangRequest& request) {
  if (auto failed = failed_shapes_.find(request); failed != failed_shapes_.end()) {
    return PlacementResult::Unschedulable(failed->second);
  }
  PlacementResult placement = in_.policy.Place(in_.cluster, request);
  if (!placement.placed()) failed_shapes_.emplace(request, placement.reason());
  return placement;
}

bool PassPlanner::BackfillOntoReserved(const v1::Job& job, const GangRequest& request) {
  std::vector<ReservationHold*> competing;
  for (size_t i = 0; i < reservations_.size(); ++i) {
    const PlannedReservation& r = reservations_[i];
    if ((r.competing_queues & request.queue_bit) == 0) continue;
    const bool yields = r.yields_to_small && request.total_gpus < largest_node_gpus_;
    if (!yields && !in_.forecast.EndsBy(job, r.reservation.start, r.trusts_estimates)) return false;
    competing.push_back(holds_[i].get());
  }
  if (competing.empty()) return false;
  for (ReservationHold* hold : competing) hold->Drop();
  const PlacementResult placement = in_.policy.Place(in_.cluster, request);
  if (placement.placed()) Start(job, placement.allocation());
  for (ReservationHold* hold : competing) hold->Retake();
  return placement.placed();
}

void PassPlanner::WaitOrReserve(const v1::Job& job, const GangRequest& request, const std::string& why) {
  if (const PlannedReservation* r = CompetingReservation(request.queue_bit)) {
    if (Preempts(job, request, /*behind_reservation=*/true)) return;
    return Wait(job, WaitCause::kBehindReservation,
                absl::StrCat(why, "; job ", r->reservation.job_id, " holds a reservation"));
  }
  if (Preempts(job, request, /*behind_reservation=*/false)) return;
  if (std::optional<Reservation> reservation =
          PlanReservation(in_.cluster, in_.policy, job.id(), request, ExpectedEnds(EndForecast::Which::kHigh))) {
    const absl::Time start = reservation->start;
    Wait(job, WaitCause::kReserved, absl::StrCat(why, "; reserved to start by ", UtcTime(start), " UTC"), start);
    // Once it has waited its bound, only hard limits let jobs use its GPUs,
    // so that estimates that run over cannot starve it.
    return Reserve(job, *std::move(reservation), request.queue_bit,
                   !in_.forecast.WaitedPastBound(job, largest_node_gpus_), YieldsToSmall(job));
  }
  if (!in_.forecast.WaitedPastBound(job, largest_node_gpus_)) {
    return Wait(job, WaitCause::kMayBePassed,
                absl::StrCat(why, "; smaller jobs may pass it until it has waited ",
                             absl::FormatDuration(in_.forecast.BoundOf(job, largest_node_gpus_))));
  }
  // Not even an idle cluster would do (it needs nodes that are down or
  // drained): holding the others back would leave the nodes that are up
  // idle until those come back, and start it no sooner.
  if (!FitsOnceAllEnd(request)) {
    return Wait(job, WaitCause::kMayBePassed,
                absl::StrCat(why,
                             "; the nodes up now cannot hold it even idle, so jobs behind it may pass "
                             "until down or drained nodes are back"));
  }
  // Nothing says when it could start (running jobs without time limits or
  // estimates): letting smaller jobs of its nodes pass could starve it, so
  // none do.
  Wait(job, WaitCause::kCannotStart, why);
  blocked_ |= in_.cluster.CompetingQueues(request.queue_bit);
}

bool PassPlanner::Preempts(const v1::Job& job, const GangRequest& request, bool behind_reservation) {
  const QueueSpec* queue = in_.queues.Find(job.spec().queue());
  if (queue == nullptr || in_.preemption_in_flight(job.id())) return false;
  // Least attained service first: a job its queue has not demoted may stop
  // demoted jobs of its tier, as a higher tier stops lower ones.
  const bool fresh = queue->demote_after_s > 0 && !Demoted(job, queue, now_);
  if (!fresh && (queue->tier == 0 || behind_reservation)) return false;
  std::vector<PreemptionCandidate> candidates;
  // Candidates of its own tier, demoted, and their queues.
  absl::flat_hash_map<uint64_t, std::pair<const v1::Job*, const QueueSpec*>> demoted;
  for (const v1::Job* placed : in_.placed) {
    if (placed->stopping_as() != v1::JOB_STATE_UNSPECIFIED || stopping_.contains(placed->id())) continue;
    const QueueSpec* theirs = in_.queues.Find(placed->spec().queue());
    if (theirs == nullptr || theirs->preempt_mode == PreemptMode::kOff) continue;
    const bool demoted_peer = fresh && theirs->tier == queue->tier && Demoted(*placed, theirs, now_);
    if ((behind_reservation || theirs->tier >= queue->tier) && !demoted_peer) continue;
    if (behind_reservation && HeldForReservation(placed->allocation(), request.queue_bit)) continue;
    const google::protobuf::Timestamp& since = demoted_peer ? placed->submit_time() : placed->start_time();
    if (demoted_peer) demoted.emplace(placed->id(), std::pair{placed, theirs});
    // The cost PlanPreemption minimizes. A lower tier's job: the work since
    // its start, which it loses at worst. A demoted job checkpoints and loses
    // only its restart, so its GPUs times its time since submission: the
    // youngest are stopped first, and the oldest finish. A plan mixing both
    // kinds compares the two measures as they are.
    const double ran = IsSet(since) ? absl::ToDoubleSeconds(now_ - FromProtoTime(since)) : 0;
    candidates.push_back(
        {placed->id(), &placed->allocation(), std::max(0.0, ran) * placed->spec().resources().gpus(), theirs->tier});
  }
  std::optional<PreemptionPlan> preemption = PlanPreemption(in_.cluster, in_.policy, request, std::move(candidates));
  if (!preemption.has_value()) return false;
  stopping_.insert(preemption->victims.begin(), preemption->victims.end());
  placed_ends_ = {};  // its victims end sooner
  std::vector<std::pair<uint64_t, std::string>> demoted_victims;
  for (uint64_t id : preemption->victims) {
    if (auto d = demoted.find(id); d != demoted.end()) {
      demoted_victims.emplace_back(id, DemotedVictimReason(job, *queue, *d->second.first, *d->second.second, now_));
    }
  }
  const char* whose = demoted_victims.empty()                                ? " of lower tiers"
                      : demoted_victims.size() == preemption->victims.size() ? " (their queue demoted them)"
                                                                             : " (of lower tiers, or demoted by "
                                                                               "their queue)";
  Reservation reservation{job.id(), in_.forecast.StoppedBy(), std::move(preemption->allocation)};
  Wait(job, WaitCause::kPreempting,
       absl::StrCat("preempting ", preemption->victims.size() == 1 ? "job " : "jobs ",
                    absl::StrJoin(preemption->victims, ", "), whose, " to make room"),
       reservation.start);
  plan_.preemptions.push_back(
      {job.id(), std::move(preemption->victims),
       absl::StrCat("preempted by job ", job.id(), " of queue ", queue->name, " (tier ", queue->tier, ")"),
       std::move(demoted_victims)});
  // Held like a reservation, so that nothing else takes the GPUs they free.
  Reserve(job, std::move(reservation), request.queue_bit, /*trusts_estimates=*/false, /*yields_to_small=*/false);
  return true;
}

bool PassPlanner::WaitsForBetter(const v1::Job& job, const GangRequest& request, const PlacementResult& free_now) {
  if (request.topology != v1::TOPOLOGY_MODE_PREFER || request.total_gpus < 2 || request.shares_gpus() ||
      request.wants_mig() || in_.forecast.head_blocks_after() <= absl::ZeroDuration()) {
    return false;
  }
  auto verdict = waits_for_better_.try_emplace(request).first;
  const absl::Duration run = in_.forecast.Run(job.spec(), /*mean=*/true);
  // A shape that spread is weighed again for the next job of it: what is
  // free now is worse for it than it was for the first. One that waited is
  // weighed again for a shorter run, which a slower placement costs less.
  const bool waited = !verdict->second.waits_why.empty();
  const bool weigh = !waited || run < verdict->second.run;
  // Past the pass's choices, a job no verdict covers starts where it fits.
  if (weigh && spread_choices_left_ <= 0) return false;
  std::optional<BetterPlacement> better;
  if (weigh) {
    --spread_choices_left_;
    better = BetterByWaiting(in_.cluster, in_.policy, job.id(), request, free_now.allocation(),
                             SpreadCost{run, in_.spread_comm_share}, now_,
                             [&] { return ExpectedEnds(EndForecast::Which::kTypical); });
    // This one spreads; the longer ones behind it still wait as decided.
    if (!better.has_value() && waited) return false;
  }
  if (better.has_value()) {
    verdict->second = {
        absl::StrCat("waiting for a better placement: on the best free now (~",
                     absl::StrFormat("%.0f", free_now.allocation().est_bus_bandwidth_gbps()), " GB/s) it would end by ",
                     UtcTime(better->finish_now), " UTC, on ~",
                     absl::StrFormat("%.0f", better->reservation.allocation.est_bus_bandwidth_gbps()), " GB/s from ",
                     UtcTime(better->reservation.start), " by ", UtcTime(better->finish_waiting), " UTC"),
        run};
    // The first to wait where no reservation competes gets one, so that
    // the better placement is kept for it.
    if (CompetingReservation(request.queue_bit) != nullptr) {
      Wait(job, WaitCause::kBetterPlacement, verdict->second.waits_why);
    } else {
      Wait(job, WaitCause::kBetterPlacement, verdict->second.waits_why, better->reservation.start);
      Reserve(job, std::move(better->reservation), request.queue_bit,
              !in_.forecast.WaitedPastBound(job, largest_node_gpus_), YieldsToSmall(job));
    }
    return true;
  }
  if (!waited) return false;
  // Jobs of the same shape behind it that run as long or longer wait too,
  // without a reservation: each pass weighs it again, so a wait that grows
  // ends in spreading.
  Wait(job, WaitCause::kBetterPlacement,
       absl::StrCat(verdict->second.waits_why, " (as weighed for a job of this shape that runs no longer)"));
  return true;
}

void PassPlanner::Start(const v1::Job& job, const v1::Allocation& allocation) {
  if (absl::Status taken = in_.cluster.Allocate(job.id(), allocation); !taken.ok()) {
    // The policy placed it on what the accounting says is taken: a bug, not
    // a wait. Said where it is seen, and the job waits for the next pass.
    std::string what = absl::StrCat("job ", job.id(), ": the placement policy chose resources the cluster's ",
                                    "accounting refused: ", taken.message());
    Wait(job, WaitCause::kInternalError, absl::StrCat("internal error (in the daemon's log): ", what));
    plan_.internal_errors.push_back(std::move(what));
    return;
  }
  in_.limits.Charge(job, +1);
  plan_.starts.push_back({job.id(), allocation});
  started_.push_back(&job);
}

void PassPlanner::Wait(const v1::Job& job, WaitCause cause, std::string reason,
                       std::optional<absl::Time> estimated_start) {
  plan_.waits.push_back({job.id(), cause, std::move(reason), estimated_start});
}

void PassPlanner::Reserve(const v1::Job& job, Reservation reservation, uint64_t queue_bit, bool trusts_estimates,
                          bool yields_to_small) {
  reservation.job_id = job.id();
  PlannedReservation& r =
      reservations_.emplace_back(PlannedReservation{std::move(reservation), in_.cluster.CompetingQueues(queue_bit),
                                                    trusts_estimates, yields_to_small, plan_.starts.size()});
  holds_.push_back(std::make_unique<ReservationHold>(in_.cluster, r.reservation));
}

bool PassPlanner::YieldsToSmall(const v1::Job& job) const {
  return job.spec().resources().gpus() >= largest_node_gpus_ && in_.forecast.WaitedPastBound(job, largest_node_gpus_) &&
         !in_.forecast.WaitedPastBound(job, largest_node_gpus_, kOverdueFactor);
}

bool PassPlanner::HeldForReservation(const v1::Allocation& allocation, uint64_t queue_bit) const {
  for (const PlannedReservation& r : reservations_) {
    if ((r.competing_queues & queue_bit) == 0) continue;
    for (const v1::NodeAllocation& reserved : r.reservation.allocation.nodes()) {
      for (const v1::NodeAllocation& part : allocation.nodes()) {
        if (part.node() != reserved.node()) continue;
        for (int32_t gpu : part.gpu_indices()) {
          if (absl::c_linear_search(reserved.gpu_indices(), gpu)) return true;
        }
      }
    }
  }
  return false;
}

const PlannedReservation* PassPlanner::CompetingReservation(uint64_t queue_bit) const {
  for (const PlannedReservation& r : reservations_) {
    if ((r.competing_queues & queue_bit) != 0) return &r;
  }
  return nullptr;
}

bool PassPlanner::FitsOnceAllEnd(const GangRequest& request) {
  std::vector<ReleasedJobs::Job> all;
  for (const v1::Job* job : in_.placed) all.push_back({job->id(), &job->allocation()});
  for (size_t i = 0; i < started_.size(); ++i) all.push_back({started_[i]->id(), &plan_.starts[i].allocation});
  const size_t count = all.size();
  ReleasedJobs released(in_.cluster, std::move(all));
  released.SetFirst(count);
  return in_.policy.Place(in_.cluster, request).placed();
}

std::vector<ExpectedEnd> PassPlanner::ExpectedEnds(EndForecast::Which which) {
  std::optional<std::vector<ExpectedEnd>>& placed = placed_ends_[static_cast<size_t>(which)];
  if (!placed.has_value()) {
    placed.emplace();
    for (const v1::Job* job : in_.placed) {
      const absl::Time end = stopping_.contains(job->id()) ? in_.forecast.StoppedBy() : in_.forecast.EndOf(*job, which);
      if (end != absl::InfiniteFuture()) placed->push_back({end, job->id(), &job->allocation()});
    }
  }
  std::vector<ExpectedEnd> ends = *placed;
  for (size_t i = 0; i < started_.size(); ++i) {
    const absl::Time end = in_.forecast.EndOf(*started_[i], which);
    if (end != absl::InfiniteFuture()) ends.push_back({end, started_[i]->id(), &plan_.starts[i].allocation});
  }
  return ends;
}

}  // namespace gpusched::core
