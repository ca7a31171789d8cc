#include "agent/runner/safe_open.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace gpusched::agent {

absl::StatusOr<int> OpenJobFile(const std::string& path, int flags, mode_t mode, const char* what) {
  // Truncating waits for the checks: a hard link must not lose its contents.
  const bool truncate = (flags & O_TRUNC) != 0;
  // O_NONBLOCK: a FIFO planted there must not hang the agent in open(); the
  // check below refuses it. It changes nothing for a plain file.
  int fd = open(path.c_str(), (flags & ~O_TRUNC) | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, mode);
  if (fd < 0) {
    const char* reason = errno == ELOOP ? "is a symbolic link" : std::strerror(errno);
    return absl::FailedPreconditionError(absl::StrCat(what, " \"", path, "\": ", reason));
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
    close(fd);
    return absl::FailedPreconditionError(absl::StrCat(what, " \"", path, "\" is not a plain file"));
  }
  if (truncate && ftruncate(fd, 0) != 0) {
    const int error = errno;
    close(fd);
    return absl::FailedPreconditionError(absl::StrCat(what, " \"", path, "\": ", std::strerror(error)));
  }
  return fd;
}

int WriteFully(int fd, absl::string_view text) {
  while (!text.empty()) {
    const ssize_t n = write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EIO;
    text.remove_prefix(static_cast<size_t>(n));
  }
  return 0;
}

}  // namespace gpusched::agent
