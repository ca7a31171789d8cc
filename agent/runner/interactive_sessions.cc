#include "agent/runner/interactive_sessions.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "agent/runner/exec_path.h"
#include "agent/runner/rank_environment.h"
#include "common/threads/mutex.h"

namespace gpusched::agent {
namespace {

using Clock = std::chrono::steady_clock;
// After a hangup, how long the command has to go before SIGKILL.
constexpr auto kHangupGrace = std::chrono::seconds(2);
constexpr size_t kChunk = 32 * 1024;

void CloseFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

void SetSize(int master, const v1::TerminalSize& size) {
  if (master < 0 || size.rows() <= 0 || size.cols() <= 0) return;
  winsize ws{};
  ws.ws_row = static_cast<unsigned short>(std::min(size.rows(), 10000));
  ws.ws_col = static_cast<unsigned short>(std::min(size.cols(), 10000));
  ioctl(master, TIOCSWINSZ, &ws);
}

v1::SessionOutput ExitOutput(uint64_t id, int code, const std::string& message) {
  v1::SessionOutput out;
  out.set_session_id(id);
  out.mutable_exit()->set_exit_code(code);
  out.mutable_exit()->set_message(message);
  return out;
}

}  // namespace

// One session: its process (none for a holding session) and the thread
// that moves its bytes, until it has said how it ended.
class InteractiveSessions::Session {
 public:
  Session(uint64_t id, uint64_t job_id, SendFn send) : id_(id), job_id_(job_id), send_(std::move(send)) {
    wake_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  }
  ~Session() {
    Hangup("the agent is stopping");
    if (thread_.joinable()) thread_.join();
    for (int* fd : {&wake_, &input_, &output_, &errors_, &pidfd_}) CloseFd(*fd);
  }

  uint64_t job_id() const { return job_id_; }
  bool done() const {
    MutexLock lock(&mu_);
    return done_;
  }

