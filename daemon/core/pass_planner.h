#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "daemon/core/backfill.h"
#include "daemon/core/cluster_state.h"
#include "daemon/core/end_forecast.h"
#include "daemon/core/gang_request.h"
#include "daemon/core/pass_plan.h"
#include "daemon/core/policy/placement_policy.h"
#include "daemon/core/queue/limit_ledger.h"
#include "daemon/core/queue/queue_policy.h"

namespace gpusched::core {

// What a scheduling pass reads. `cluster` is its scratch: the pass places
// jobs on it as it plans (later jobs see the GPUs earlier ones took) and
// leaves it as it found it, but for `keep_starts`. `limits` is a copy the
// pass charges the same way.
struct PassInputs {
  ClusterState& cluster;
  PlacementPolicy& policy;
  const EndForecast& forecast;
  const QueuePolicy& queues;
  LimitLedger limits;
  std::vector<const v1::Job*> placed;  // starting and running
  double spread_comm_share = 0.1;      // CoreOptions::spread_comm_share
  int spread_choices = 8;              // CoreOptions::spread_choices_per_pass
  // Active jobs' state, finished jobs' end state; nullopt: no such job.
  absl::FunctionRef<std::optional<v1::JobState>(uint64_t)> state_of;
  // Whether the gangs stopped for the job earlier are still stopping.
  absl::FunctionRef<bool(uint64_t)> preemption_in_flight;
  absl::FunctionRef<GangRequest(const v1::Job&)> request_for;
  // The plan's starts stay taken in `cluster` under their jobs' ids, for a
  // caller that applies the plan at once (and so need not take them again).
  bool keep_starts = false;
};

// One scheduling pass: given the pending jobs in rank order, decides which
// start where, which wait and why, which hold reservations and which lower
// tiers are stopped to make room. Each rule is one method below; the pass
// changes nothing but its scratch, and returns the plan.
//
// Backfill, per competing node set: the first job that cannot start gets a
// reservation (backfill.h), and a job behind it that competes with it for
// nodes starts only where it cannot delay it. A job whose nodes no
// reservation touches may get a reservation of its own: a blocked job holds
// back only the jobs that compete for the nodes it waits for. A job past its
// starvation bound (end_forecast.h) lets jobs smaller than a node use its
// reserved GPUs until it has waited twice the bound, then holds them back.
class PassPlanner {
 public:
  explicit PassPlanner(PassInputs inputs);
  ~PassPlanner();
  PassPlanner(const PassPlanner&) = delete;
  PassPlanner& operator=(const PassPlanner&) = delete;

  // `order`: the jobs the pass may start, best first. `throttled` (over
  // their array's limit) and `held` only get their reasons. Call once.
  PassPlan Plan(const std::vector<const v1::Job*>& order, const std::vector<const v1::Job*>& throttled,
                const std::vector<const v1::Job*>& held);

 private:
  void PlanJob(const v1::Job& job);
  // Placement, remembering the shapes that cannot be placed this pass.
  PlacementResult Place(const GangRequest& request);
  // Dependencies: true when the job waits for them (or can never run).
  bool WaitsForDependencies(const v1::Job& job);
  // A job that cannot be placed off the reserved GPUs may still use them
  // when it is gone before every reservation it competes with starts, or
  // when it is smaller than a node and those reservations yield to it.
  bool BackfillOntoReserved(const v1::Job& job, const GangRequest& request);
  // A job that cannot start: behind a reservation of its nodes, or given
  // one (by preemption or by the expected ends), or passed, or blocking.
  void WaitOrReserve(const v1::Job& job, const GangRequest& request, const std::string& why);
  // Wait or spread: true when the job waits for a better placement.
  bool WaitsForBetter(const v1::Job& job, const GangRequest& request, const PlacementResult& free_now);
  // Stops lower tiers to make room for the job, when that is enough; or,
  // where its queue demotes (QueueSpec::demote_after_s) and has not demoted
  // it (Demoted, attained_service.h), demoted jobs of its tier. Behind a
  // reservation of its nodes, only demoted jobs on GPUs that no such
  // reservation counts on.
  bool Preempts(const v1::Job& job, const GangRequest& request, bool behind_reservation);
  // Whether a reservation that competes with `queue_bit` counts on any GPU
  // of `allocation`.
  bool HeldForReservation(const v1::Allocation& allocation, uint64_t queue_bit) const;

  void Start(const v1::Job& job, const v1::Allocation& allocation);
  void Wait(const v1::Job& job, WaitCause cause, std::string reason,
            std::optional<absl::Time> estimated_start = std::nullopt);
  void Reserve(const v1::Job& job, Reservation reservation, uint64_t queue_bit, bool trusts_estimates,
               bool yields_to_small);
  // Whether the job's reservation lets jobs smaller than a node use its GPUs
  // (PlannedReservation::yields_to_small).
  bool YieldsToSmall(const v1::Job& job) const;
  // The reservation of the pass the job's queue competes with, or nullptr.
  const PlannedReservation* CompetingReservation(uint64_t queue_bit) const;
  // When the running jobs and those the pass started are expected to have
  // let go of their GPUs.
  std::vector<ExpectedEnd> ExpectedEnds(EndForecast::Which which);
  // Whether `request` could be placed on the nodes as they are (up, not
  // drained) once every placed job, and every job started in this pass, has
  // ended: false when it waits for nodes to come back, not for jobs.
  bool FitsOnceAllEnd(const GangRequest& request);

  PassInputs in_;
  const absl::Time now_;
  const int64_t largest_node_gpus_;  // whose multiples make a gang's starvation bound
  PassPlan plan_;
  std::vector<const v1::Job*> started_;  // plan_.starts' jobs, same order
  // Reservations and their holds: a deque, since the holds point into it.
  std::deque<PlannedReservation> reservations_;
  std::vector<std::unique_ptr<ReservationHold>> holds_;  // one per reservation, same order
  // Queues (queue_mask bits) held back behind a job that can start neither
  // now nor by a reservation: only jobs that compete with it for nodes.
  uint64_t blocked_ = 0;
  // Within a pass free resources only shrink (a backfilled job's brief use
  // of the reserved GPUs is never cached), so a shape that failed once
  // fails again: thousands of queued jobs share a few shapes. A shape is
  // the whole request: equal requests, equal answers.
  absl::flat_hash_map<GangRequest, std::string> failed_shapes_;  // shape -> why it cannot be placed
  // Shapes whose wait-or-spread was decided: why the last of them weighed
  // waits for a better placement ("" = it spread), and its expected run.
  // Waiting wins more surely the longer the run, so a job of the shape that
  // runs at least as long waits as that one did; a shorter one is weighed.
  struct SpreadVerdict {
    std::string waits_why;
    absl::Duration run;
  };
  absl::flat_hash_map<GangRequest, SpreadVerdict> waits_for_better_;
  int spread_choices_left_;
  absl::flat_hash_set<uint64_t> stopping_;   // victims of this pass's preemptions
  absl::flat_hash_set<uint64_t> cancelled_;  // their dependencies never met, this pass
  // The placed jobs' expected ends, by EndForecast::Which, worked out once
  // (again after a preemption, whose victims end sooner).
  std::array<std::optional<std::vector<ExpectedEnd>>, 2> placed_ends_;
};

}  // namespace gpusched::core
