#include "cli/status_command.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/errors.h"
#include "cli/job_detail.h"
#include "cli/job_id.h"
#include "cli/job_table.h"
#include "cli/json_output.h"
#include "common/job_states.h"

namespace gpusched::cli {
namespace {

absl::StatusOr<int> ShowOneJob(const StatusOptions& options, CommandContext& cmd) {
  if (options.all || !options.states.empty() || options.user || options.queue) {
    return UsageError("--all, --state, --user and --queue filter the job list; drop them or the JOB id");
  }
  auto id = FindJobId(cmd.client, *options.job);
  if (!id.ok()) return id.status();
  auto job = cmd.client.GetJob(*id);
  if (!job.ok()) return job.status();
  if (options.json) {
    if (absl::Status s = PrintJsonLine(cmd.out, *job); !s.ok()) return s;
  } else {
    cmd.out << RenderJobDetail(*job, cmd.local.now(), cmd.local.time_zone);
  }
  return kExitOk;
}

}  // namespace

absl::StatusOr<v1::ListJobsRequest> BuildListJobsRequest(const StatusOptions& options) {
  v1::ListJobsRequest request;
  for (const std::string& text : options.states) {
    v1::JobState state;
    if (!ParseStateName(text, &state)) {
      std::vector<std::string> names;
      for (int s = v1::JobState_MIN + 1; s <= v1::JobState_MAX; ++s) {
        if (v1::JobState_IsValid(s)) names.emplace_back(StateName(static_cast<v1::JobState>(s)));
      }
      return UsageError(absl::StrCat("invalid --state \"", text, "\": expected one of ", absl::StrJoin(names, ", ")));
    }
    request.add_states(state);
  }
  if (options.states.empty() && !options.all) {
    for (v1::JobState state : {v1::JOB_STATE_PENDING, v1::JOB_STATE_STARTING, v1::JOB_STATE_RUNNING}) {
      request.add_states(state);
    }
  }
  if (options.user) request.set_user(*options.user);
  if (options.queue) request.set_queue(*options.queue);
  return request;
}

absl::StatusOr<int> RunStatus(const StatusOptions& options, CommandContext& cmd) {
  if (options.job.has_value()) return ShowOneJob(options, cmd);

  auto request = BuildListJobsRequest(options);
  if (!request.ok()) return request.status();
  auto jobs = ListAllJobs(cmd.client, *request);
  if (!jobs.ok()) return jobs.status();
  std::stable_sort(jobs->mutable_jobs()->begin(), jobs->mutable_jobs()->end(),
                   [](const v1::Job& a, const v1::Job& b) { return a.id() < b.id(); });
  if (options.json) {
    if (absl::Status s = PrintJsonLine(cmd.out, *jobs); !s.ok()) return s;
  } else {
    cmd.out << RenderJobTable(jobs->jobs(), cmd.local.now());
  }
  return kExitOk;
}

}  // namespace gpusched::cli
