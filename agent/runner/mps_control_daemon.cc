#include "agent/runner/mps_control_daemon.h"

#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "agent/runner/process_spawner.h"
#include "agent/runner/rank_environment.h"
#include "common/threads/mutex.h"

namespace gpusched::agent {
namespace {

// What the control daemon writes into its pipe directory (NVIDIA's name).
constexpr char kPidFile[] = "nvidia-cuda-mps-control.pid";

int PidfdOpen(pid_t pid) { return static_cast<int>(syscall(SYS_pidfd_open, pid, 0)); }

// Waits until `pid` is gone or `give_up` says so (checked every 100 ms).
// Reaps it when it is our child; its wait status then, or -1.
template <typename GiveUp>
int AwaitExit(pid_t pid, bool own_child, GiveUp give_up) {
  const int fd = PidfdOpen(pid);
  if (fd < 0) return -1;  // already gone (and reaped)
  int status = -1;
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    const int ready = poll(&p, 1, 100);
    if (ready > 0) break;
    if (ready < 0 && errno != EINTR) break;
    if (give_up()) {
      close(fd);
      return -2;
    }
  }
  close(fd);
  if (own_child) {
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  return status;
}

std::string DescribeExit(int status) {
  if (status < 0) return "exited";
  if (WIFSIGNALED(status)) return absl::StrCat("was killed by signal ", WTERMSIG(status));
  return absl::StrCat("exited with status ", WEXITSTATUS(status));
}

// Alive and not a zombie (one that exited and waits for its parent).
bool Alive(pid_t pid) {
  if (pid <= 0) return false;
  std::ifstream stat(absl::StrCat("/proc/", pid, "/stat"));
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t end = text.rfind(')');  // the state follows "(comm)"
  return end != std::string::npos && end + 2 < text.size() && text[end + 2] != 'Z';
}

}  // namespace

MpsControlDaemon::MpsControlDaemon(MpsControlOptions options, std::shared_ptr<spdlog::logger> log)
    : options_(std::move(options)), log_(std::move(log)) {}

MpsControlDaemon::~MpsControlDaemon() { Stop(); }

absl::Status MpsControlDaemon::Start() {
  for (const std::string& dir : {options_.pipe_dir, options_.log_dir}) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return absl::FailedPreconditionError(absl::StrCat("MPS directory ", dir, ": ", ec.message()));
    // Clients (the jobs' users) reach the daemon through the pipe directory.
    std::filesystem::permissions(dir, std::filesystem::perms(0755), ec);
  }
  MutexLock lock(&mu_);
  if (thread_.joinable()) return absl::OkStatus();
  stopping_ = false;
  detaching_ = false;
  thread_ = std::thread([this] { Supervise(); });
  while (pid_ == 0 && restarts_ == 0) cv_.Wait(&mu_);
  return absl::OkStatus();
}

ProcessSpec MpsControlDaemon::ControlProcess(std::vector<std::string> args, const std::string& stdin_path) const {
  std::map<std::string, std::string> env = options_.env;
  env["CUDA_MPS_PIPE_DIRECTORY"] = options_.pipe_dir;
  env["CUDA_MPS_LOG_DIRECTORY"] = options_.log_dir;
  env["CUDA_VISIBLE_DEVICES"] = absl::StrJoin(options_.gpus, ",");
  if (!env.contains("PATH")) env["PATH"] = kFallbackPath;
  ProcessSpec spec;
  spec.executable = options_.program;
  spec.argv = {options_.program};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  for (const auto& [key, value] : env) spec.env.push_back(absl::StrCat(key, "=", value));
  spec.workdir = "/";
  spec.stdin_path = stdin_path;
  spec.log_path = (std::filesystem::path(options_.log_dir) / "control.out").string();
  return spec;
}

pid_t MpsControlDaemon::FindRunning() const {
  std::ifstream in(std::filesystem::path(options_.pipe_dir) / kPidFile);
  std::string text;
  int pid = 0;
  if (!std::getline(in, text) || !absl::SimpleAtoi(absl::StripAsciiWhitespace(text), &pid) || !Alive(pid)) return 0;
  // A reused pid is someone else's process: ours runs as we do (a user's
  // process named like it, left on a stale pid, is not adopted and later
  // signalled as ours), and runs the program.
  struct stat st;
  if (stat(absl::StrCat("/proc/", pid).c_str(), &st) != 0 || st.st_uid != geteuid()) return 0;
  std::ifstream cmdline(absl::StrCat("/proc/", pid, "/cmdline"));
  std::stringstream args;
  args << cmdline.rdbuf();
  const std::string name = std::filesystem::path(options_.program).filename().string();
  return args.str().find(name) == std::string::npos ? 0 : pid;
}

