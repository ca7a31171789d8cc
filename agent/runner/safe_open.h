#pragma once

#include <sys/types.h>

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gpusched::agent {

// Opens a file the agent writes inside a job's log directory. When the agent
// runs as root that directory belongs to the job's user, who could plant a
// symlink or hard link there (say rank-0.log -> /etc/shadow) for root to
// append to and chown; so links are refused and only a plain file is accepted.
// O_CLOEXEC is always added. `what` names the file in errors ("log file").
absl::StatusOr<int> OpenJobFile(const std::string& path, int flags, mode_t mode, const char* what);

// Writes all of `text` to `fd`, through interrupted and short writes. 0, or
// the errno of the write that failed (EIO for one that wrote nothing).
int WriteFully(int fd, absl::string_view text);

}  // namespace gpusched::agent
