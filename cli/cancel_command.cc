#include "cli/cancel_command.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

#include "cli/errors.h"
#include "cli/job_id.h"

namespace gpusched::cli {

absl::StatusOr<int> RunCancel(const CancelOptions& options, CommandContext& cmd) {
  std::vector<uint64_t> ids;
  for (const std::string& text : options.jobs) {
    auto id = ParseJobId(text);
    if (!id.ok()) return id.status();
    ids.push_back(*id);
  }
  if (ids.empty()) return UsageError("cancel needs at least one JOB id");

  int exit_code = kExitOk;
  for (uint64_t id : ids) {
    v1::CancelJobRequest request;
    request.set_job_id(id);
    // The daemon words it as "cancelled: <reason>".
    request.set_reason(absl::StrCat("by ", cmd.local.user.empty() ? "user" : cmd.local.user));
    auto response = cmd.client.CancelJob(request);
    if (IsUnreachableError(response.status())) return response.status();
    if (!response.ok()) {
      absl::Status status = response.status();
      // With several ids the daemon's message must say which one it is about.
      if (!absl::StrContains(status.message(), absl::StrCat("job ", id))) {
        status = absl::Status(status.code(), absl::StrCat("job ", id, ": ", status.message()));
      }
      cmd.err << ErrorLine(status) << '\n';
      exit_code = kExitFailed;
      continue;
    }
    cmd.out << "Cancelled job " << id << '\n';
  }
  return exit_code;
}

}  // namespace gpusched::cli
