#include "agent/runner/preempt_notice.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "agent/runner/safe_open.h"

namespace gpusched::agent {

std::string PreemptNoticePath(const std::string& job_log_dir) { return absl::StrCat(job_log_dir, "/preempt-notice"); }

absl::Status WritePreemptNotice(const std::string& job_log_dir, absl::Time deadline, absl::Time now,
                                const std::string& reason) {
  std::string one_line = reason;
  std::replace(one_line.begin(), one_line.end(), '\n', ' ');
  const std::string text = absl::StrCat(
      "deadline_unix_ms=", absl::ToUnixMillis(deadline), "\n",
      "deadline=", absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", deadline, absl::UTCTimeZone()), "\n",
      "seconds_left=", std::max<int64_t>(0, absl::ToInt64Seconds(deadline - now)), "\n", "reason=", one_line, "\n");
  const std::string path = PreemptNoticePath(job_log_dir);
  auto fd = OpenJobFile(path, O_WRONLY | O_CREAT | O_TRUNC, 0644, "preemption notice");
  if (!fd.ok()) return fd.status();
  const int error = WriteFully(*fd, text);
  close(*fd);
  if (error != 0) {
    return absl::InternalError(absl::StrCat("preemption notice \"", path, "\": write: ", std::strerror(error)));
  }
  return absl::OkStatus();
}

void ClearPreemptNotice(const std::string& job_log_dir) { unlink(PreemptNoticePath(job_log_dir).c_str()); }

}  // namespace gpusched::agent
