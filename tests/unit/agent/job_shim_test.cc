// Jobs outlive their runner: each runs under its shim (gpusched-shim), which
// the next runner on the node adopts.
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "agent/runner/job_runner.h"
#include "agent/runner/process_start_time.h"
#include "agent/runner/shim_protocol.h"
#include "test_util.h"

using namespace gpusched::agent;
using namespace gpusched::agent::testing;
namespace v1 = gpusched::v1;
using Kind = v1::JobUpdate;

namespace {

std::string ExitsFile(const TempDir& dir, uint64_t job_id) {
  return absl::StrCat(dir.path(), "/running/test-node/job-", job_id, ".exits");
}

pid_t ShimPid(const TempDir& dir, uint64_t job_id) {
  REQUIRE(WaitForFileContaining(ExitsFile(dir, job_id), "group "));
  const ShimExits exits = ParseShimExits(ReadFile(ExitsFile(dir, job_id)));
  REQUIRE(exits.shim_pid > 1);
  return exits.shim_pid;
}

void Release(const std::string& gate) { WriteFile(gate, "go\n"); }

// Waits for `gate` to exist, then exits with `code`: a job that runs until
// the test lets it end.
std::string GatedJob(const TempDir& dir, const std::string& gate, int code) {
  return absl::StrCat("echo $$ > ", dir / "pid", "; echo before; while [ ! -e ", gate,
                      " ]; do sleep 0.02; done; echo after; exit ", code);
}

}  // namespace

TEST_CASE("a detached runner's job keeps running; the next runner adopts it and reports how it ended") {
  TempDir dir;
  const std::string gate = dir / "gate";
  pid_t pid = 0;
  {
    UpdateRecorder first;
    JobRunner runner(RunnerOptions(dir), first.Callback());
    runner.Launch(MakeShellLaunch(31, GatedJob(dir, gate, 7)));
    REQUIRE(first.WaitFor(31, Kind::KIND_STARTED));
    pid = ReadPid(dir / "pid");
    CHECK(runner.Detach() == 1);
    CHECK(first.Count(31, Kind::KIND_EXITED) == 0);
  }  // the runner is gone, as with an agent that restarts
  CHECK_FALSE(ProcessGone(pid));

  UpdateRecorder second;
  JobRunner next(RunnerOptions(dir), second.Callback());
  REQUIRE(next.RunningJobs().size() == 1);
  CHECK(next.RunningJobs()[0].id == 31);
  CHECK(next.CurrentLoad().ranks == 1);
  Release(gate);
  auto exited = second.WaitFor(31, Kind::KIND_EXITED);
  REQUIRE(exited);
  CHECK(exited->exit_code() == 7);
  CHECK(exited->message() == "rank 0 exited with code 7");
  CHECK_FALSE(exited->fenced());
  // One log, written by one run, both halves in it.
  CHECK(ReadFile(dir / "job-31/rank-0.log") == "before\nafter\n");
  CHECK(WaitForProcessGone(pid));
}

TEST_CASE("an adopted job can be killed, with its grace, by the runner that adopted it") {
  TempDir dir;
  {
    UpdateRecorder first;
    JobRunner runner(RunnerOptions(dir), first.Callback());
    runner.Launch(MakeShellLaunch(32, absl::StrCat("echo $$ > ", dir / "pid",
                                                   "; trap 'echo term; exit 3' TERM; "
                                                   "while true; do sleep 0.02; done")));
    REQUIRE(first.WaitFor(32, Kind::KIND_STARTED));
    ReadPid(dir / "pid");
    runner.Detach();
  }
  UpdateRecorder second;
  JobRunner next(RunnerOptions(dir), second.Callback());
  next.Kill(32, absl::Seconds(5), "cancelled");
  auto exited = second.WaitFor(32, Kind::KIND_EXITED);
  REQUIRE(exited);
  CHECK(exited->exit_code() == 3);
  CHECK(exited->message() == "killed (cancelled): rank 0 exited with code 3");
  CHECK_THAT(ReadFile(dir / "job-32/rank-0.log"), Catch::Contains("term"));
}

