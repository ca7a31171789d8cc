#pragma once

#include <cstdint>

#include "absl/time/time.h"
#include "daemon/core/queue/fair_share.h"
#include "daemon/core/queue/queue_policy.h"
#include "daemon/core/queue/runtime_history.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::core {

// A pending job's factors (PriorityFactors in types.proto), kept as plain
// numbers: a refresh scores every pending job (pending_ranking.h).
struct PriorityScore {
  double age = 0;
  double fair_share = 0;
  double tier = 0;
  double job = 0;
  double size = 0;
  double short_work = 0;  // 0 where nothing says how long the job runs
  double total = 0;
  // What the ranking went by, for `gpusched status JOB`.
  absl::Duration expected_run = absl::InfiniteDuration();
  RuntimeEstimate estimate;

  v1::PriorityFactors ToProto() const;
};

// What every job of one pass is ranked against.
struct PriorityContext {
  const QueuePolicy* queues = nullptr;
  absl::Time now;
  int64_t cluster_gpus = 0;
  int64_t max_tier = 0;
};

// `fair_share` is FairShare::Factor of the job's user and account;
// `expected_run` how long the job is expected to run (its time limit or the
// history's estimate, InfiniteDuration if neither says).
PriorityScore ScoreJob(const v1::JobSpec& spec, absl::Time submitted, double fair_share, absl::Duration expected_run,
                       const PriorityContext& context);

}  // namespace gpusched::core
