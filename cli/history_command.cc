#include "cli/history_command.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "cli/errors.h"
#include "cli/history.h"
#include "common/job_states.h"
#include "common/proto_time.h"
#include "common/time_limit.h"

namespace gpusched::cli {

absl::StatusOr<int> RunHistory(const HistoryOptions& options, CommandContext& cmd) {
  if (options.limit < 0) return UsageError("--limit must be >= 0");
  v1::ListJobsRequest request;
  for (const std::string& text : options.states) {
    v1::JobState state;
    if (!ParseStateName(text, &state) || !IsTerminal(state)) {
      return UsageError(absl::StrCat("invalid --state \"", text,
                                     "\": history has COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL, PREEMPTED"));
    }
    request.add_states(state);
  }
  if (options.states.empty()) {
    for (int s = v1::JobState_MIN; s <= v1::JobState_MAX; ++s) {
      if (v1::JobState_IsValid(s) && IsTerminal(static_cast<v1::JobState>(s)))
        request.add_states(static_cast<v1::JobState>(s));
    }
  }
  absl::Time since = absl::InfinitePast();
  if (options.since.has_value()) {
    auto seconds = ParseTimeLimit(*options.since);
    if (!seconds.ok() || *seconds == 0) {
      return UsageError(absl::StrCat("invalid --since \"", *options.since,
                                     "\": expected how long ago, in Slurm time notation (90, 12:00:00, 7-00:00:00)"));
    }
    since = cmd.local.now() - absl::Seconds(*seconds);
  }
  if (options.user) request.set_user(*options.user);
  if (options.queue) request.set_queue(*options.queue);

  auto listed = ListAllJobs(cmd.client, request);
  if (!listed.ok()) return listed.status();
  google::protobuf::RepeatedPtrField<v1::Job> jobs;
  for (v1::Job& job : *listed->mutable_jobs()) {
    if (FromProtoTime(job.end_time()) >= since) *jobs.Add() = std::move(job);
  }
  std::stable_sort(jobs.begin(), jobs.end(), [](const v1::Job& a, const v1::Job& b) {
    return std::pair(FromProtoTime(a.end_time()), a.id()) < std::pair(FromProtoTime(b.end_time()), b.id());
  });
  if (options.limit > 0 && jobs.size() > options.limit) {
    jobs.DeleteSubrange(0, jobs.size() - options.limit);
  }
  cmd.out << (options.json ? RenderHistoryJson(jobs) : RenderHistoryTable(jobs, cmd.local.time_zone));
  return kExitOk;
}

}  // namespace gpusched::cli
