#pragma once

#include "absl/time/time.h"
#include "common/clock.h"
#include "daemon/core/queue/runtime_history.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::core {

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
  // Whether `job` has waited head_blocks_after (the starvation bound).
  bool WaitedPastBound(const v1::Job& job) const;

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