  // Starts the command (or nothing, for a holding session) and the thread.
  absl::Status Start(const v1::AttachStart& start, ProcessSpec process) {
    if (start.argv().empty()) {
      thread_ = std::thread([this] { Loop(); });
      return absl::OkStatus();
    }
    process.argv.assign(start.argv().begin(), start.argv().end());
    // The session's output is its client's, whatever rank 0's --output says.
    process.output_path.clear();
    process.error_path.clear();
    auto executable = ResolveExecutable(process.argv[0], EnvpValue(process.env, "PATH"));
    if (!executable.ok()) return executable.status();
    process.executable = *executable;
    std::vector<int> child_fds;  // closed here once the child has them
    if (start.tty()) {
      const int master = AboveStdio(posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC));
      char name[128];
      if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0 || ptsname_r(master, name, sizeof name) != 0) {
        const int error = errno;
        if (master >= 0) close(master);
        return absl::InternalError(absl::StrCat("cannot open a pseudo-terminal: ", std::strerror(error)));
      }
      const int slave = AboveStdio(open(name, O_RDWR | O_NOCTTY | O_CLOEXEC));
      if (slave < 0) {
        const int error = errno;
        close(master);
        return absl::InternalError(absl::StrCat("cannot open ", name, ": ", std::strerror(error)));
      }
      // The user's own terminal, as after a login.
      if (process.credentials && fchown(slave, process.credentials->uid, process.credentials->gid) != 0) {
        const int error = errno;
        close(master), close(slave);
        return absl::InternalError(absl::StrCat("chown ", name, ": ", std::strerror(error)));
      }
      SetSize(master, start.size());
      input_ = output_ = master;
      tty_ = true;
      process.stdin_fd = process.stdout_fd = process.stderr_fd = slave;
      process.controlling_tty = true;
      process.env.push_back(absl::StrCat("TERM=", start.term().empty() ? "xterm" : start.term()));
      child_fds = {slave};
    } else {
      int in[2], out[2], err[2];
      if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
        return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
      }
      for (int* fd : {&in[0], &in[1], &out[0], &out[1], &err[0], &err[1]}) *fd = AboveStdio(*fd);
      input_ = in[1], output_ = out[0], errors_ = err[0];
      process.stdin_fd = in[0], process.stdout_fd = out[1], process.stderr_fd = err[1];
      child_fds = {in[0], out[1], err[1]};
    }
    auto pid = SpawnProcess(process);
    for (int fd : child_fds) close(fd);
    if (!pid.ok()) return pid.status();
    pid_ = *pid;
    pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, pid_, 0));
    for (int fd : {input_, output_, errors_}) {
      if (fd >= 0) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    }
    thread_ = std::thread([this] { Loop(); });
    return absl::OkStatus();
  }

  void Input(const v1::SessionInput& input) {
    {
      MutexLock lock(&mu_);
      switch (input.kind_case()) {
        case v1::SessionInput::kStdin: pending_.push_back(input.stdin()); break;
        case v1::SessionInput::kStdinClosed:
          // A terminal's end of input is its EOF character; a pipe's, its close.
          if (tty_) pending_.push_back("\x04");
          close_input_ = !tty_;
          break;
        case v1::SessionInput::kResize: SetSize(tty_ ? output_ : -1, input.resize()); break;
        case v1::SessionInput::kSignal:
          if (pid_ > 0 && input.signal() > 0 && input.signal() < NSIG) kill(-pid_, input.signal());
          break;
        default: break;
      }
    }
    Wake();
  }

  // Ends the session: SIGHUP to its command, SIGKILL after a grace; the
  // exit it reports then carries `why`.
  void Hangup(const std::string& why) {
    {
      MutexLock lock(&mu_);
      if (hangup_) return;
      hangup_ = true;
      why_ = why;
    }
    Wake();
  }

 private:
  void Wake() {
    const uint64_t one = 1;
    ssize_t ignored = write(wake_, &one, sizeof one);
    (void)ignored;
  }

  // Reads what is there; false at EOF or on an error.
  bool Drain(int fd, bool is_stderr) {
    char buffer[kChunk];
    while (true) {
      const ssize_t n = read(fd, buffer, sizeof buffer);
      if (n > 0) {
        v1::SessionOutput out;
        out.set_session_id(id_);
        (is_stderr ? out.mutable_stderr() : out.mutable_stdout())->assign(buffer, static_cast<size_t>(n));
        send_(out);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) return true;
      return false;  // EOF, or EIO once a terminal's last holder is gone
    }
  }

  void Loop() {
    std::optional<Clock::time_point> kill_at;
    bool exited = false;
    int status = 0;
    while (true) {
      std::string message;
      bool hangup = false, close_input = false;
      std::deque<std::string> pending;
      {
        MutexLock lock(&mu_);
        hangup = hangup_;
        message = why_;
        close_input = close_input_;
        pending.swap(pending_);
      }
      if (pid_ <= 0) {  // a holding session: it only waits for its end
        if (hangup) break;
      } else {
        if (hangup && !kill_at) {
          kill(-pid_, SIGHUP);
          kill(-pid_, SIGCONT);
          kill_at = Clock::now() + kHangupGrace;
        }
        if (kill_at && Clock::now() >= *kill_at) kill(-pid_, SIGKILL);
      }
      // Input first, in order; what the command does not take now waits.
      while (!pending.empty() && input_ >= 0) {
        std::string& chunk = pending.front();
        const ssize_t n = write(input_, chunk.data(), chunk.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) break;  // EAGAIN (full) or the command closed its input
        chunk.erase(0, static_cast<size_t>(n));
        if (chunk.empty()) pending.pop_front();
      }
      if (!pending.empty()) {
        MutexLock lock(&mu_);
        for (auto it = pending.rbegin(); it != pending.rend(); ++it) pending_.push_front(std::move(*it));
      } else if (close_input && !tty_) {
        CloseFd(input_);
      }

      std::vector<pollfd> fds = {{wake_, POLLIN, 0}};
      if (output_ >= 0) fds.push_back({output_, POLLIN, 0});
      if (errors_ >= 0) fds.push_back({errors_, POLLIN, 0});
      if (pidfd_ >= 0 && !exited) fds.push_back({pidfd_, POLLIN, 0});
      if (input_ >= 0 && !pending.empty()) fds.push_back({input_, POLLOUT, 0});
      poll(fds.data(), fds.size(), kill_at ? 200 : 1000);
      uint64_t drained;
      while (read(wake_, &drained, sizeof drained) > 0) {
      }
      if (output_ >= 0 && !Drain(output_, false)) {
        if (output_ == input_) input_ = -1;
        CloseFd(output_);
      }
      if (errors_ >= 0 && !Drain(errors_, true)) CloseFd(errors_);
      if (pid_ > 0 && !exited && waitpid(pid_, &status, WNOHANG) == pid_) {
        exited = true;
        // What it wrote last is still in the pipes or the terminal.
        if (output_ >= 0) Drain(output_, false);
        if (errors_ >= 0) Drain(errors_, true);
        // What it left in its process group does not outlive the session.
        kill(-pid_, SIGHUP);
        break;
      }
    }
    int code = -1;
    if (exited) code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::string why;
    {
      MutexLock lock(&mu_);
      why = why_;
      done_ = true;
    }
    if (pid_ <= 0) code = 0;
    send_(ExitOutput(id_, code, why));
  }

  const uint64_t id_;
  const uint64_t job_id_;
  const SendFn send_;
  int wake_ = -1;
  int input_ = -1, output_ = -1, errors_ = -1, pidfd_ = -1;
  bool tty_ = false;
  pid_t pid_ = 0;
  std::thread thread_;

  mutable Mutex mu_;
  std::deque<std::string> pending_ ABSL_GUARDED_BY(mu_);
  bool close_input_ ABSL_GUARDED_BY(mu_) = false;
  bool hangup_ ABSL_GUARDED_BY(mu_) = false;
  std::string why_ ABSL_GUARDED_BY(mu_);
  bool done_ ABSL_GUARDED_BY(mu_) = false;
};

