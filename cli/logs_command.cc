#include "cli/logs_command.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cli/errors.h"
#include "cli/job_id.h"
#include "cli/rank_log.h"
#include "common/job_states.h"

namespace gpusched::cli {
namespace {

constexpr absl::Duration kFollowInterval = absl::Milliseconds(500);

// Closes the descriptor on every return path.
class LogFile {
 public:
  explicit LogFile(int fd) : fd_(fd) {}
  ~LogFile() {
    if (fd_ >= 0) close(fd_);
  }
  LogFile(const LogFile&) = delete;
  LogFile& operator=(const LogFile&) = delete;

  // Copies what was appended since the last call; a plain read() at EOF
  // returns 0 and a later one sees new bytes, which is all `tail -f` needs.
  absl::Status CopyNewBytes(std::ostream& out, const RankLog& log) {
    char buffer[64 * 1024];
    while (true) {
      ssize_t n = read(fd_, buffer, sizeof buffer);
      if (n == 0) break;
      if (n < 0) {
        if (errno == EINTR) continue;
        return absl::InternalError(
            absl::StrCat("reading ", log.path, " (node ", log.node, "): ", std::strerror(errno)));
      }
      out.write(buffer, n);
    }
    out.flush();
    return absl::OkStatus();
  }

 private:
  int fd_;
};

absl::StatusOr<int> ParseRank(const std::optional<std::string>& text) {
  if (!text.has_value()) return 0;
  int rank = 0;
  if (!absl::SimpleAtoi(*text, &rank) || rank < 0) {
    return UsageError(absl::StrCat("invalid --rank \"", *text, "\": expected a rank, 0 or more"));
  }
  return rank;
}

}  // namespace

absl::StatusOr<int> RunLogs(const LogsOptions& options, CommandContext& cmd) {
  auto ref = ParseJobRef(options.job);
  if (!ref.ok()) return ref.status();
  auto rank = ParseRank(options.rank);
  if (!rank.ok()) return rank.status();
  auto id = ResolveJobRef(cmd.client, *ref);
  if (!id.ok()) return id.status();

  auto job = cmd.client.GetJob(*id);
  if (!job.ok()) return job.status();
  absl::StatusOr<RankLog> log = FindRankLog(*job, *rank);
  // A gang that is STARTING may not have created its files yet; following waits for them.
  while (!log.ok() && options.follow && job->state() == v1::JOB_STATE_STARTING) {
    cmd.local.sleep(kFollowInterval);
    job = cmd.client.GetJob(*id);
    if (!job.ok()) return job.status();
    log = FindRankLog(*job, *rank);
  }
  if (!log.ok()) return log.status();

  const int fd = open(log->path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::PermissionDeniedError(absl::StrCat("cannot read the log of rank ", *rank, " on node ", log->node, ": ",
                                                    log->path, ": ", std::strerror(errno)));
  }
  LogFile file(fd);
  while (true) {
    // Read the state before draining: bytes written before the job ended are
    // then always printed by the final drain.
    const bool over = IsTerminal(job->state());
    if (auto s = file.CopyNewBytes(cmd.out, *log); !s.ok()) return s;
    if (!options.follow || over) return kExitOk;
    cmd.local.sleep(kFollowInterval);
    job = cmd.client.GetJob(*id);
    if (!job.ok()) return job.status();
  }
}

}  // namespace gpusched::cli
