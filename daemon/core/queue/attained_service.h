#pragma once

#include "absl/time/time.h"
#include "daemon/core/queue/queue_policy.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::core {

// How long the job has run, its attempts together: what its earlier
// attempts ran (Job.earlier_run_s) plus the running one's time until `now`.
absl::Duration AttainedService(const v1::Job& job, absl::Time now);

// How long `queue` (the job's) lets the job run before demoting it:
// demote_after_s, times the GPUs it holds (HeldGpus, at least 1) where
// QueueSpec::demote_after_per_gpu says so; InfiniteDuration where the queue
// does not demote.
absl::Duration DemoteAfter(const v1::Job& job, const QueueSpec& queue);

// Whether `queue` (the job's) has demoted it by `now`: it has run
// DemoteAfter or longer (never where the queue is unknown).
bool Demoted(const v1::Job& job, const QueueSpec* queue, absl::Time now);

}  // namespace gpusched::core
