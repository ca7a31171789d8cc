#include "cli/session_command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cli/errors.h"
#include "cli/submit_command.h"
#include "cli/submit_request.h"
#include "cli/terminal.h"
#include "common/job_states.h"

namespace gpusched::cli {
namespace {

constexpr char kAllocationEnv[] = "GPUSCHED_ALLOCATION";

// Signals reach the session through one descriptor, written from the handler.
int g_signal_fd = -1;
std::atomic<int> g_last_signal{0};
std::atomic<bool> g_winch{false};

void OnSignal(int sig) {
  if (sig == SIGWINCH) {
    g_winch = true;
  } else {
    g_last_signal = sig;
  }
  const uint64_t one = 1;
  ssize_t ignored = write(g_signal_fd, &one, sizeof one);
  (void)ignored;
}

// Routes `signals` to OnSignal for as long as it lives, and back after.
class SignalRoute {
 public:
  explicit SignalRoute(std::vector<int> signals) : signals_(std::move(signals)) {
    if (g_signal_fd < 0) g_signal_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    struct sigaction on {};
    on.sa_handler = OnSignal;
    sigemptyset(&on.sa_mask);
    for (int sig : signals_) {
      struct sigaction old {};
      sigaction(sig, &on, &old);
      saved_.push_back(old);
    }
  }
  ~SignalRoute() {
    for (size_t i = 0; i < signals_.size(); ++i) sigaction(signals_[i], &saved_[i], nullptr);
  }

