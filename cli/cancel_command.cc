#include "cli/cancel_command.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "cli/job_action.h"

namespace gpusched::cli {
namespace {

// The job as typed: a job array's bare id means all its tasks, as Slurm's
// scancel does; "17_3" just that task.
template <typename Request>
Request ForJob(uint64_t id, const JobRef& typed) {
  Request request;
  request.set_job_id(id);
  request.set_whole_array(!typed.array_index.has_value());
  return request;
}

}  // namespace

absl::StatusOr<int> RunCancel(const CancelOptions& options, CommandContext& cmd) {
  return ForEachJob(options.jobs, "cancel", "Cancelled", options.json, cmd,
                    [&cmd](uint64_t id, const JobRef& typed) -> absl::StatusOr<v1::Job> {
                      auto request = ForJob<v1::CancelJobRequest>(id, typed);
                      // The daemon words it as "cancelled: <reason>".
                      request.set_reason(absl::StrCat("by ", cmd.local.user.empty() ? "user" : cmd.local.user));
                      absl::StatusOr<v1::CancelJobResponse> response = cmd.client.CancelJob(request);
                      if (!response.ok()) return response.status();
                      return std::move(*response->mutable_job());
                    });
}

absl::StatusOr<int> RunHold(const CancelOptions& options, CommandContext& cmd) {
  return ForEachJob(options.jobs, "hold", "Held", options.json, cmd, [&cmd](uint64_t id, const JobRef& typed) {
    return cmd.client.HoldJob(ForJob<v1::HoldJobRequest>(id, typed));
  });
}

absl::StatusOr<int> RunRelease(const CancelOptions& options, CommandContext& cmd) {
  return ForEachJob(options.jobs, "release", "Released", options.json, cmd, [&cmd](uint64_t id, const JobRef& typed) {
    return cmd.client.ReleaseJob(ForJob<v1::ReleaseJobRequest>(id, typed));
  });
}

}  // namespace gpusched::cli
