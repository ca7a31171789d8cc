#include "agent/runner/exec_path.h"

#include <sys/stat.h>
#include <unistd.h>

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace gpusched::agent {

absl::StatusOr<std::string> ResolveExecutable(const std::string& name, const std::string& path_env) {
  if (name.empty()) return absl::InvalidArgumentError("the job's command (argv[0]) is empty");
  if (name.find('/') != std::string::npos) return name;
  std::string first_existing;
  for (absl::string_view dir : absl::StrSplit(path_env, ':')) {
    // execvp reads an empty entry as the current directory; here that would be
    // the agent's, not the job's, so it is skipped.
    if (dir.empty()) continue;
    std::string candidate = absl::StrCat(dir, "/", name);
    struct stat st;
    if (stat(candidate.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    if (first_existing.empty()) first_existing = candidate;
  }
  // Found only without execute permission: let exec fail and report EACCES.
  if (!first_existing.empty()) return first_existing;
  return absl::NotFoundError(absl::StrCat("exec \"", name, "\": No such file or directory"));
}

}  // namespace gpusched::agent