 private:
  std::vector<int> signals_;
  std::vector<struct sigaction> saved_;
};

void WriteAll(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

void Say(const std::string& line) { WriteAll(STDERR_FILENO, absl::StrCat("gpusched: ", line, "\r\n")); }

// Waits for the job to run; Ctrl-C meanwhile cancels it. The job as it runs.
absl::StatusOr<v1::Job> WaitUntilRunning(SchedulerClient& client, uint64_t id) {
  SignalRoute route({SIGINT, SIGTERM, SIGHUP});
  g_last_signal = 0;
  std::string said;
  while (true) {
    auto job = client.GetJob(id);
    if (!job.ok()) return job.status();
    if (job->state() == v1::JOB_STATE_RUNNING) return *job;
    if (IsTerminal(job->state())) {
      return absl::FailedPreconditionError(absl::StrCat("job ", id, " ended before it ran: ", FinalStateLine(*job)));
    }
    if (job->state() == v1::JOB_STATE_PENDING && job->reason() != said) {
      said = job->reason();
      Say(absl::StrCat("job ", id, " is ", StateName(job->state()), said.empty() ? "" : ": ", said));
    }
    if (g_last_signal != 0) {
      v1::CancelJobRequest cancel;
      cancel.set_job_id(id);
      cancel.set_reason("its interactive session was interrupted while it waited");
      (void)client.CancelJob(cancel);
      return absl::CancelledError(absl::StrCat("interrupted: job ", id, " cancelled"));
    }
    pollfd wake{g_signal_fd, POLLIN, 0};
    poll(&wake, 1, 200);
    uint64_t drained;
    while (read(g_signal_fd, &drained, sizeof drained) > 0) {
    }
  }
}

// Sessions from their start to their end, one per entry of `starts` (one
// per node): this process's stdin to the first (when `forward_stdin`),
// every one's output here as it comes, window sizes and, on pipes,
// SIGINT/SIGTERM/SIGHUP passed on to all. Each one's exit code, or -1 with
// `why` when it never ran or was ended from outside.
struct SessionEnd {
  int exit_code = -1;
  std::string why;
};

absl::StatusOr<std::vector<SessionEnd>> DriveSessions(SchedulerClient& client,
                                                      const std::vector<v1::AttachStart>& starts, bool forward_stdin) {
  std::vector<std::unique_ptr<AttachStream>> streams;
  for (const v1::AttachStart& start : starts) {
    auto opened = client.Attach();
    if (!opened.ok()) return opened.status();
    v1::AttachRequest first;
    *first.mutable_start() = start;
    if (!(*opened)->Write(first)) return (*opened)->Finish();
    streams.push_back(*std::move(opened));
  }
  const bool tty = starts.front().tty();
  SignalRoute route(tty ? std::vector<int>{SIGWINCH} : std::vector<int>{SIGINT, SIGTERM, SIGHUP, SIGWINCH});
  std::optional<RawTerminal> raw;
  if (tty) raw.emplace(STDIN_FILENO);
  const int stop = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  std::thread input([&] {
    bool stdin_open = forward_stdin;
    auto to_all = [&](const v1::AttachRequest& request) {
      for (auto& stream : streams) stream->Write(request);
    };
    while (true) {
      std::vector<pollfd> fds = {{stop, POLLIN, 0}, {g_signal_fd, POLLIN, 0}};
      if (stdin_open) fds.push_back({STDIN_FILENO, POLLIN, 0});
      if (poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR) return;
      if (fds[0].revents != 0) return;
      uint64_t drained;
      while (read(g_signal_fd, &drained, sizeof drained) > 0) {
      }
      v1::AttachRequest request;
      if (g_winch.exchange(false)) {
        *request.mutable_resize() = TerminalSizeOf(STDIN_FILENO);
        to_all(request);
      }
      if (const int sig = g_last_signal.exchange(0); sig != 0) {
        request.set_signal(sig);
        to_all(request);
      }
      if (stdin_open && fds.size() > 2 && fds[2].revents != 0) {
        char buffer[16384];
        const ssize_t n = read(STDIN_FILENO, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          stdin_open = false;
          request.set_stdin_closed(true);
        } else {
          request.set_stdin(std::string(buffer, static_cast<size_t>(n)));
        }
        if (!streams.front()->Write(request)) stdin_open = false;
      }
    }
  });

  std::vector<SessionEnd> ends(streams.size());
  std::mutex output_mu;  // one chunk at a time on this terminal
  std::vector<std::thread> readers;
  for (size_t i = 0; i < streams.size(); ++i) {
    readers.emplace_back([&, i] {
      v1::AttachResponse response;
      while (streams[i]->Read(&response)) {
        std::lock_guard<std::mutex> lock(output_mu);
        if (response.has_stdout()) WriteAll(STDOUT_FILENO, response.stdout());
        if (response.has_stderr()) WriteAll(STDERR_FILENO, response.stderr());
        if (response.has_exit()) {
          ends[i].exit_code = response.exit().exit_code();
          ends[i].why = response.exit().message();
        }
      }
    });
  }
  for (std::thread& reader : readers) reader.join();
  const uint64_t one = 1;
  ssize_t ignored = write(stop, &one, sizeof one);
  (void)ignored;
  input.join();
  close(stop);
  raw.reset();
  for (auto& stream : streams) {
    if (absl::Status finished = stream->Finish(); !finished.ok()) return finished;
  }
  return ends;
}

v1::AttachStart StartFor(uint64_t job_id, const std::vector<std::string>& argv, bool ends_job,
                         const std::string& node = "") {
  v1::AttachStart start;
  start.set_job_id(job_id);
  start.set_node(node);
  for (const std::string& a : argv) start.add_argv(a);
  start.set_tty(!argv.empty() && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO));
  if (start.tty()) *start.mutable_size() = TerminalSizeOf(STDIN_FILENO);
  if (const char* term = std::getenv("TERM")) start.set_term(term);
  start.set_ends_job(ends_job);
  return start;
}

// The session that holds an interactive job while its commands run here or
// on its nodes: when it ends (Done, or this process dying), so does the job.
class Holder {
 public:
  static absl::StatusOr<Holder> Open(SchedulerClient& client, uint64_t job_id) {
    auto opened = client.Attach();
    if (!opened.ok()) return opened.status();
    v1::AttachRequest first;
    *first.mutable_start() = StartFor(job_id, {}, /*ends_job=*/true);
    if (!(*opened)->Write(first)) return (*opened)->Finish();
    return Holder(*std::move(opened));
  }
  AttachStream& stream() { return *stream_; }
  // An orderly end: the job ends, its reason giving `exit_code`.
  void Done(int exit_code) {
    v1::AttachRequest done;
    done.mutable_done()->set_exit_code(exit_code);
    stream_->Write(done);
    stream_->WritesDone();
  }

