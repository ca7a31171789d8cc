#include "agent/runner/process_spawner.h"

#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "agent/runner/safe_open.h"
#include "common/topology/cpu_list.h"

namespace gpusched::agent {
namespace {

// What the child reports through the close-on-exec pipe when it cannot exec.
enum class Stage : int {
  kSignals,
  kSetsid,
  kStdio,
  kCpuBind,
  kSetgroups,
  kSetgid,
  kSetuid,
  kChdir,
  kOutput,
  kError,
  kExec
};

struct ChildError {
  Stage stage;
  int error;
};

// NULL-terminated char* views of the strings; they must outlive the fork.
std::vector<char*> CArray(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const std::string& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// A sched_setaffinity mask sized for the highest CPU asked for; built before
// fork because CPU_ALLOC allocates.
class CpuMask {
 public:
  static absl::StatusOr<CpuMask> Of(const std::vector<int>& cpus) {
    CpuMask mask;
    if (cpus.empty()) return mask;
    int highest = 0;
    for (int cpu : cpus) {
      if (cpu < 0) return absl::InvalidArgumentError(absl::StrCat("CPU binding: negative CPU id ", cpu));
      highest = std::max(highest, cpu);
    }
    mask.set_.reset(CPU_ALLOC(highest + 1));
    if (!mask.set_) return absl::ResourceExhaustedError("CPU binding: CPU_ALLOC failed");
    mask.size_ = CPU_ALLOC_SIZE(highest + 1);
    CPU_ZERO_S(mask.size_, mask.set_.get());
    for (int cpu : cpus) CPU_SET_S(cpu, mask.size_, mask.set_.get());
    return mask;
  }
  const cpu_set_t* get() const { return set_.get(); }
  size_t size() const { return size_; }

 private:
  struct Free {
    void operator()(cpu_set_t* set) const { CPU_FREE(set); }
  };
  std::unique_ptr<cpu_set_t, Free> set_;
  size_t size_ = 0;
};

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() { Reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void Reset() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

// Runs in the forked child of a threaded process: only async-signal-safe calls,
// no allocation, until execve.
[[noreturn]] void RunChild(const ProcessSpec& spec, char* const* argv, char* const* envp, char* const* sh_argv,
                           const CpuMask& cpus, int devnull, int log, int err_log, int err_pipe) {
  auto fail = [err_pipe](Stage stage) {
    ChildError report{stage, errno};
    ssize_t ignored = write(err_pipe, &report, sizeof(report));
    (void)ignored;
    _exit(127);
  };

  // Signal handlers are reset by exec, but ignored signals and the mask are
  // inherited; the agent's binary blocks SIGTERM/SIGINT for sigwait, which a
  // job must not inherit or it could never be stopped with SIGTERM.
  struct sigaction dfl;
  std::memset(&dfl, 0, sizeof(dfl));
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) sigaction(sig, &dfl, nullptr);
  }
  sigset_t none;
  sigemptyset(&none);
  if (sigprocmask(SIG_SETMASK, &none, nullptr) != 0) fail(Stage::kSignals);

  if (setsid() < 0) fail(Stage::kSetsid);
  if (dup2(devnull, STDIN_FILENO) < 0 || dup2(log, STDOUT_FILENO) < 0 || dup2(err_log, STDERR_FILENO) < 0) {
    fail(Stage::kStdio);
  }
  // A session leader's first terminal of its own: Ctrl-C and hangups reach
  // its foreground process group.
  if (spec.controlling_tty && ioctl(STDIN_FILENO, TIOCSCTTY, 0) != 0) fail(Stage::kStdio);
  // A plain system call (no allocation, no locks in glibc), so safe here.
  // Before exec, so that even the job's first thread and everything it
  // starts stay on these CPUs.
  if (cpus.get() != nullptr && sched_setaffinity(0, cpus.size(), cpus.get()) != 0) fail(Stage::kCpuBind);
  if (spec.credentials) {
    const Credentials& c = *spec.credentials;
    if (setgroups(c.groups.size(), c.groups.data()) != 0) fail(Stage::kSetgroups);
    if (setgid(c.gid) != 0) fail(Stage::kSetgid);
    if (setuid(c.uid) != 0) fail(Stage::kSetuid);
  }
  // After the user switch, so that the workdir is checked with the job's rights.
  if (chdir(spec.workdir.c_str()) != 0) fail(Stage::kChdir);
  // The job's own file, opened with the job's rights, never the agent's.
  if (!spec.output_path.empty()) {
    const int out = open(spec.output_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOCTTY, 0644);
    if (out < 0 || dup2(out, STDOUT_FILENO) < 0 || dup2(out, STDERR_FILENO) < 0) fail(Stage::kOutput);
    if (out > STDERR_FILENO) close(out);
  }
  if (!spec.error_path.empty()) {
    const int err = open(spec.error_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOCTTY, 0644);
    if (err < 0 || dup2(err, STDERR_FILENO) < 0) fail(Stage::kError);
    if (err > STDERR_FILENO) close(err);
  }

  // The agent's own descriptors (gRPC sockets, other jobs' logs) stay behind;
  // only the error pipe must live until exec, which closes it (O_CLOEXEC).
  if (err_pipe > 3) close_range(3, err_pipe - 1, 0);
  close_range(err_pipe + 1, ~0U, 0);

  execve(spec.executable.c_str(), argv, envp);
  // A script without a #! line: do what a shell (and execvp) would.
  if (errno == ENOEXEC) execve("/bin/sh", sh_argv, envp);
  fail(Stage::kExec);
  _exit(127);  // not reached; fail() exits
}

std::string Describe(const ProcessSpec& spec, const ChildError& e) {
  std::string error = std::strerror(e.error);
  std::string as_user = spec.credentials ? absl::StrCat(" (as user ", spec.credentials->user, ")") : "";
  switch (e.stage) {
    case Stage::kSignals: return absl::StrCat("resetting the signal mask: ", error);
    case Stage::kSetsid: return absl::StrCat("setsid: ", error);
    case Stage::kStdio: return absl::StrCat("redirecting stdin/stdout/stderr: ", error);
    case Stage::kCpuBind:
      return absl::StrCat("binding to CPUs ", topology::FormatCpuList(spec.cpus), ": ", error,
                          " (the agent's --cpu-bind none turns binding off)");
    case Stage::kSetgroups:
    case Stage::kSetgid:
    case Stage::kSetuid:
      return absl::StrCat("switching to user ", spec.credentials ? spec.credentials->user : "?", ": ", error);
    case Stage::kChdir: return absl::StrCat("workdir \"", spec.workdir, "\": ", error, as_user);
    case Stage::kOutput: return absl::StrCat("output file \"", spec.output_path, "\": ", error, as_user);
    case Stage::kError: return absl::StrCat("error file \"", spec.error_path, "\": ", error, as_user);
    case Stage::kExec:
      return absl::StrCat("exec \"", spec.argv.empty() ? spec.executable : spec.argv[0], "\": ", error, as_user);
  }
  return absl::StrCat("starting the process: ", error);
}

}  // namespace

int AboveStdio(int fd) {
  if (fd < 0 || fd > STDERR_FILENO) return fd;
  int moved = fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
  close(fd);
  return moved;
}

absl::StatusOr<pid_t> SpawnProcess(const ProcessSpec& spec) {
  if (spec.argv.empty()) return absl::InvalidArgumentError("empty command");

  // Everything the child touches is built here: after fork it may not allocate.
  std::vector<char*> argv = CArray(spec.argv);
  std::vector<char*> envp = CArray(spec.env);
  std::vector<std::string> sh_strings = {"/bin/sh", spec.executable};
  sh_strings.insert(sh_strings.end(), spec.argv.begin() + 1, spec.argv.end());
  std::vector<char*> sh_argv = CArray(sh_strings);
  auto cpus = CpuMask::Of(spec.cpus);
  if (!cpus.ok()) return cpus.status();

  const bool given_stdio = spec.stdin_fd >= 0 && spec.stdout_fd >= 0 && spec.stderr_fd >= 0;
  if (given_stdio &&
      (spec.stdin_fd <= STDERR_FILENO || spec.stdout_fd <= STDERR_FILENO || spec.stderr_fd <= STDERR_FILENO)) {
    return absl::InvalidArgumentError("a process's given stdin, stdout and stderr must be above descriptor 2");
  }
  const std::string stdin_path = spec.stdin_path.empty() ? "/dev/null" : spec.stdin_path;
  Fd devnull(given_stdio ? -1 : AboveStdio(open(stdin_path.c_str(), O_RDONLY | O_CLOEXEC)));
  if (!given_stdio && devnull.get() < 0) {
    return absl::FailedPreconditionError(absl::StrCat("open ", stdin_path, ": ", std::strerror(errno)));
  }
  int opened_log = -1;
  if (!given_stdio) {
    auto log_fd = OpenJobFile(spec.log_path, O_WRONLY | O_CREAT | O_APPEND, 0640, "log file");
    if (!log_fd.ok()) return log_fd.status();
    opened_log = AboveStdio(*log_fd);
  }
  Fd log(opened_log);
  if (!given_stdio) {
    if (log.get() < 0) return absl::InternalError(absl::StrCat("log file: fcntl: ", std::strerror(errno)));
    if (spec.credentials && fchown(log.get(), spec.credentials->uid, spec.credentials->gid) != 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("log file \"", spec.log_path, "\": chown: ", std::strerror(errno)));
    }
  }
  const int child_in = given_stdio ? spec.stdin_fd : devnull.get();
  const int child_out = given_stdio ? spec.stdout_fd : log.get();
  const int child_err = given_stdio ? spec.stderr_fd : log.get();
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  Fd err_read(AboveStdio(pipe_fds[0]));
  Fd err_write(AboveStdio(pipe_fds[1]));
  if (err_read.get() < 0 || err_write.get() < 0) {
    return absl::InternalError(absl::StrCat("pipe: fcntl: ", std::strerror(errno)));
  }

  pid_t pid = fork();
  if (pid < 0) return absl::ResourceExhaustedError(absl::StrCat("fork: ", std::strerror(errno)));
  if (pid == 0) {
    RunChild(spec, argv.data(), envp.data(), sh_argv.data(), *cpus, child_in, child_out, child_err, err_write.get());
  }

  err_write.Reset();
  ChildError report{};
  size_t got = 0;
  while (got < sizeof(report)) {
    ssize_t n = read(err_read.get(), reinterpret_cast<char*>(&report) + got, sizeof(report) - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  // EOF without a report: exec closed the pipe, the command is running.
  if (got == 0) return pid;

  int status;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (got < sizeof(report)) return absl::InternalError("the child died before exec without saying why");
  return absl::FailedPreconditionError(Describe(spec, report));
}

}  // namespace gpusched::agent
