#include "cli/cancel_command.h"

#include "absl/strings/str_cat.h"
#include "cli/job_action.h"

namespace gpusched::cli {

absl::StatusOr<int> RunCancel(const CancelOptions& options, CommandContext& cmd) {
  return ForEachJob(options.jobs, "cancel", "Cancelled", cmd, [&cmd](uint64_t id, const JobRef& typed) {
    v1::CancelJobRequest request;
    request.set_job_id(id);
    // A job array's bare id cancels all its tasks, as Slurm's scancel does;
    // "17_3" just that task.
    request.set_whole_array(!typed.array_index.has_value());
    // The daemon words it as "cancelled: <reason>".
    request.set_reason(absl::StrCat("by ", cmd.local.user.empty() ? "user" : cmd.local.user));
    return cmd.client.CancelJob(request).status();
  });
}

absl::StatusOr<int> RunHold(const CancelOptions& options, CommandContext& cmd) {
  return ForEachJob(options.jobs, "hold", "Held", cmd, [&cmd](uint64_t id, const JobRef& typed) {
    v1::HoldJobRequest request;
    request.set_job_id(id);
    request.set_whole_array(!typed.array_index.has_value());
    return cmd.client.HoldJob(request).status();
  });
}

absl::StatusOr<int> RunRelease(const CancelOptions& options, CommandContext& cmd) {
  return ForEachJob(options.jobs, "release", "Released", cmd, [&cmd](uint64_t id, const JobRef& typed) {
    v1::ReleaseJobRequest request;
    request.set_job_id(id);
    request.set_whole_array(!typed.array_index.has_value());
    return cmd.client.ReleaseJob(request).status();
  });
}

}  // namespace gpusched::cli
