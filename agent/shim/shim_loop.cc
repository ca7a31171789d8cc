#include "agent/shim/shim_loop.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/runner/process_spawner.h"
#include "agent/runner/process_start_time.h"
#include "agent/runner/safe_open.h"
#include "agent/runner/shim_protocol.h"

namespace gpusched::agent {
namespace {

using Clock = std::chrono::steady_clock;

struct Rank {
  int rank = 0;
  pid_t pid = 0;  // also its process group
  bool exited = false;
};

// False when it could not (the agent is gone, the disk is full).
bool WriteAll(int fd, absl::string_view text) { return WriteFully(fd, text) == 0; }

std::string ReadAll(int fd) {
  std::string out;
  char buffer[65536];
  while (true) {
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return out;
    out.append(buffer, static_cast<size_t>(n));
  }
}

// A rank's cleanup (ProcessSpec::cleanup_argv), waited for: a container
// must be gone before the shim says the rank ended, or the GPUs it holds
// could go to the next job while it still runs. Quiet, and given a minute.
void RunCleanup(const ProcessSpec& process) {
  if (process.cleanup_argv.empty()) return;
  std::vector<char*> argv, envp;
  for (const std::string& a : process.cleanup_argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const std::string& e : process.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return;
  if (pid == 0) {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    setsid();
    const int null_fd = open("/dev/null", O_RDWR);
    for (int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) dup2(null_fd, fd);
    close_range(3, ~0U, 0);
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  int status = 0;
  while (true) {
    const pid_t got = waitpid(pid, &status, WNOHANG);
    if (got == pid || (got < 0 && errno != EINTR)) return;
    if (Clock::now() >= deadline) {
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      return;
    }
    const timespec pause = {0, 10'000'000};
    nanosleep(&pause, nullptr);
  }
}

void SignalLive(const std::vector<Rank>& ranks, int sig) {
  for (const Rank& r : ranks) {
    if (!r.exited) kill(-r.pid, sig);
  }
}

// The signals the loop waits for, blocked from the start so that none is
// lost between two waits; the ranks get a clean mask from SpawnProcess.
sigset_t LoopSignals() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGPIPE, kShimKillSignal, kShimRenewSignal, ShimFenceSignal()}) {
    sigaddset(&set, sig);
  }
  return set;
}

}  // namespace

int RunShim(int spec_fd, int reply_fd, int exits_fd) {
  // Its own session: a signal to the agent's process group (a Ctrl-C on a
  // foreground agent) is not one to the jobs.
  setsid();
  // Whatever the agent ignored would be inherited; an ignored SIGCHLD would
  // even reap the ranks before their status could be read.
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) signal(sig, SIG_DFL);
  }
  const sigset_t waited = LoopSignals();
  sigprocmask(SIG_SETMASK, &waited, nullptr);

  auto spec = DecodeShimSpec(ReadAll(spec_fd));
  close(spec_fd);
  if (!spec.ok()) {
    WriteAll(reply_fd, absl::StrCat("failed ", spec.status().message(), "\n"));
    return 2;
  }

  WriteAll(exits_fd, FormatShimLine(getpid(), ProcessStartTime(getpid())));
  std::vector<Rank> ranks;
  for (const ProcessSpec& process : spec->ranks) {
    RunCleanup(process);  // what an earlier attempt may have left under the same name
    auto pid = SpawnProcess(process);
    if (!pid.ok()) {
      // All ranks or none.
      for (size_t i = 0; i < ranks.size(); ++i) {
        kill(-ranks[i].pid, SIGKILL);
        int status;
        while (waitpid(ranks[i].pid, &status, 0) < 0 && errno == EINTR) {
        }
        RunCleanup(spec->ranks[i]);
      }
      const std::string message = spec->ranks.size() > 1
                                      ? absl::StrCat("rank ", process.rank, ": ", pid.status().message())
                                      : std::string(pid.status().message());
      WriteAll(reply_fd, absl::StrCat("failed ", message, "\n"));
      return 1;
    }
    ranks.push_back(Rank{process.rank, *pid, false});
  }
  std::vector<pid_t> groups;
  for (const Rank& r : ranks) {
    groups.push_back(r.pid);
    WriteAll(exits_fd, FormatGroupLine({r.rank, r.pid, ProcessStartTime(r.pid)}));
  }
  const bool told = WriteAll(reply_fd, absl::StrCat("started ", absl::StrJoin(groups, " "), "\n"));
  close(reply_fd);

  size_t live = ranks.size();
  // Every rank is looked at on every wake: SIGCHLDs coalesce.
  auto reap = [&] {
    for (size_t i = 0; i < ranks.size(); ++i) {
      Rank& r = ranks[i];
      if (r.exited) continue;
      int status = 0;
      const pid_t got = waitpid(r.pid, &status, WNOHANG);
      const int wait_errno = errno;
      if (got == 0 || (got < 0 && wait_errno == EINTR)) continue;
      r.exited = true;
      --live;
      // What the rank left in its group would outlive the job and hold its
      // GPUs; the group id cannot be reused while members remain.
      kill(-r.pid, SIGKILL);
      RunCleanup(spec->ranks[i]);
      WriteAll(exits_fd, FormatRankExit(got < 0 ? RankExit{r.rank, 0, wait_errno} : RankExit{r.rank, status, 0}));
    }
  };
  bool fenced = false;
  auto fence = [&] {
    if (fenced) return;
    fenced = true;
    reap();  // a rank that has ended ended as it did
    if (live == 0) return;
    SignalLive(ranks, SIGKILL);
    WriteAll(exits_fd, kShimFencedLine);
  };
  // The agent died while the ranks started: no agent may know of them, and
  // the daemon will run the job again.
  if (!told) fence();

  const bool leased = spec->lease > absl::ZeroDuration();
  const auto lease = std::chrono::milliseconds(absl::ToInt64Milliseconds(spec->lease));
  Clock::time_point lease_end = Clock::now() + lease;
  while (true) {
    reap();
    if (live == 0) break;

    const Clock::time_point now = Clock::now();
    if (leased && now >= lease_end && !fenced) {
      // No agent renewed the lease: the daemon is giving this job up and
      // may start it elsewhere.
      fence();
      continue;
    }
    auto wait = std::chrono::milliseconds(1000);
    if (leased && !fenced) {
      wait = std::min(wait, std::chrono::ceil<std::chrono::milliseconds>(lease_end - now));
    }
    const timespec timeout = {static_cast<time_t>(wait.count() / 1000),
                              static_cast<long>(wait.count() % 1000) * 1000000};
    siginfo_t info;
    const int sig = sigtimedwait(&waited, &info, &timeout);
    if (sig == SIGTERM) {
      SignalLive(ranks, SIGTERM);
    } else if (sig == kShimKillSignal) {
      SignalLive(ranks, SIGKILL);
    } else if (sig == ShimFenceSignal()) {
      fence();
    } else if (sig == kShimRenewSignal) {
      lease_end = Clock::now() + lease;
    }
    // SIGCHLD: reaped above. SIGINT, SIGHUP, SIGPIPE: not the job's business.
  }
  WriteAll(exits_fd, kShimEndLine);
  return 0;
}

}  // namespace gpusched::agent
