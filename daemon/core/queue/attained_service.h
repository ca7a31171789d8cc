#pragma once

#include "absl/time/time.h"
#include "daemon/core/queue/queue_policy.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::core {

// How long the job has run, its attempts together: what its earlier
// attempts ran (Job.earlier_run_s) plus the running one's time until `now`.
absl::Duration AttainedService(const v1::Job& job, absl::Time now);

// Whether `queue` (the job's) has demoted it by `now`: it has run
// demote_after_s or longer (QueueSpec::demote_after_s; never where that is 0
// or the queue is unknown).
bool Demoted(const v1::Job& job, const QueueSpec* queue, absl::Time now);

}  // namespace gpusched::core
