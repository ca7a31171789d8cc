#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "cli/client.h"
#include "cli/local_context.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::cli {

// Blocks until the job is terminal and returns it as GetJob last saw it.
//
// It watches with WatchJobs in bounded rounds and re-reads the job with GetJob
// once the daemon says the watch is in place, and between rounds: an end that
// happens before the watch is registered is then noticed at once (or, from a
// daemon that does not say so, at the next round) instead of never. A daemon
// without WatchJobs, or a watch that breaks, falls back to polling. A daemon
// that goes away is retried for a while, so a daemon restart does not fail a
// long `submit --wait`.
absl::StatusOr<v1::Job> WaitForJob(SchedulerClient& client, uint64_t job_id, const LocalContext& ctx);

}  // namespace gpusched::cli
