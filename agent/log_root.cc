#include "agent/log_root.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gpusched::agent {
namespace {

// Another user may rename entries of this directory.
absl::Status CheckNotOthers(const std::string& path, const struct stat& st, bool is_root_itself) {
  const std::string which = is_root_itself ? absl::StrCat("log directory \"", path, "\"")
                                           : absl::StrCat("\"", path, "\", above the log directory,");
  const bool others_write = (st.st_mode & (S_IWGRP | S_IWOTH)) != 0;
  const bool sticky_ours = (st.st_mode & S_ISVTX) != 0 && (st.st_uid == 0 || st.st_uid == geteuid());
  if (others_write && (is_root_itself || !sticky_ours)) {
    return absl::FailedPreconditionError(absl::StrCat(
        which, " is writable by its group or by anyone (mode ", absl::StrFormat("%04o", st.st_mode & 07777),
        "): other users could redirect the agent's writes; chmod go-w it, or choose a directory only the agent "
        "writes"));
  }
  if (st.st_uid != geteuid() && st.st_uid != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(which, " belongs to uid ", st.st_uid,
                     ", not to the agent's user or root: that user could redirect the agent's writes; chown it"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckLogRoot(const std::string& dir) {
  struct stat st;
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat("log directory \"", dir, "\" is not a directory"));
  }
  if (access(dir.c_str(), W_OK | X_OK) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("log directory \"", dir, "\" is not writable: ", std::strerror(errno)));
  }
  if (absl::Status s = CheckNotOthers(dir, st, /*is_root_itself=*/true); !s.ok()) return s;
  for (std::filesystem::path up = std::filesystem::path(dir).parent_path(); !up.empty(); up = up.parent_path()) {
    struct stat above;
    if (stat(up.c_str(), &above) != 0) break;  // not ours to judge what we cannot see
    if (absl::Status s = CheckNotOthers(up.string(), above, /*is_root_itself=*/false); !s.ok()) return s;
    if (up == up.root_path()) break;
  }
  return absl::OkStatus();
}

}  // namespace gpusched::agent
