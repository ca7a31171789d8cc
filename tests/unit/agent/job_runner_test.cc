#include "agent/runner/job_runner.h"

#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "test_util.h"
#include "tests/skip.h"

using namespace gpusched::agent;
using namespace gpusched::agent::testing;
namespace v1 = gpusched::v1;
using Kind = v1::JobUpdate;

TEST_CASE("a job's exit code is reported, and stdout and stderr both land in its rank log") {
  TempDir dir;
  UpdateRecorder updates;
  JobRunner runner(RunnerOptions(dir), updates.Callback());
  runner.Launch(MakeShellLaunch(1, "echo to-stdout; echo to-stderr >&2; exit 3"));

  auto started = updates.WaitFor(1, Kind::KIND_STARTED);
  REQUIRE(started);
  CHECK(started->log_dir() == dir / "job-1");
  auto exited = updates.WaitFor(1, Kind::KIND_EXITED);
  REQUIRE(exited);
  CHECK(exited->exit_code() == 3);
  CHECK_THAT(exited->message(), Catch::Contains("rank 0 exited with code 3"));
  const std::string log = ReadFile(dir / "job-1/rank-0.log");
  CHECK_THAT(log, Catch::Contains("to-stdout"));
  CHECK_THAT(log, Catch::Contains("to-stderr"));
  // STARTED comes before EXITED, once each.
  auto all = updates.All();
  REQUIRE(all.size() == 2);
  CHECK(all[0].kind() == Kind::KIND_STARTED);
  CHECK(runner.RunningJobIds().empty());
}

TEST_CASE("a job that succeeds reports 0") {
  TempDir dir;
  UpdateRecorder updates;
  JobRunner runner(RunnerOptions(dir), updates.Callback());
  runner.Launch(MakeLaunch(2, {"true"}));
  auto exited = updates.WaitFor(2, Kind::KIND_EXITED);
  REQUIRE(exited);
  CHECK(exited->exit_code() == 0);
  CHECK(exited->message().empty());
}

TEST_CASE("a job killed by signal N reports 128+N") {
  TempDir dir;
  UpdateRecorder updates;
  JobRunner runner(RunnerOptions(dir), updates.Callback());
  runner.Launch(MakeShellLaunch(3, "kill -USR1 $$"));
  auto exited = updates.WaitFor(3, Kind::KIND_EXITED);
  REQUIRE(exited);
  CHECK(exited->exit_code() == 128 + SIGUSR1);
  CHECK_THAT(exited->message(), Catch::Contains("SIGUSR1"));
}

TEST_CASE("per-GPU launch: one process per GPU, each with its rank; the job ends when the last one does") {
  TempDir dir;
  UpdateRecorder updates;
  JobRunner runner(RunnerOptions(dir), updates.Callback());
  v1::LaunchJob launch = MakeShellLaunch(
      4,
      "echo RANK=$RANK LOCAL_RANK=$LOCAL_RANK CVD=$CUDA_VISIBLE_DEVICES LWS=$LOCAL_WORLD_SIZE WS=$WORLD_SIZE; "
      "if [ $LOCAL_RANK = 1 ]; then exit 7; fi; sleep 0.3",
      {3, 5});
  launch.set_rank_offset(4);
  launch.set_world_size(8);
  const auto t0 = std::chrono::steady_clock::now();
  runner.Launch(launch);
  auto exited = updates.WaitFor(4, Kind::KIND_EXITED);
  const auto elapsed = std::chrono::steady_clock::now() - t0;
  REQUIRE(exited);
  CHECK(exited->exit_code() == 7);  // the first non-zero exit, though rank 4 exits 0 later
  CHECK_THAT(exited->message(), Catch::Contains("rank 5 exited with code 7"));
  CHECK(elapsed >= std::chrono::milliseconds(250));
  CHECK_THAT(ReadFile(dir / "job-4/rank-4.log"), Catch::Contains("RANK=4 LOCAL_RANK=0 CVD=3,5 LWS=2 WS=8"));
  CHECK_THAT(ReadFile(dir / "job-4/rank-5.log"), Catch::Contains("RANK=5 LOCAL_RANK=1 CVD=3,5 LWS=2 WS=8"));
}