 private:
  explicit Holder(std::unique_ptr<AttachStream> stream) : stream_(std::move(stream)) {}
  std::unique_ptr<AttachStream> stream_;
};

// What a session run can take of the submit options.
absl::Status CheckSessionOptions(const SubmitOptions& o, absl::string_view command) {
  if (o.array) return UsageError(absl::StrCat("gpusched ", command, " runs one session: no --array"));
  if (o.hold) return UsageError(absl::StrCat("gpusched ", command, " waits for its GPUs at once: no --hold"));
  if (o.script_path) return UsageError(absl::StrCat("gpusched ", command, " runs a command: no --script"));
  if (o.output || o.error) {
    return UsageError(
        absl::StrCat("gpusched ", command, ": a session's output is this terminal (no --output, --error)"));
  }
  if (o.image) {
    return UsageError(
        absl::StrCat("gpusched ", command, ": sessions run on the node itself, not in an image (--image)"));
  }
  return absl::OkStatus();
}

// Submits the interactive job and waits until it runs.
absl::StatusOr<v1::Job> SubmitAndWait(SubmitOptions options, CommandContext& cmd, absl::string_view command) {
  if (absl::Status s = CheckSessionOptions(options, command); !s.ok()) return s;
  auto request = BuildSubmitRequest(options, cmd.local);
  if (!request.ok()) return request.status();
  request->mutable_spec()->set_interactive(true);
  if (request->spec().name().empty()) request->mutable_spec()->set_name(std::string(command));
  auto response = cmd.client.SubmitJob(*request);
  if (!response.ok()) return response.status();
  const uint64_t id = response->job().id();
  return WaitUntilRunning(cmd.client, id);
}

// `name` as execvp would find it in this process's PATH; as given when it
// has a '/' or is nowhere (exec then says so).
std::string FindInPath(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  for (absl::string_view dir : absl::StrSplit(path != nullptr ? path : "/usr/bin:/bin", ':')) {
    const std::string candidate = absl::StrCat(dir.empty() ? "." : dir, "/", name);
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return name;
}

// As srun: the highest exit code of the nodes' commands; 1 for one that never ran.
int ExitFor(const std::vector<SessionEnd>& ends) {
  int code = 0;
  std::set<std::string> said;
  for (const SessionEnd& end : ends) {
    if (!end.why.empty() && said.insert(end.why).second) Say(absl::StrCat("session ended: ", end.why));
    code = std::max(code, end.exit_code < 0 ? static_cast<int>(kExitFailed) : end.exit_code);
  }
  return code;
}

// The sessions a command gets in `job`: on a terminal, one on its first
// node; on pipes, one per node, as srun starts one task per node. The one
// that `ends_job` is the first node's.
std::vector<v1::AttachStart> StartsFor(const v1::Job& job, const std::vector<std::string>& argv, bool ends_job) {
  std::vector<v1::AttachStart> starts = {StartFor(job.id(), argv, ends_job)};
  if (starts.front().tty()) return starts;
  for (int i = 1; i < job.allocation().nodes_size(); ++i) {
    starts.push_back(StartFor(job.id(), argv, false, job.allocation().nodes(i).node()));
  }
  return starts;
}

}  // namespace

absl::StatusOr<int> RunInteractive(const SubmitOptions& options, CommandContext& cmd) {
  if (options.command.empty()) return UsageError("gpusched run needs a command after --");
  // Inside `gpusched alloc`: a session of that allocation, queueing for nothing.
  if (const char* allocation = std::getenv(kAllocationEnv); allocation != nullptr && *allocation != '\0') {
    uint64_t id = 0;
    if (!absl::SimpleAtoi(allocation, &id)) {
      return UsageError(absl::StrCat("$", kAllocationEnv, " is \"", allocation, "\", not a job id"));
    }
    if (options.gpus || options.nodes || options.gpus_per_node || options.gpu_share || options.mig || options.time) {
      return UsageError(absl::StrCat("inside an allocation (job ", id,
                                     ") gpusched run uses its GPUs: leave out --gpus, --nodes, --gpu-share, --mig "
                                     "and --time, or unset ",
                                     kAllocationEnv));
    }
    auto job = cmd.client.GetJob(id);
    if (!job.ok()) return job.status();
    auto ends = DriveSessions(cmd.client, StartsFor(*job, options.command, /*ends_job=*/false), true);
    if (!ends.ok()) return ends.status();
    return ExitFor(*ends);
  }
  auto job = SubmitAndWait(options, cmd, "run");
  if (!job.ok()) return job.status();
  // Held apart from the commands: on several nodes the job must outlive the
  // first to finish, and a client that dies must still end it.
  auto holder = Holder::Open(cmd.client, job->id());
  if (!holder.ok()) return holder.status();
  auto ends = DriveSessions(cmd.client, StartsFor(*job, options.command, /*ends_job=*/false), true);
  const int code = ends.ok() ? ExitFor(*ends) : kExitFailed;
  holder->Done(code);
  v1::AttachResponse ignored;
  while (holder->stream().Read(&ignored)) {
  }
  (void)holder->stream().Finish();
  if (!ends.ok()) return ends.status();
  return code;
}

absl::StatusOr<int> RunAlloc(const SubmitOptions& options, CommandContext& cmd) {
  // The job shows what runs in it: the shell, or the command given.
  std::vector<std::string> local = options.command;
  if (local.empty()) {
    const char* shell = std::getenv("SHELL");
    local = {shell != nullptr && *shell != '\0' ? shell : "/bin/sh"};
  }
  SubmitOptions submit = options;
  submit.command = local;
  auto job = SubmitAndWait(submit, cmd, "alloc");
  if (!job.ok()) return job.status();
  const uint64_t id = job->id();
  std::vector<std::string> nodes;
  for (const v1::NodeAllocation& part : job->allocation().nodes()) nodes.push_back(part.node());
  Say(absl::StrCat("job ", id, " holds its GPUs on ", absl::StrJoin(nodes, ", "),
                   "; `gpusched run -- CMD` runs there; leave the shell to give them back"));

  // The holding session: it ends when the job does (its time limit, a
  // cancel), and its stream going away ends the job.
  auto holder = Holder::Open(cmd.client, id);
  if (!holder.ok()) return holder.status();
  AttachStream* hold = &holder->stream();

  // Ctrl-C and Ctrl-\ belong to the shell while it runs, as under salloc.
  struct sigaction ignore {
  }, old_int{}, old_quit{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGINT, &ignore, &old_int);
  sigaction(SIGQUIT, &ignore, &old_quit);
  // Built before fork: gRPC's threads make the child async-signal-safe only.
  std::vector<std::string> env_strings = {absl::StrCat(kAllocationEnv, "=", id), absl::StrCat("GPUSCHED_JOB_ID=", id),
                                          absl::StrCat("GPUSCHED_NODES=", absl::StrJoin(nodes, ","))};
  for (char** e = environ; *e != nullptr; ++e) {
    const absl::string_view entry = *e;
    if (absl::StartsWith(entry, absl::StrCat(kAllocationEnv, "=")) || absl::StartsWith(entry, "GPUSCHED_JOB_ID=") ||
        absl::StartsWith(entry, "GPUSCHED_NODES=")) {
      continue;
    }
    env_strings.emplace_back(entry);
  }
  std::vector<char*> envp;
  for (const std::string& e : env_strings) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  std::vector<char*> argv;
  for (const std::string& a : local) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const std::string program = FindInPath(local[0]);
  const std::string exec_failed = absl::StrCat("gpusched: cannot run ", local[0], "\n");
  const pid_t child = fork();
  if (child == 0) {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGQUIT, &old_quit, nullptr);
    execve(program.c_str(), argv.data(), envp.data());
    ssize_t ignored = write(STDERR_FILENO, exec_failed.data(), exec_failed.size());
    (void)ignored;
    _exit(127);
  }
  if (child < 0) return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));

  std::atomic<bool> shell_done{false};
  std::string ended_why;
  std::thread watcher([&] {
    v1::AttachResponse response;
    while (hold->Read(&response)) {
      if (response.has_exit()) ended_why = response.exit().message();
    }
    // The allocation is over while the shell still runs: it ends too.
    if (!shell_done) {
      if (!ended_why.empty()) Say(absl::StrCat("allocation ended: ", ended_why));
      kill(child, SIGHUP);
    }
  });
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  shell_done = true;
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGQUIT, &old_quit, nullptr);
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  holder->Done(code);  // the daemon ends the job as the stream goes
  watcher.join();
  (void)hold->Finish();
  Say(absl::StrCat("job ", id, " given back"));
  return code;
}

}  // namespace gpusched::cli
