#pragma once

#include <cstdint>

#include "absl/time/time.h"
#include "common/clock.h"
#include "daemon/core/queue/runtime_history.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::core {

// The starvation bound of a job of `gpus` GPUs, on a cluster whose largest
// node has `largest_node_gpus`: how long it waits before it stops yielding
// to the jobs that rank above it. The one rule of the bound, for the
// ranking and the pass alike.
//
// A job that fits in a node: `head_blocks_after`. A gang (more GPUs than the
// largest node) is held to a bound that grows with the square of its size,
// `head_blocks_after` for a gang of kBoundGangNodes nodes, at most
// kMaxBoundScale times that: serving a gang first costs the jobs behind it
// its GPU-hours, which grow with its GPUs and (on real traces) its run time,
// so a small gang is served early and a large one later. On the ITP trace's
// busiest cluster the mean wait of the gangs is then lower than with one
// bound for all, for less wait of the rest (README, Queues).
//
// A gang that has waited its bound goes ahead of every job that has not
// (pending_ranking.h); until a job of a whole node or more has waited
// kOverdueFactor times its bound, its reservation still lets jobs smaller
// than a node use its GPUs (PlannedReservation::yields_to_small).
inline constexpr int kBoundGangNodes = 4;
inline constexpr double kMaxBoundScale = 4;
inline constexpr double kOverdueFactor = 2;
absl::Duration StarvationBound(absl::Duration head_blocks_after, int64_t gpus, int64_t largest_node_gpus);

// When jobs are expected to end: from their time limit where they give one
// (a hard limit), else from the run times learned for jobs like them
// (runtime_history.h). Backfill plans reservations with it, the ranking
// favours short work with it, wait-or-spread weighs costs with it.
class EndForecast {
 public:
  // Which end of a learned run time to plan with: a reservation plans with
  // the high one (a job that runs past it delays the reserved job); weighing
  // a wait against a slower run compares typical with typical.
  enum class Which { kHigh, kTypical };

  // `head_blocks_after` zero: strict queue order, where estimates would let
  // jobs pass around a reservation, so only time limits count.
  EndForecast(const Clock& clock, absl::Duration kill_grace, absl::Duration head_blocks_after,
              const RuntimeHistory& history)
      : clock_(clock), kill_grace_(kill_grace), head_blocks_after_(head_blocks_after), history_(history) {}

  // When a placed job is expected to have let go of its GPUs: its time
  // limit, else its estimated run time; InfiniteFuture if neither. A job
  // that is stopping is gone after the kill grace.
  absl::Time EndOf(const v1::Job& job, Which which) const;
  // How long the job is expected to run: its time limit, or the history's
  // typical run of jobs like it if shorter; InfiniteDuration if neither.
  // `mean`: the history's mean instead of its median (weighing costs).
  absl::Duration Run(const v1::JobSpec& spec, bool mean = false) const;
  // The same from an estimate the caller has already.
  static absl::Duration Run(const v1::JobSpec& spec, const RuntimeEstimate& estimate, bool mean = false);
  // Whether `job`, started now, is gone by `when`: by its time limit, or
  // (`trust_estimates`) by the high end of its estimated run time.
  bool EndsBy(const v1::Job& job, absl::Time when, bool trust_estimates) const;
  // The job's starvation bound (StarvationBound), and whether it has waited
  // `times` that.
  absl::Duration BoundOf(const v1::Job& job, int64_t largest_node_gpus) const;
  bool WaitedPastBound(const v1::Job& job, int64_t largest_node_gpus, double times = 1) const;

  // When a job told to stop now is gone: SIGKILL follows the kill grace.
  absl::Time StoppedBy() const { return clock_.Now() + kill_grace_; }
  absl::Time now() const { return clock_.Now(); }
  absl::Duration head_blocks_after() const { return head_blocks_after_; }

 private:
  const Clock& clock_;
  absl::Duration kill_grace_;
  absl::Duration head_blocks_after_;
  const RuntimeHistory& history_;
};

}  // namespace gpusched::core