void MpsControlDaemon::Supervise() {
  absl::Duration backoff = options_.first_backoff;
  for (;;) {
    pid_t pid = FindRunning();
    const bool own = pid == 0;
    std::string failure;
    if (own) {
      auto spawned = SpawnProcess(ControlProcess({"-f"}));
      if (spawned.ok()) {
        pid = *spawned;
      } else {
        failure = std::string(spawned.status().message());
      }
    } else {
      log_->info("adopting the MPS control daemon (pid {}) an earlier agent left in {}", pid, options_.pipe_dir);
    }
    // Durations on the monotonic clock: a wall clock stepped by NTP would stretch them.
    const auto started = std::chrono::steady_clock::now();
    if (pid != 0) {
      {
        MutexLock lock(&mu_);
        pid_ = pid;
        failure_ = absl::OkStatus();
        // Stop() came while it was starting, and saw no pid to stop.
        if (stopping_) kill(pid, SIGTERM);
        if (own) log_->info("MPS control daemon started (pid {}) for GPUs {}", pid, absl::StrJoin(options_.gpus, ","));
      }
      cv_.SignalAll();
      const int status = AwaitExit(pid, own, [this] {
        MutexLock l(&mu_);
        return detaching_;
      });
      MutexLock lock(&mu_);
      if (status == -2) return;  // detached: it keeps running
      pid_ = 0;
      if (stopping_) {
        failure_ = absl::FailedPreconditionError("the MPS control daemon was stopped with the agent");
        cv_.SignalAll();
        return;
      }
      failure = absl::StrCat("the MPS control daemon (", options_.program, ", pid ", pid, ") ", DescribeExit(status),
                             "; its output is in ", options_.log_dir);
    }
    MutexLock lock(&mu_);
    if (stopping_ || detaching_) return;
    // A daemon that ran a while and then died starts again at once-ish.
    if (std::chrono::steady_clock::now() - started > absl::ToChronoNanoseconds(options_.max_backoff)) {
      backoff = options_.first_backoff;
    }
    ++restarts_;
    failure_ = absl::FailedPreconditionError(failure);
    log_->warn("{}; starting it again in {}", failure, absl::FormatDuration(backoff));
    cv_.SignalAll();
    const auto retry_at = std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(backoff);
    while (!(stopping_ || detaching_) && cv_.WaitUntil(&mu_, retry_at)) {
    }
    if (stopping_ || detaching_) return;
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
}

absl::Status MpsControlDaemon::Ready() const {
  MutexLock lock(&mu_);
  return pid_ != 0 ? absl::OkStatus() : failure_;
}

pid_t MpsControlDaemon::pid() const {
  MutexLock lock(&mu_);
  return pid_;
}

int MpsControlDaemon::restarts() const {
  MutexLock lock(&mu_);
  return restarts_;
}

bool MpsControlDaemon::SendQuit() {
  // `echo quit | nvidia-cuda-mps-control`: the client form of the program
  // talks to the daemon through the pipe directory.
  const std::string command = (std::filesystem::path(options_.log_dir) / "quit.command").string();
  {
    std::ofstream out(command, std::ios::trunc);
    out << "quit\n";
  }
  auto client = SpawnProcess(ControlProcess({}, command));
  if (!client.ok()) {
    log_->warn("could not tell the MPS control daemon to quit: {}", std::string(client.status().message()));
    return false;
  }
  const auto deadline = std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(options_.stop_grace);
  const int status =
      AwaitExit(*client, /*own_child=*/true, [&] { return std::chrono::steady_clock::now() > deadline; });
  if (status == -2) {
    kill(*client, SIGKILL);
    AwaitExit(*client, true, [] { return false; });
    return false;
  }
  return status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

void MpsControlDaemon::Stop() {
  pid_t pid = 0;
  {
    MutexLock lock(&mu_);
    if (!thread_.joinable()) return;
    stopping_ = true;
    pid = pid_;
  }
  cv_.SignalAll();
  if (pid != 0) {
    // A daemon that did not take the command (not listening yet, say) gets
    // SIGTERM at once rather than after the grace.
    const absl::Duration before_term = SendQuit() ? options_.stop_grace : absl::ZeroDuration();
    MutexLock lock(&mu_);
    for (const auto& [signal, wait] : {std::pair{SIGTERM, before_term}, std::pair{SIGKILL, options_.stop_grace}}) {
      const auto give_up = std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(wait);
      while (pid_ != 0 && cv_.WaitUntil(&mu_, give_up)) {
      }
      if (pid_ == 0) break;
      log_->warn("the MPS control daemon (pid {}) is still running; sending it {}", pid, strsignal(signal));
      // Its servers are in its process group.
      kill(-pid, signal);
      kill(pid, signal);
    }
  }
  thread_.join();
}

void MpsControlDaemon::Detach() {
  {
    MutexLock lock(&mu_);
    if (!thread_.joinable()) return;
    detaching_ = true;
  }
  cv_.SignalAll();
  thread_.join();
}

}  // namespace gpusched::agent
