#include "common/io/process/run_program.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace gpusched {
namespace {

void CloseBoth(int fds[2]) {
  for (int i = 0; i < 2; ++i) {
    if (fds[i] >= 0) close(fds[i]);
    fds[i] = -1;
  }
}

// The child's side of fork: nothing here may allocate or lock.
[[noreturn]] void ExecChild(char* const* argv, int out_fd, int err_fd, int errno_fd) {
  setpgid(0, 0);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);  // the agent's threads may block signals
  int null_fd = open("/dev/null", O_RDONLY);
  if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
  dup2(out_fd, STDOUT_FILENO);
  dup2(err_fd, STDERR_FILENO);
  execv(argv[0], argv);
  int e = errno;
  (void)!write(errno_fd, &e, sizeof e);  // close-on-exec: empty read means exec worked
  _exit(127);
}

}  // namespace

absl::StatusOr<ProgramOutput> RunProgram(const std::vector<std::string>& argv, absl::Duration timeout) {
  if (argv.empty()) return absl::InvalidArgumentError("RunProgram: no program");
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  int out[2] = {-1, -1}, err[2] = {-1, -1}, exec_errno[2] = {-1, -1};
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0 || pipe2(exec_errno, O_CLOEXEC) != 0) {
    const int e = errno;
    CloseBoth(out), CloseBoth(err), CloseBoth(exec_errno);
    return absl::ResourceExhaustedError(absl::StrCat("pipe: ", std::strerror(e)));
  }
  const absl::Time deadline = absl::Now() + timeout;
  const pid_t pid = fork();
  if (pid == 0) ExecChild(args.data(), out[1], err[1], exec_errno[1]);
  const int fork_errno = errno;
  close(out[1]), close(err[1]), close(exec_errno[1]);
  out[1] = err[1] = exec_errno[1] = -1;
  if (pid < 0) {
    CloseBoth(out), CloseBoth(err), CloseBoth(exec_errno);
    return absl::ResourceExhaustedError(absl::StrCat("fork: ", std::strerror(fork_errno)));
  }
  setpgid(pid, pid);  // also here: no race with a kill before the child got to it

  int child_errno = 0;
  const bool exec_failed = read(exec_errno[0], &child_errno, sizeof child_errno) == sizeof child_errno;
  CloseBoth(exec_errno);

  ProgramOutput result;
  struct pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int status = 0;
  bool reaped = false, timed_out = false;
  // Read until both pipes are closed and the child is reaped, or time is up.
  for (;;) {
    const bool pipes_open = fds[0].fd >= 0 || fds[1].fd >= 0;
    const pid_t waited = pipes_open ? 0 : waitpid(pid, &status, WNOHANG);
    if (waited < 0 && errno != EINTR) {  // a SIGCHLD handler of the host process reaped it
      return absl::InternalError(absl::StrCat("waitpid ", argv[0], ": ", std::strerror(errno)));
    }
    if (waited == pid) {
      reaped = true;
      break;
    }
    const int64_t left_ms = absl::ToInt64Milliseconds(deadline - absl::Now());
    if (left_ms <= 0) {
      timed_out = true;
      break;
    }
    if (!pipes_open) {  // closed its output but still running
      usleep(10000);
      continue;
    }
    if (poll(fds, 2, static_cast<int>(std::min<int64_t>(left_ms, 1000))) < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buffer[4096];
      const ssize_t n = read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        sinks[i]->append(buffer, n);
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
      }
    }
  }
  for (struct pollfd& p : fds) {
    if (p.fd >= 0) close(p.fd);
  }
  if (!reaped) {
    kill(-pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
  if (exec_failed) return absl::NotFoundError(absl::StrCat("cannot run ", argv[0], ": ", std::strerror(child_errno)));
  if (timed_out) {
    return absl::DeadlineExceededError(
        absl::StrCat(argv[0], " did not finish within ", absl::FormatDuration(timeout), "; killed it"));
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  return result;
}

}  // namespace gpusched