TEST_CASE("a job that ended while no runner ran is reported by the next one") {
  TempDir dir;
  const std::string gate = dir / "gate";
  {
    UpdateRecorder first;
    JobRunner runner(RunnerOptions(dir), first.Callback());
    runner.Launch(MakeShellLaunch(33, GatedJob(dir, gate, 0)));
    REQUIRE(first.WaitFor(33, Kind::KIND_STARTED));
    const pid_t shim = ShimPid(dir, 33);
    runner.Detach();
    Release(gate);
    REQUIRE(WaitForFileContaining(ExitsFile(dir, 33), "end\n"));
    REQUIRE(WaitForProcessGone(shim));
  }
  UpdateRecorder second;
  JobRunner next(RunnerOptions(dir), second.Callback());
  CHECK(next.RunningJobs().empty());
  const std::vector<v1::JobUpdate> reports = next.RecentReports();
  REQUIRE(reports.size() == 1);
  CHECK(reports[0].job_id() == 33);
  CHECK(reports[0].kind() == Kind::KIND_EXITED);
  CHECK(reports[0].exit_code() == 0);
}

TEST_CASE("a shim whose lease is not renewed kills its job, and the next runner reports it fenced") {
  TempDir dir;
  const std::string gate = dir / "gate";
  pid_t pid = 0;
  {
    UpdateRecorder first;
    JobRunner runner(RunnerOptions(dir), first.Callback());
    runner.RenewLeases(absl::Milliseconds(400));
    runner.Launch(MakeShellLaunch(34, GatedJob(dir, gate, 0)));
    REQUIRE(first.WaitFor(34, Kind::KIND_STARTED));
    pid = ReadPid(dir / "pid");
    // Renewed, it lives past its lease.
    for (int i = 0; i < 8; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      runner.RenewLeases(absl::Milliseconds(400));
    }
    CHECK_FALSE(ProcessGone(pid));
    runner.Detach();
  }
  // Nobody renews it now.
  CHECK(WaitForProcessGone(pid, absl::Seconds(3)));
  REQUIRE(WaitForFileContaining(ExitsFile(dir, 34), "end\n"));
  UpdateRecorder second;
  JobRunner next(RunnerOptions(dir), second.Callback());
  const std::vector<v1::JobUpdate> reports = next.RecentReports();
  REQUIRE(reports.size() == 1);
  CHECK(reports[0].fenced());
  CHECK(reports[0].exit_code() == 128 + SIGKILL);
  CHECK_THAT(reports[0].message(), Catch::StartsWith("fenced: no agent renewed the job's lease on test-node"));
}

TEST_CASE("a shim killed under a live runner: its ranks go too, and the job fails saying so") {
  TempDir dir;
  UpdateRecorder updates;
  JobRunner runner(RunnerOptions(dir), updates.Callback());
  runner.Launch(MakeShellLaunch(35, GatedJob(dir, dir / "gate", 0)));
  REQUIRE(updates.WaitFor(35, Kind::KIND_STARTED));
  const pid_t pid = ReadPid(dir / "pid");
  const pid_t shim = ShimPid(dir, 35);
  REQUIRE(kill(shim, SIGKILL) == 0);
  auto exited = updates.WaitFor(35, Kind::KIND_EXITED);
  REQUIRE(exited);
  CHECK(exited->exit_code() == 255);
  CHECK_THAT(exited->message(),
             Catch::Contains(absl::StrCat("the job's shim (pid ", shim, ") died before its ranks ended")));
  CHECK(WaitForProcessGone(pid));
}

TEST_CASE("a shim killed while no runner ran: the next runner kills what it left and does not claim the job") {
  TempDir dir;
  pid_t pid = 0;
  {
    UpdateRecorder first;
    JobRunner runner(RunnerOptions(dir), first.Callback());
    runner.Launch(MakeShellLaunch(36, GatedJob(dir, dir / "gate", 0)));
    REQUIRE(first.WaitFor(36, Kind::KIND_STARTED));
    pid = ReadPid(dir / "pid");
    const pid_t shim = ShimPid(dir, 36);
    runner.Detach();
    REQUIRE(kill(shim, SIGKILL) == 0);
    REQUIRE(WaitForProcessGone(shim));
  }
  CHECK_FALSE(ProcessGone(pid));
  UpdateRecorder second;
  JobRunner next(RunnerOptions(dir), second.Callback());
  // Neither running nor ended here: the daemon takes it for lost.
  CHECK(next.RunningJobs().empty());
  CHECK(next.RecentReports().empty());
  CHECK(WaitForProcessGone(pid));
}