TEST_CASE("per-node launch: one process, whatever the GPU count") {
  TempDir dir;
  UpdateRecorder updates;
  JobRunner runner(RunnerOptions(dir), updates.Callback());
  v1::LaunchJob launch =
      MakeShellLaunch(5, "echo RANK=$RANK LOCAL_RANK=$LOCAL_RANK LWS=$LOCAL_WORLD_SIZE", {0, 1, 2, 3});
  launch.mutable_spec()->set_launch_mode(v1::LAUNCH_MODE_PER_NODE);
  launch.set_rank_offset(1);
  launch.set_node_rank(1);
  runner.Launch(launch);
  REQUIRE(updates.WaitFor(5, Kind::KIND_EXITED));
  CHECK_THAT(ReadFile(dir / "job-5/rank-1.log"), Catch::Contains("RANK=1 LOCAL_RANK=0 LWS=4"));
  CHECK(access((dir / "job-5/rank-2.log").c_str(), F_OK) != 0);
}

TEST_CASE("killing a job takes down its whole process group, grandchildren included") {
  TempDir dir;
  UpdateRecorder updates;
  JobRunner runner(RunnerOptions(dir), updates.Callback());
  runner.Launch(MakeShellLaunch(6, "sleep 300 & echo $! > " + (dir / "grandchild.pid") + "; wait"));
  REQUIRE(updates.WaitFor(6, Kind::KIND_STARTED));
  const pid_t grandchild = ReadPid(dir / "grandchild.pid");
  REQUIRE_FALSE(ProcessGone(grandchild));

  runner.Kill(6, absl::Seconds(5), "cancelled by test");
  auto exited = updates.WaitFor(6, Kind::KIND_EXITED);
  REQUIRE(exited);
  CHECK(exited->exit_code() == 128 + SIGTERM);
  CHECK_THAT(exited->message(), Catch::Contains("cancelled by test"));
  CHECK(WaitForProcessGone(grandchild, absl::Seconds(2)));
}

TEST_CASE("a process that ignores SIGTERM gets SIGKILL when the grace is over") {
  TempDir dir;
  UpdateRecorder updates;
  JobRunner runner(RunnerOptions(dir), updates.Callback());
  runner.Launch(MakeShellLaunch(7, "trap 'echo got TERM' TERM; echo ready; while :; do sleep 0.05; done"));
  REQUIRE(WaitForFileContaining(dir / "job-7/rank-0.log", "ready"));

  const auto t0 = std::chrono::steady_clock::now();
  runner.Kill(7, absl::Milliseconds(400), "test");
  auto exited = updates.WaitFor(7, Kind::KIND_EXITED);
  const auto elapsed = std::chrono::steady_clock::now() - t0;
  REQUIRE(exited);
  CHECK(exited->exit_code() == 128 + SIGKILL);
  CHECK(elapsed >= std::chrono::milliseconds(400));
  CHECK(elapsed < std::chrono::seconds(3));
  CHECK_THAT(ReadFile(dir / "job-7/rank-0.log"), Catch::Contains("got TERM"));
}

