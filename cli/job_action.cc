#include "cli/job_action.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

#include "cli/errors.h"
#include "cli/job_id.h"

namespace gpusched::cli {

absl::StatusOr<int> ForEachJob(const std::vector<std::string>& jobs, const std::string& command,
                               const std::string& done, CommandContext& cmd,
                               const std::function<absl::Status(uint64_t)>& act) {
  std::vector<uint64_t> ids;
  for (const std::string& text : jobs) {
    auto id = ParseJobId(text);
    if (!id.ok()) return id.status();
    ids.push_back(*id);
  }
  if (ids.empty()) return UsageError(absl::StrCat(command, " needs at least one JOB id"));

  int exit_code = kExitOk;
  for (uint64_t id : ids) {
    absl::Status status = act(id);
    if (IsUnreachableError(status)) return status;
    if (!status.ok()) {
      // With several ids the daemon's message must say which one it is about.
      if (!absl::StrContains(status.message(), absl::StrCat("job ", id))) {
        status = absl::Status(status.code(), absl::StrCat("job ", id, ": ", status.message()));
      }
      cmd.err << ErrorLine(status) << '\n';
      exit_code = kExitFailed;
      continue;
    }
    cmd.out << done << " job " << id << '\n';
  }
  return exit_code;
}

}  // namespace gpusched::cli
