#include "agent/runner/job_shim.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "agent/runner/process_start_time.h"

namespace gpusched::agent {
namespace {

// Above the numbers the child dup2()s onto (0, 1 and the exits file's), so
// that no dup2 clobbers a descriptor still to be moved.
constexpr int kFirstFreeFd = 10;

int MoveUp(int fd) {
  if (fd < 0) return fd;
  const int moved = fcntl(fd, F_DUPFD_CLOEXEC, kFirstFreeFd);
  close(fd);
  return moved;
}

// Starts the shim with the spec socket as its stdin and stdout and the exits
// file at kShimExitsFd, nothing else of ours (stderr stays the agent's), and
// no environment. posix_spawn, not fork: glibc's child shares our memory
// until it execs, so a launch costs no copy of the agent's page tables and
// none of the copy-on-write faults after it (the agent is multi-threaded
// and its address space large); an exec that fails is its return value.
absl::StatusOr<pid_t> SpawnShim(const std::string& program, int channel, int exits, const std::string& name) {
  posix_spawn_file_actions_t actions;
  if (int error = posix_spawn_file_actions_init(&actions); error != 0) {
    return absl::ResourceExhaustedError(absl::StrCat("posix_spawn_file_actions_init: ", std::strerror(error)));
  }
  int error = posix_spawn_file_actions_adddup2(&actions, channel, STDIN_FILENO);
  if (error == 0) error = posix_spawn_file_actions_adddup2(&actions, channel, STDOUT_FILENO);
  if (error == 0) error = posix_spawn_file_actions_adddup2(&actions, exits, kShimExitsFd);
  if (error == 0) error = posix_spawn_file_actions_addclosefrom_np(&actions, kShimExitsFd + 1);
  pid_t pid = -1;
  if (error == 0) {
    std::string program_arg = program, name_arg = name;
    char* argv[] = {program_arg.data(), name_arg.data(), nullptr};
    char* no_env[] = {nullptr};
    error = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv, no_env);
  }
  posix_spawn_file_actions_destroy(&actions);
  if (error == 0) return pid;
  if (error == EAGAIN || error == ENOMEM) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot start the job shim ", program, ": ", std::strerror(error)));
  }
  return absl::FailedPreconditionError(absl::StrCat("cannot run the job shim ", program, ": ", std::strerror(error)));
}

// Debian 12's <sys/pidfd.h> declares these without C linkage, so C++ cannot
// link against them; the system calls are the same.
int PidfdOpen(pid_t pid) { return static_cast<int>(syscall(SYS_pidfd_open, pid, 0)); }
int PidfdSendSignal(int pidfd, int sig) {
  return static_cast<int>(syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0));
}

void Reap(pid_t pid) {
  int status;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

// Waits until `fd` is ready for `events`, or `deadline` passes (false).
bool ReadyBy(int fd, short events, absl::Time deadline) {
  while (true) {
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) return false;
    pollfd p{fd, events, 0};
    const int ready = poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(absl::Ceil(left, absl::Milliseconds(1)))));
    if (ready > 0) return true;
    if (ready < 0 && errno != EINTR) return true;  // the read or send says what is wrong
  }
}

}  // namespace

JobShim::JobShim(pid_t pid, int pidfd, uint64_t start_time, std::vector<pid_t> groups)
    : pid_(pid), pidfd_(pidfd), start_time_(start_time), groups_(std::move(groups)) {}

JobShim::JobShim(JobShim&& other) noexcept
    : pid_(other.pid_),
      pidfd_(std::exchange(other.pidfd_, -1)),
      start_time_(other.start_time_),
      groups_(std::move(other.groups_)) {}

JobShim& JobShim::operator=(JobShim&& other) noexcept {
  if (this != &other) {
    if (pidfd_ >= 0) close(pidfd_);
    pid_ = other.pid_;
    pidfd_ = std::exchange(other.pidfd_, -1);
    start_time_ = other.start_time_;
    groups_ = std::move(other.groups_);
  }
  return *this;
}

JobShim::~JobShim() {
  if (pidfd_ >= 0) close(pidfd_);
}