TEST_CASE("a preempted job finds its deadline in GPUSCHED_PREEMPT_NOTICE when SIGTERM comes; a cancelled one none") {
  TempDir dir;
  UpdateRecorder updates;
  JobRunner runner(RunnerOptions(dir), updates.Callback());
  // What a checkpointing job does: on SIGTERM, read the notice if there is one.
  const std::string script =
      "trap 'if [ -f \"$GPUSCHED_PREEMPT_NOTICE\" ]; then echo notice:; cat \"$GPUSCHED_PREEMPT_NOTICE\"; "
      "else echo no notice; fi; exit 0' TERM; echo ready $GPUSCHED_RESTART_COUNT; while :; do sleep 0.05; done";
  runner.Launch(MakeShellLaunch(21, script));
  REQUIRE(WaitForFileContaining(dir / "job-21/rank-0.log", "ready 0"));
  const absl::Time deadline = absl::FromUnixSeconds(absl::ToUnixSeconds(absl::Now()) + 120);
  runner.Kill(21, absl::Seconds(5), "spot interruption of n1", 0, deadline);
  REQUIRE(updates.WaitFor(21, Kind::KIND_EXITED));
  const std::string log = ReadFile(dir / "job-21/rank-0.log");
  CHECK_THAT(log, Catch::Contains(absl::StrCat("deadline_unix_ms=", absl::ToUnixMillis(deadline))));
  CHECK_THAT(log, Catch::Contains("reason=spot interruption of n1"));
  CHECK_THAT(log, Catch::Contains("seconds_left=1"));  // 119 or 120

  // Its next attempt starts without the old notice, and a plain kill gives none.
  v1::LaunchJob again = MakeShellLaunch(21, script);
  again.set_attempt(1);
  runner.Launch(again);
  REQUIRE(WaitForFileContaining(dir / "job-21/rank-0.log", "ready 1"));
  runner.Kill(21, absl::Seconds(5), "cancelled", 1);
  for (int i = 0; i < 200 && !absl::StrContains(ReadFile(dir / "job-21/rank-0.log"), "no notice"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK_THAT(ReadFile(dir / "job-21/rank-0.log"), Catch::Contains("no notice"));
}

TEST_CASE("a planted link where the notice goes is refused, not written through") {
  TempDir dir;
  UpdateRecorder updates;
  JobRunner runner(RunnerOptions(dir), updates.Callback());
  const std::string target = dir / "victim";
  runner.Launch(MakeShellLaunch(22, "ln -s " + target + " \"$GPUSCHED_PREEMPT_NOTICE\"; echo ready; sleep 300"));
  REQUIRE(WaitForFileContaining(dir / "job-22/rank-0.log", "ready"));
  runner.Kill(22, absl::Seconds(1), "preempted", 0, absl::Now() + absl::Seconds(60));
  REQUIRE(updates.WaitFor(22, Kind::KIND_EXITED));
  CHECK_FALSE(std::filesystem::exists(target));
}

TEST_CASE("a missing executable is a launch failure that names it") {
  TempDir dir;
  UpdateRecorder updates;
  JobRunner runner(RunnerOptions(dir), updates.Callback());
  runner.Launch(MakeLaunch(8, {"gpusched-no-such-command", "--x"}));
  auto failed = updates.WaitFor(8, Kind::KIND_LAUNCH_FAILED);
  REQUIRE(failed);
  CHECK(failed->message() == "exec \"gpusched-no-such-command\": No such file or directory");

  // A path with a '/' is not looked up; exec itself fails and says so through the pipe.
  runner.Launch(MakeLaunch(9, {dir / "missing.sh"}));
  failed = updates.WaitFor(9, Kind::KIND_LAUNCH_FAILED);
  REQUIRE(failed);
  CHECK(failed->message() == "exec \"" + (dir / "missing.sh") + "\": No such file or directory");

  // A file that is not executable.
  WriteFile(dir / "not-executable", "echo hi\n");
  runner.Launch(MakeLaunch(10, {dir / "not-executable"}, {0, 1}));
  failed = updates.WaitFor(10, Kind::KIND_LAUNCH_FAILED);
  REQUIRE(failed);
  CHECK_THAT(failed->message(), Catch::Contains("Permission denied"));
  CHECK(updates.Count(10, Kind::KIND_STARTED) == 0);
  CHECK(runner.RunningJobIds().empty());
}

TEST_CASE("a missing workdir is a launch failure that names it") {
  TempDir dir;
  UpdateRecorder updates;
  JobRunner runner(RunnerOptions(dir), updates.Callback());
  v1::LaunchJob launch = MakeLaunch(11, {"true"});
  launch.mutable_spec()->set_workdir(dir / "no-such-dir");
  runner.Launch(launch);
  auto failed = updates.WaitFor(11, Kind::KIND_LAUNCH_FAILED);
  REQUIRE(failed);
  CHECK_THAT(failed->message(), Catch::StartsWith("workdir \"" + (dir / "no-such-dir") + "\": No such file"));
}

TEST_CASE("the job runs in its workdir, with the scheduler's environment and nothing of the agent's") {
  TempDir dir;
  UpdateRecorder updates;
  JobRunner runner(RunnerOptions(dir), updates.Callback());
  REQUIRE(mkdir((dir / "work").c_str(), 0755) == 0);
  v1::LaunchJob launch = MakeShellLaunch(12,
                                         "pwd; echo JOB=$GPUSCHED_JOB_ID NODE=$GPUSCHED_NODE LOGS=$GPUSCHED_LOG_DIR; "
                                         "grep SigBlk /proc/self/status; ls /proc/self/fd | tr '\\n' ' '; echo; "
                                         "read line; echo stdin-rc=$?");
  launch.mutable_spec()->set_workdir(dir / "work");
  // A descriptor without O_CLOEXEC and a blocked SIGTERM, as the agent binary
  // has (it blocks SIGTERM for sigwait): neither may reach the job.
  const int leak = dup2(open("/dev/null", O_RDONLY), 77);
  sigset_t term, old;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &term, &old);
  runner.Launch(launch);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  close(leak);

  auto exited = updates.WaitFor(12, Kind::KIND_EXITED);
  REQUIRE(exited);
  const std::string log = ReadFile(dir / "job-12/rank-0.log");
  CHECK_THAT(log, Catch::StartsWith(dir / "work\n"));
  CHECK_THAT(log, Catch::Contains("JOB=12 NODE=test-node LOGS=" + (dir / "job-12")));
  CHECK_THAT(log, Catch::Contains("SigBlk:\t0000000000000000"));
  CHECK_THAT(log, Catch::Contains("0 1 2 3 \n"));  // ls's own directory is 3; 77 is gone
  CHECK_THAT(log, Catch::Contains("stdin-rc=1"));  // /dev/null: end of input at once
}

TEST_CASE("scripts run with /bin/sh, or with their own #! interpreter") {
  TempDir dir;
  UpdateRecorder updates;
  JobRunner runner(RunnerOptions(dir), updates.Callback());
  v1::LaunchJob plain = MakeLaunch(13, {});
  plain.mutable_spec()->set_script("echo from-sh; exit 4\n");
  runner.Launch(plain);
  v1::LaunchJob shebang = MakeLaunch(14, {});
  shebang.mutable_spec()->set_script("#!/usr/bin/env sh\necho from-shebang \"$0\"\n");
  runner.Launch(shebang);

  auto first = updates.WaitFor(13, Kind::KIND_EXITED);
  REQUIRE(first);
  CHECK(first->exit_code() == 4);
  CHECK_THAT(ReadFile(dir / "job-13/rank-0.log"), Catch::Contains("from-sh"));
  auto second = updates.WaitFor(14, Kind::KIND_EXITED);
  REQUIRE(second);
  CHECK(second->exit_code() == 0);
  CHECK_THAT(ReadFile(dir / "job-14/rank-0.log"), Catch::Contains("from-shebang " + (dir / "job-14/script")));
}

TEST_CASE("launch is idempotent per job id") {
  TempDir dir;
  UpdateRecorder updates;
  JobRunner runner(RunnerOptions(dir), updates.Callback());
  v1::LaunchJob launch = MakeShellLaunch(15, "echo started-once; read x < " + (dir / "fifo"));
  REQUIRE(mkfifo((dir / "fifo").c_str(), 0600) == 0);
  runner.Launch(launch);
  REQUIRE(updates.WaitFor(15, Kind::KIND_STARTED));
  runner.Launch(launch);  // while running: STARTED again, no second process
  CHECK(updates.Count(15, Kind::KIND_STARTED) == 2);
  CHECK(runner.RunningJobIds() == std::vector<uint64_t>{15});

  int fd = open((dir / "fifo").c_str(), O_WRONLY);
  REQUIRE(fd >= 0);
  REQUIRE(write(fd, "go\n", 3) == 3);
  close(fd);
  REQUIRE(updates.WaitFor(15, Kind::KIND_EXITED));
  // After the end: the stored report, nothing started. The runner answers a
  // launch it will not start before Launch returns, and one it starts is
  // running (or reported) by then: so both counts are final here.
  runner.Launch(launch);
  CHECK(updates.Count(15, Kind::KIND_EXITED) == 2);
  CHECK(updates.Count(15, Kind::KIND_STARTED) == 2);
  CHECK(runner.RunningJobIds().empty());
  const std::string log = ReadFile(dir / "job-15/rank-0.log");
  CHECK(log == "started-once\n");
}

TEST_CASE("a kill for a job that is not here is answered so the daemon can close it") {
  TempDir dir;
  UpdateRecorder updates;
  JobRunner runner(RunnerOptions(dir), updates.Callback());
  runner.Kill(99, absl::Seconds(1), "cancel");
  auto answer = updates.WaitFor(99, Kind::KIND_EXITED);
  REQUIRE(answer);
  CHECK(answer->exit_code() == 0);
  CHECK(answer->message() == "not running on test-node");

  // A kill is answered, or not, before the call returns.
  runner.KillIfRunning(98, absl::Seconds(1), "stale");
  CHECK(updates.Count(98, Kind::KIND_EXITED) == 0);
}

TEST_CASE("shutdown kills every job and reports each exit before it returns") {
  TempDir dir;
  UpdateRecorder updates;
  JobRunner runner(RunnerOptions(dir), updates.Callback());
  runner.Launch(MakeShellLaunch(16, "echo $$ > " + (dir / "pid") + "; exec sleep 300"));
  runner.Launch(MakeLaunch(17, {"sleep", "300"}, {0, 1}));
  REQUIRE(updates.WaitFor(17, Kind::KIND_STARTED));
  const pid_t pid = ReadPid(dir / "pid");

  const auto t0 = std::chrono::steady_clock::now();
  runner.Shutdown(absl::Seconds(2));
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2));  // sleep dies at SIGTERM
  CHECK(updates.Count(16, Kind::KIND_EXITED) == 1);
  CHECK(updates.Count(17, Kind::KIND_EXITED) == 1);
  CHECK(WaitForProcessGone(pid, absl::Seconds(1)));

  runner.Launch(MakeLaunch(18, {"true"}));
  auto refused = updates.WaitFor(18, Kind::KIND_LAUNCH_FAILED, absl::Seconds(1));
  REQUIRE(refused);
  CHECK_THAT(refused->message(), Catch::Contains("shutting down"));
}