TEST_CASE("a launch whose shim cannot run fails saying so, and nothing runs") {
  TempDir dir;
  JobRunnerOptions options = RunnerOptions(dir);
  options.shim_program = dir / "missing-shim";
  UpdateRecorder updates;
  JobRunner runner(options, updates.Callback());
  runner.Launch(MakeShellLaunch(37, "touch " + (dir / "ran")));
  auto failed = updates.WaitFor(37, Kind::KIND_LAUNCH_FAILED);
  REQUIRE(failed);
  CHECK_THAT(failed->message(), Catch::Contains("cannot run the job shim " + (dir / "missing-shim")) &&
                                    Catch::Contains("No such file or directory"));
  // Nothing was spawned: a shim started is a running job until its end is reported.
  CHECK(runner.RunningJobIds().empty());
  CHECK_FALSE(std::ifstream(dir / "ran").good());
}

TEST_CASE("a shim that cannot tell its agent the ranks started kills them: no agent knows of them") {
  TempDir dir;
  ShimSpec spec;
  spec.job_id = 38;
  ProcessSpec rank;
  rank.executable = "/bin/sh";
  rank.argv = {"/bin/sh", "-c", absl::StrCat("echo $$ > ", dir / "pid", "; exec sleep 30")};
  rank.workdir = "/";
  rank.log_path = dir / "rank-0.log";
  spec.ranks = {rank};
  const std::string exits_path = dir / "exits";
  const int exits = open(exits_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  REQUIRE(exits >= 0);
  int pair[2];
  REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, pair) == 0);
  const pid_t shim = fork();
  if (shim == 0) {
    dup2(pair[1], 0);
    dup2(pair[1], 1);
    dup2(exits, 3);
    close_range(4, ~0U, 0);
    char program[] = GPUSCHED_SHIM_BINARY;
    char* argv[] = {program, nullptr};
    execv(program, argv);
    _exit(127);
  }
  close(pair[1]);
  close(exits);
  const std::string encoded = EncodeShimSpec(spec);
  REQUIRE(write(pair[0], encoded.data(), encoded.size()) == static_cast<ssize_t>(encoded.size()));
  close(pair[0]);  // the agent dies before the reply
  int status = 0;
  REQUIRE(waitpid(shim, &status, 0) == shim);
  CHECK(WIFEXITED(status));
  const ShimExits ended = ParseShimExits(ReadFile(exits_path));
  CHECK(ended.fenced);
  CHECK(ended.ended);
  REQUIRE(ended.exits.size() == 1);
  CHECK(WTERMSIG(ended.exits[0].wait_status) == SIGKILL);
}

