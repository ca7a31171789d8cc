#include "cli/wait_for_job.h"

#include "cli/errors.h"
#include "common/job_states.h"

namespace gpusched::cli {
namespace {

constexpr absl::Duration kWatchRound = absl::Seconds(30);
constexpr absl::Duration kPollInterval = absl::Seconds(1);
constexpr absl::Duration kUnreachableGrace = absl::Minutes(5);

}  // namespace

absl::StatusOr<v1::Job> WaitForJob(SchedulerClient& client, uint64_t job_id, const LocalContext& ctx) {
  bool can_watch = true;
  absl::Time unreachable_since = absl::InfiniteFuture();
  while (true) {
    auto job = client.GetJob(job_id);
    if (IsUnreachableError(job.status())) {
      const absl::Time now = ctx.now();
      if (unreachable_since == absl::InfiniteFuture()) unreachable_since = now;
      if (now - unreachable_since >= kUnreachableGrace) return job.status();
      ctx.sleep(kPollInterval);
      continue;
    }
    if (!job.ok()) return job.status();
    unreachable_since = absl::InfiniteFuture();
    if (IsTerminal(job->state())) return job;

    if (!can_watch) {
      ctx.sleep(kPollInterval);
      continue;
    }
    v1::WatchJobsRequest request;
    request.add_job_ids(job_id);
    const absl::Time started = ctx.now();
    bool ended = false;
    absl::Status watched = client.WatchJobs(request, kWatchRound, [&](const v1::JobEvent& event) {
      if (event.job_id() == 0) {
        // The watch is in place: an end between our GetJob and it would
        // never come as an event, so read the job once more.
        auto again = client.GetJob(job_id);
        ended = again.ok() && IsTerminal(again->state());
      } else {
        ended = event.job_id() == job_id && IsTerminal(event.state());
      }
      return !ended;
    });
    // GetJob is the source of truth and reports real failures; a watch that
    // breaks (the daemon shed a slow watcher, restarted, ...) only costs a poll.
    if (absl::IsUnimplemented(watched)) can_watch = false;
    // A stream that closes at once must not turn this loop into a busy poll.
    if (!ended && ctx.now() - started < kPollInterval) ctx.sleep(kPollInterval);
  }
}

}  // namespace gpusched::cli