TEST_CASE("as root, a job runs as its user; otherwise another user is refused") {
  TempDir dir;
  UpdateRecorder updates;
  JobRunner runner(RunnerOptions(dir), updates.Callback());
  v1::LaunchJob launch = MakeShellLaunch(19, "id -un; pwd; echo HOME=$HOME");
  launch.mutable_spec()->set_user("nobody");
  if (geteuid() == 0) {
    REQUIRE(getpwnam("nobody") != nullptr);
    REQUIRE(chmod(dir.path().c_str(), 0755) == 0);  // mkdtemp made it 0700
    runner.Launch(launch);
    auto exited = updates.WaitFor(19, Kind::KIND_EXITED);
    REQUIRE(exited);
    CHECK(exited->exit_code() == 0);
    const std::string log = ReadFile(dir / "job-19/rank-0.log");
    CHECK_THAT(log, Catch::StartsWith("nobody\n/tmp\nHOME=/nonexistent"));
    struct stat st;
    REQUIRE(stat((dir / "job-19/rank-0.log").c_str(), &st) == 0);
    CHECK(st.st_uid == getpwnam("nobody")->pw_uid);
  } else {
    runner.Launch(launch);
    auto failed = updates.WaitFor(19, Kind::KIND_LAUNCH_FAILED);
    REQUIRE(failed);
    CHECK_THAT(failed->message(), Catch::Contains("cannot start jobs as nobody"));
  }
}