TEST_CASE("a record left by an agent from before the shims: its ranks' groups are killed, not left running") {
  TempDir dir;
  // A process group leader, as the old agent started ranks.
  const pid_t rank = fork();
  if (rank == 0) {
    setsid();
    execl("/bin/sleep", "sleep", "30", nullptr);
    _exit(127);
  }
  // Its own group once setsid has run, as the old agent's ranks were.
  for (int i = 0; i < 500 && getpgid(rank) != rank; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(getpgid(rank) == rank);
  std::string boot = ReadFile("/proc/sys/kernel/random/boot_id");
  boot = boot.substr(0, boot.find('\n'));
  std::filesystem::create_directories(dir / "running/test-node");
  WriteFile(dir / "running/test-node/job-39",
            absl::StrCat("boot ", boot, "\nattempt 0\ngroup ", rank, " ", ProcessStartTime(rank), "\n"));
  UpdateRecorder updates;
  JobRunner runner(RunnerOptions(dir), updates.Callback());
  CHECK(runner.RunningJobs().empty());
  int status = 0;
  REQUIRE(waitpid(rank, &status, 0) == rank);
  CHECK(WTERMSIG(status) == SIGKILL);
}

TEST_CASE("a rank's cleanup runs before it starts and after it ends, killed or not") {
  TempDir dir;
  const std::string cleanups = dir / "cleanups";
  auto shim_for = [&](uint64_t job_id, const std::string& command) {
    ShimSpec spec;
    spec.job_id = job_id;
    ProcessSpec rank;
    rank.executable = "/bin/sh";
    rank.argv = {"/bin/sh", "-c", command};
    rank.workdir = "/";
    rank.log_path = dir / absl::StrCat("rank-", job_id, ".log");
    // What a container rank's `podman rm` stands for: it must have run by the
    // time the shim reports the rank's end.
    rank.cleanup_argv = {"/bin/sh", "-c", absl::StrCat("echo job ", job_id, " >> ", cleanups)};
    spec.ranks = {rank};
    auto shim = JobShim::Start(GPUSCHED_SHIM_BINARY, spec, dir / absl::StrCat("exits-", job_id));
    REQUIRE(shim.ok());
    return *std::move(shim);
  };
  auto wait_end = [&](JobShim& shim, uint64_t job_id) {
    for (int i = 0; i < 500 && !shim.Exited(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    REQUIRE(shim.Exited());
    return ParseShimExits(ReadFile(dir / absl::StrCat("exits-", job_id)));
  };

  JobShim ends = shim_for(41, "exit 3");
  const ShimExits ended = wait_end(ends, 41);
  REQUIRE(ended.exits.size() == 1);
  CHECK(WEXITSTATUS(ended.exits[0].wait_status) == 3);
  CHECK(ReadFile(cleanups) == "job 41\njob 41\n");

  JobShim killed = shim_for(42, "exec sleep 30");
  REQUIRE(killed.Signal(kShimKillSignal));
  const ShimExits killed_exits = wait_end(killed, 42);
  REQUIRE(killed_exits.exits.size() == 1);
  CHECK(WTERMSIG(killed_exits.exits[0].wait_status) == SIGKILL);
  CHECK(ReadFile(cleanups) == "job 41\njob 41\njob 42\njob 42\n");
}

TEST_CASE("a shim that does not answer fails the launch after its deadline; its end is reported once it ends") {
  TempDir dir;
  // A shim stuck for 3 s, as one whose rank's exec hangs on a dead
  // filesystem would be.
  const std::string stuck = dir / "stuck-shim";
  // (Its stderr, the agent's, to /dev/null: ctest waits for it to close.)
  WriteFile(stuck, "#!/bin/sh\nexec /bin/sleep 3 2>/dev/null\n");
  REQUIRE(chmod(stuck.c_str(), 0755) == 0);
  JobRunnerOptions options = RunnerOptions(dir);
  options.shim_program = stuck;
  options.shim_reply_within = absl::Seconds(1);
  UpdateRecorder updates;
  JobRunner runner(options, updates.Callback());
  const auto began = std::chrono::steady_clock::now();
  runner.Launch(MakeShellLaunch(39, "touch " + (dir / "ran")));
  auto failed = updates.WaitFor(39, Kind::KIND_LAUNCH_FAILED);
  REQUIRE(failed);
  CHECK(std::chrono::steady_clock::now() - began < std::chrono::seconds(20));
  CHECK_THAT(failed->message(), Catch::Contains("the job shim did not say within 1s whether the ranks started"));
  // Not the job's fault, and the daemon keeps the node for this attempt
  // until it is reported gone.
  CHECK(failed->earlier_attempt_running());
  CHECK(runner.RunningJobIds().empty());
  auto gone = updates.WaitFor(39, Kind::KIND_EXITED, absl::Seconds(10));
  REQUIRE(gone);
  CHECK(gone->attempt() == failed->attempt());
  CHECK_THAT(gone->message(), Catch::Contains("the shim given up on at launch has ended"));
}
