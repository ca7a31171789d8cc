#include "cli/job_action.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

#include "cli/errors.h"
#include "cli/job_id.h"

namespace gpusched::cli {

absl::StatusOr<int> ForEachJob(const std::vector<std::string>& jobs, const std::string& command,
                               const std::string& done, CommandContext& cmd,
                               const std::function<absl::Status(uint64_t, const JobRef&)>& act) {
  std::vector<JobRef> refs;
  for (const std::string& text : jobs) {
    auto ref = ParseJobRef(text);
    if (!ref.ok()) return ref.status();
    refs.push_back(*ref);
  }
  if (refs.empty()) return UsageError(absl::StrCat(command, " needs at least one JOB id"));

  int exit_code = kExitOk;
  for (size_t i = 0; i < refs.size(); ++i) {
    const std::string& typed = jobs[i];
    absl::StatusOr<uint64_t> id = ResolveJobRef(cmd.client, refs[i]);
    absl::Status status = id.ok() ? act(*id, refs[i]) : id.status();
    if (IsUnreachableError(status)) return status;
    if (!status.ok()) {
      // With several ids the daemon's message must say which one it is about.
      if (!absl::StrContains(status.message(), absl::StrCat("job ", typed)) &&
          !absl::StrContains(status.message(), absl::StrCat("job array ", refs[i].id))) {
        status = absl::Status(status.code(), absl::StrCat("job ", typed, ": ", status.message()));
      }
      cmd.err << ErrorLine(status) << '\n';
      exit_code = kExitFailed;
      continue;
    }
    cmd.out << done << " job " << typed << '\n';
  }
  return exit_code;
}

}  // namespace gpusched::cli