TEST_CASE("a requeued job's next attempt runs again, apart from the earlier attempt's report") {
  TempDir dir;
  UpdateRecorder updates;
  JobRunner runner(RunnerOptions(dir), updates.Callback());
  runner.Launch(MakeShellLaunch(9, "echo restart $GPUSCHED_RESTART_COUNT; exit 4"));
  auto first = updates.WaitFor(9, Kind::KIND_EXITED);
  REQUIRE(first);
  CHECK(first->attempt() == 0);
  CHECK(first->exit_code() == 4);

  // The same attempt again is answered with its stored report, not run again.
  runner.Launch(MakeShellLaunch(9, "echo restart $GPUSCHED_RESTART_COUNT; exit 4"));
  // A new attempt runs, and its reports say which attempt they are about.
  v1::LaunchJob second = MakeShellLaunch(9, "echo restart $GPUSCHED_RESTART_COUNT; exit 0");
  second.set_attempt(1);
  runner.Launch(second);
  for (int i = 0; i < 200; ++i) {
    bool done = false;
    for (const v1::JobUpdate& u : updates.All()) done = done || (u.attempt() == 1 && u.kind() == Kind::KIND_EXITED);
    if (done) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::vector<v1::JobUpdate> of_second;
  for (const v1::JobUpdate& u : updates.All()) {
    if (u.attempt() == 1) of_second.push_back(u);
  }
  REQUIRE(of_second.size() == 2);
  CHECK(of_second[0].kind() == Kind::KIND_STARTED);
  CHECK(of_second[1].kind() == Kind::KIND_EXITED);
  CHECK(of_second[1].exit_code() == 0);
  // Both attempts' output, appended, each with its restart count.
  CHECK_THAT(ReadFile(dir / "job-9/rank-0.log"), Catch::Contains("restart 0\nrestart 1\n"));

  // A kill for an attempt that ended is answered for that attempt.
  runner.Kill(9, absl::Seconds(1), "cancelled", 1);
  auto all = updates.All();
  CHECK(all.back().attempt() == 1);
}

TEST_CASE("an earlier attempt's report is not sent again while a later attempt of the job runs here") {
  TempDir dir;
  UpdateRecorder updates;
  JobRunner runner(RunnerOptions(dir), updates.Callback());
  runner.Launch(MakeShellLaunch(9, "exit 4"));
  REQUIRE(updates.WaitFor(9, Kind::KIND_EXITED));
  REQUIRE(runner.RecentReports().size() == 1);
  v1::LaunchJob second = MakeShellLaunch(9, "sleep 30");
  second.set_attempt(1);
  runner.Launch(second);
  for (int i = 0; i < 200 && runner.RunningJobIds().empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  REQUIRE(runner.RunningJobIds() == std::vector<uint64_t>{9});
  CHECK(runner.RecentReports().empty());
  runner.Kill(9, absl::Seconds(1), "cancelled", 1);
  for (int i = 0; i < 200 && !runner.RunningJobIds().empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const std::vector<v1::JobUpdate> recent = runner.RecentReports();
  REQUIRE(recent.size() == 1);
  CHECK(recent[0].attempt() == 1);
}

TEST_CASE("a launch the crash ledger cannot record (a full disk) is refused with ENOSPC, and nothing runs") {
  if (geteuid() != 0) {
    GPUSCHED_SKIP("not root, cannot mount a small tmpfs to fill");
  }
  TempDir dir;
  const std::string logs = dir / "logs";
  REQUIRE(mkdir(logs.c_str(), 0755) == 0);
  if (mount("tmpfs", logs.c_str(), "tmpfs", 0, "size=64k") != 0) {
    GPUSCHED_SKIP("cannot mount a tmpfs here: " << std::strerror(errno));
  }
  struct Unmount {
    std::string path;
    ~Unmount() { umount2(path.c_str(), MNT_DETACH); }
  } unmount{logs};
  JobRunnerOptions options = RunnerOptions(dir);
  options.log_dir = logs;
  UpdateRecorder updates;
  JobRunner runner(options, updates.Callback());
  // Fill it: the job's log files are empty and still fit (inodes), the
  // ledger's record does not.
  {
    const int fd = open((logs + "/filler").c_str(), O_WRONLY | O_CREAT, 0600);
    REQUIRE(fd >= 0);
    const std::string block(4096, 'x');
    while (write(fd, block.data(), block.size()) > 0) {
    }
    close(fd);
  }
  const std::string proof = dir / "ran";
  runner.Launch(MakeLaunch(21, {"/bin/sh", "-c", "touch " + proof}));
  auto failed = updates.WaitFor(21, Kind::KIND_LAUNCH_FAILED);
  REQUIRE(failed);
  CHECK_THAT(failed->message(), Catch::Contains("cannot record the job in the agent's crash ledger") &&
                                    Catch::Contains("No space left on device"));
  CHECK(updates.Count(21, Kind::KIND_STARTED) == 0);
  // Nothing was spawned: a shim started is a running job until its end is
  // reported, and a job that ran would have left its proof.
  CHECK(runner.RunningJobIds().empty());
  CHECK_FALSE(std::filesystem::exists(proof));

  // Space again: the next launch runs.
  REQUIRE(unlink((logs + "/filler").c_str()) == 0);
  runner.Launch(MakeLaunch(22, {"/bin/true"}));
  auto exited = updates.WaitFor(22, Kind::KIND_EXITED);
  REQUIRE(exited);
  CHECK(exited->exit_code() == 0);
}

TEST_CASE("a final report answers for its job for an hour of the runner's clock, then is forgotten") {
  TempDir dir;
  gpusched::ManualClock clock(absl::FromUnixSeconds(1'800'000'000));
  JobRunnerOptions options = RunnerOptions(dir);
  options.clock = &clock;
  UpdateRecorder updates;
  JobRunner runner(options, updates.Callback());
  runner.Launch(MakeShellLaunch(40, "exit 7"));
  auto exited = updates.WaitFor(40, Kind::KIND_EXITED);
  REQUIRE(exited);
  CHECK(exited->exit_code() == 7);

  clock.Advance(absl::Minutes(59));
  REQUIRE(runner.RecentReports().size() == 1);  // sent again after each registration
  runner.Kill(40, absl::Seconds(1), "cancel");  // a resent kill: the stored report
  CHECK(updates.Count(40, Kind::KIND_EXITED) == 2);
  CHECK(updates.All().back().exit_code() == 7);

  clock.Advance(absl::Minutes(2));
  CHECK(runner.RecentReports().empty());
  runner.Kill(40, absl::Seconds(1), "cancel");
  CHECK(updates.All().back().message() == "not running on test-node");
}
