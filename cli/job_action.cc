#include "cli/job_action.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cli/errors.h"
#include "cli/job_id.h"
#include "cli/json_output.h"

namespace gpusched::cli {

absl::StatusOr<int> ForEachJob(const std::vector<std::string>& jobs, const std::string& command,
                               const std::string& done, bool json, CommandContext& cmd,
                               const std::function<absl::StatusOr<v1::Job>(uint64_t, const JobRef&)>& act) {
  std::vector<JobRef> refs;
  for (const std::string& text : jobs) {
    auto ref = ParseJobRef(text);
    if (!ref.ok()) return ref.status();
    refs.push_back(*ref);
  }
  if (refs.empty()) return UsageError(absl::StrCat(command, " needs at least one JOB id"));

  // Array tasks ("17_3") are looked up before anything is done, so that a
  // typo acts on none of the jobs.
  std::vector<uint64_t> ids;
  bool all_found = true;
  for (const JobRef& ref : refs) {
    absl::StatusOr<uint64_t> id = ResolveJobRef(cmd.client, ref);
    if (IsUnreachableError(id.status())) return id.status();
    if (!id.ok()) {
      cmd.err << ErrorLine(id.status()) << '\n';
      all_found = false;
    }
    ids.push_back(id.value_or(0));
  }
  if (!all_found) return kExitFailed;

  int exit_code = kExitOk;
  for (size_t i = 0; i < refs.size(); ++i) {
    const std::string& typed = jobs[i];
    absl::StatusOr<v1::Job> job = act(ids[i], refs[i]);
    absl::Status status = job.status();
    if (IsUnreachableError(status)) return status;
    if (!status.ok()) {
      // With several ids the daemon's message must say which one it is about.
      if (!absl::StrContains(status.message(), absl::StrCat("job ", typed)) &&
          !absl::StrContains(status.message(), absl::StrCat("job array ", refs[i].id)) &&
          !absl::StrContains(status.message(), absl::StrCat("job ", ids[i]))) {
        status = absl::Status(status.code(), absl::StrCat("job ", typed, ": ", status.message()));
      }
      cmd.err << ErrorLine(status) << '\n';
      exit_code = kExitFailed;
      continue;
    }
    if (!json) {
      cmd.out << done << " job " << typed << '\n';
    } else if (absl::Status printed = PrintJsonLine(cmd.out, *job); !printed.ok()) {
      return printed;
    }
  }
  return exit_code;
}

}  // namespace gpusched::cli