absl::StatusOr<JobShim> JobShim::Start(const std::string& shim_program, const ShimSpec& spec,
                                       const std::string& exits_path, absl::Duration reply_base,
                                       std::optional<JobShim>* abandoned) {
  const int exits =
      MoveUp(open(exits_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (exits < 0) {
    return absl::ResourceExhaustedError(absl::StrCat("cannot create ", exits_path, ": ", std::strerror(errno)));
  }
  // Room for every line the shim will write, taken now: the jobs' own logs
  // may fill the disk later, and a lost line is a lost exit status.
  const off_t room = 4096 + 128 * static_cast<off_t>(spec.ranks.size());
  if (fallocate(exits, FALLOC_FL_KEEP_SIZE, 0, room) != 0 && errno != EOPNOTSUPP) {
    const int error = errno;
    close(exits);
    return absl::ResourceExhaustedError(absl::StrCat("cannot make room in ", exits_path, ": ", std::strerror(error)));
  }
  // One socket both ways: the spec in, the reply out. A socket rather than
  // pipes so that a shim that died early costs a write error, not SIGPIPE.
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    const int error = errno;
    close(exits);
    return absl::InternalError(absl::StrCat("socketpair: ", std::strerror(error)));
  }
  const int mine = MoveUp(pair[0]);
  const int theirs = MoveUp(pair[1]);
  if (mine < 0 || theirs < 0) {
    const int error = errno;
    for (int fd : {mine, theirs, exits}) {
      if (fd >= 0) close(fd);
    }
    return absl::InternalError(absl::StrCat("fcntl: ", std::strerror(error)));
  }
  // Named after its job in ps.
  const absl::StatusOr<pid_t> spawned = SpawnShim(shim_program, theirs, exits, absl::StrCat("job-", spec.job_id));
  close(theirs);
  close(exits);
  if (!spawned.ok()) {
    close(mine);
    return spawned.status();
  }
  const pid_t pid = *spawned;
  const std::string encoded = EncodeShimSpec(spec);
  // The shim runs each rank's cleanup first, and again if a later rank
  // fails to start, a minute at most each time.
  absl::Duration reply_within = reply_base;
  for (const ProcessSpec& rank : spec.ranks) {
    if (!rank.cleanup_argv.empty()) reply_within += absl::Minutes(2);
  }
  const absl::Time deadline = absl::Now() + reply_within;

  bool answered = true;
  for (size_t done = 0; done < encoded.size();) {
    if (!ReadyBy(mine, POLLOUT, deadline)) {
      answered = false;
      break;
    }
    const ssize_t n = send(mine, encoded.data() + done, encoded.size() - done, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) break;  // it died: its reply (or none) says why
    done += static_cast<size_t>(n);
  }
  shutdown(mine, SHUT_WR);
  std::string reply;
  char buffer[4096];
  while (answered) {
    if (!ReadyBy(mine, POLLIN, deadline)) {
      answered = false;
      break;
    }
    const ssize_t n = read(mine, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    reply.append(buffer, static_cast<size_t>(n));
  }
  close(mine);
  if (!answered) {
    // Not killed: ranks it started are in sessions of their own, and would
    // outlive it unseen. It kills them itself when its reply finds no one.
    // Our unreaped child: the pid is still its own, dead or alive.
    const int pidfd = abandoned != nullptr ? PidfdOpen(pid) : -1;
    if (pidfd >= 0) {
      abandoned->emplace(JobShim(pid, pidfd, ProcessStartTime(pid), {}));
    } else {
      std::thread([pid] { Reap(pid); }).detach();
    }
    return absl::DeadlineExceededError(absl::StrCat(
        "the job shim did not say within ", absl::FormatDuration(reply_within),
        " whether the ranks started (an executable, working directory or log file on a filesystem that hangs?); "
        "whatever it starts it stops once it finds the agent gone"));
  }

  auto groups = ParseShimReply(reply);
  if (!groups.ok()) {
    Reap(pid);
    return groups.status();
  }
  // Our unreaped child: the pid is still its own.
  const int pidfd = PidfdOpen(pid);
  if (pidfd < 0) {
    const int error = errno;
    kill(pid, kShimKillSignal);
    Reap(pid);
    return absl::InternalError(absl::StrCat("pidfd_open of the job shim: ", std::strerror(error)));
  }
  return JobShim(pid, pidfd, ProcessStartTime(pid), *std::move(groups));
}

absl::StatusOr<JobShim> JobShim::Adopt(pid_t pid, uint64_t start_time, std::vector<pid_t> groups) {
  if (pid <= 1 || start_time == 0) return absl::NotFoundError("no shim recorded");
  const int pidfd = PidfdOpen(pid);
  if (pidfd < 0) return absl::NotFoundError(absl::StrCat("shim pid ", pid, " is gone"));
  // Checked after the pidfd pins the process: a later check could not be
  // fooled by a reused pid.
  if (ProcessStartTime(pid) != start_time) {
    close(pidfd);
    return absl::NotFoundError(absl::StrCat("pid ", pid, " is another process now"));
  }
  // Dead but not yet reaped is dead.
  pollfd p{pidfd, POLLIN, 0};
  if (poll(&p, 1, 0) > 0) {
    close(pidfd);
    return absl::NotFoundError(absl::StrCat("shim pid ", pid, " has exited"));
  }
  return JobShim(pid, pidfd, start_time, std::move(groups));
}

int JobShim::KillGroups(const ShimExits& shim) {
  int killed = 0;
  for (const ShimExits::Group& g : shim.groups) {
    if (g.start_time != 0 && ProcessStartTime(g.pgid) == g.start_time && kill(-g.pgid, SIGKILL) == 0) ++killed;
  }
  return killed;
}

bool JobShim::Signal(int sig) const { return pidfd_ >= 0 && PidfdSendSignal(pidfd_, sig) == 0; }

bool JobShim::Exited() {
  if (pidfd_ < 0) return true;
  pollfd p{pidfd_, POLLIN, 0};
  if (poll(&p, 1, 0) <= 0) return false;
  siginfo_t info{};
  // ECHILD for an adopted shim: its parent (init, or a subreaper) reaps it.
  waitid(P_PIDFD, static_cast<id_t>(pidfd_), &info, WEXITED | WNOHANG);
  return true;
}

}  // namespace gpusched::agent