InteractiveSessions::InteractiveSessions(SendFn send, TemplateFn process_of_job)
    : send_(std::move(send)), process_of_job_(std::move(process_of_job)) {}

InteractiveSessions::~InteractiveSessions() {
  std::map<uint64_t, std::unique_ptr<Session>> sessions;
  {
    MutexLock lock(&mu_);
    sessions.swap(sessions_);
  }
  sessions.clear();  // each hangs up and joins
}

size_t InteractiveSessions::count() const {
  MutexLock lock(&mu_);
  return sessions_.size();
}

void InteractiveSessions::Reap() {
  std::vector<std::unique_ptr<Session>> ended;
  {
    MutexLock lock(&mu_);
    for (auto it = sessions_.begin(); it != sessions_.end();) {
      if (it->second->done()) {
        ended.push_back(std::move(it->second));
        it = sessions_.erase(it);
      } else {
        ++it;
      }
    }
  }
  // Joined outside the lock: their threads may be sending.
}

void InteractiveSessions::Start(const v1::SessionInput& input) {
  const uint64_t id = input.session_id();
  std::optional<ProcessSpec> process = process_of_job_(input.job_id());
  if (!process) {
    send_(ExitOutput(id, -1,
                     absl::StrCat("job ", input.job_id(),
                                  " has no process here to start a session from (it is not running on this "
                                  "node, runs in a container, or started before this agent did)")));
    return;
  }
  auto session = std::make_unique<Session>(id, input.job_id(), send_);
  if (absl::Status s = session->Start(input.start(), *std::move(process)); !s.ok()) {
    send_(ExitOutput(id, -1, std::string(s.message())));
    return;
  }
  MutexLock lock(&mu_);
  sessions_[id] = std::move(session);
}

void InteractiveSessions::Handle(const v1::SessionInput& input) {
  Reap();
  if (input.kind_case() == v1::SessionInput::kStart) {
    Start(input);
    return;
  }
  MutexLock lock(&mu_);
  auto it = sessions_.find(input.session_id());
  if (it == sessions_.end()) return;  // ended already
  if (input.kind_case() == v1::SessionInput::kHangup) {
    it->second->Hangup("the client went away");
  } else {
    it->second->Input(input);
  }
}

void InteractiveSessions::EndAll(const std::string& why) {
  std::map<uint64_t, std::unique_ptr<Session>> sessions;
  {
    MutexLock lock(&mu_);
    for (auto& [id, session] : sessions_) session->Hangup(why);
    sessions.swap(sessions_);
  }
  sessions.clear();
}

void InteractiveSessions::EndJob(uint64_t job_id, const std::string& why) {
  MutexLock lock(&mu_);
  for (auto& [id, session] : sessions_) {
    if (session->job_id() == job_id) session->Hangup(why);
  }
}

}  // namespace gpusched::agent
