#include "agent/runner/mps_control_daemon.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "absl/time/clock.h"
#include "common/io/logging/logging.h"
#include "test_util.h"
#include "tests/skip.h"

using namespace gpusched::agent;
using namespace gpusched::agent::testing;

namespace {

// The stand-in records its starts and commands here (see its header).
std::string StandInLog(const TempDir& dir) { return ReadFile(dir / "log/stand-in.log"); }

MpsControlOptions Options(const TempDir& dir) {
  MpsControlOptions options;
  options.program = GPUSCHED_FAKE_MPS_CONTROL;
  options.pipe_dir = dir / "pipe";
  options.log_dir = dir / "log";
  options.gpus = {"GPU-aaaa", "GPU-bbbb"};
  options.first_backoff = absl::Milliseconds(50);
  options.max_backoff = absl::Milliseconds(200);
  options.stop_grace = absl::Seconds(2);
  return options;
}

// Running, not a zombie: a detached daemon is still this test's child.
bool Alive(pid_t pid) {
  if (pid <= 0) return false;
  const std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  const size_t end = stat.rfind(')');
  return end != std::string::npos && end + 2 < stat.size() && stat[end + 2] != 'Z';
}

// Waits up to 5 s for `done`.
template <typename Done>
bool Eventually(Done done) {
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  while (absl::Now() < deadline) {
    if (done()) return true;
    absl::SleepFor(absl::Milliseconds(20));
  }
  return done();
}

}  // namespace

TEST_CASE("the MPS control daemon runs in the foreground with the agent's directories and only the MPS GPUs") {
  TempDir dir;
  MpsControlDaemon mps(Options(dir), gpusched::GetLogger("test"));
  REQUIRE(mps.Start().ok());
  CHECK(mps.Ready().ok());
  const pid_t pid = mps.pid();
  CHECK(Alive(pid));
  // Listening once its pid file is there, as the real daemon's.
  REQUIRE(Eventually([&] { return std::filesystem::exists(dir / "pipe/nvidia-cuda-mps-control.pid"); }));
  CHECK(StandInLog(dir).find("pipe=" + dir / "pipe" + " log=" + dir / "log" + " devices=GPU-aaaa,GPU-bbbb") !=
        std::string::npos);
  // Clients (the jobs' users) must reach the pipe directory.
  CHECK((std::filesystem::status(dir / "pipe").permissions() & std::filesystem::perms::others_exec) !=
        std::filesystem::perms::none);

  mps.Stop();
  CHECK(StandInLog(dir).find("command: quit") != std::string::npos);
  CHECK_FALSE(Alive(pid));
  CHECK_FALSE(mps.Ready().ok());
}

TEST_CASE("an MPS control daemon that dies is started again, and Ready says why it is down meanwhile") {
  TempDir dir;
  MpsControlOptions options = Options(dir);
  options.first_backoff = absl::Seconds(1);  // a window the checks below cannot miss
  options.max_backoff = absl::Seconds(2);
  MpsControlDaemon mps(options, gpusched::GetLogger("test"));
  REQUIRE(mps.Start().ok());
  const pid_t first = mps.pid();
  REQUIRE(first > 0);
  kill(first, SIGKILL);
  REQUIRE(Eventually([&] { return !mps.Ready().ok(); }));
  CHECK_THAT(std::string(mps.Ready().message()), Catch::Contains("was killed by signal 9"));
  REQUIRE(Eventually([&] { return mps.pid() != 0 && mps.pid() != first; }));
  CHECK(mps.Ready().ok());
  CHECK(mps.restarts() == 1);
  mps.Stop();
}

TEST_CASE("an MPS control daemon that cannot start leaves Ready with the reason, and is retried") {
  TempDir dir;
  SECTION("the program does not exist") {
    MpsControlOptions options = Options(dir);
    options.program = dir / "no-such-mps-control";
    MpsControlDaemon mps(options, gpusched::GetLogger("test"));
    REQUIRE(mps.Start().ok());
    CHECK_THAT(std::string(mps.Ready().message()), Catch::Contains("no-such-mps-control"));
    CHECK(Eventually([&] { return mps.restarts() >= 2; }));
  }
  SECTION("it exits at once") {
    MpsControlOptions options = Options(dir);
    options.env["STAND_IN_EXIT"] = "3";
    options.first_backoff = absl::Seconds(1);  // Ready() is read inside the wait before the retry
    options.max_backoff = absl::Seconds(2);
    MpsControlDaemon mps(options, gpusched::GetLogger("test"));
    REQUIRE(mps.Start().ok());
    REQUIRE(Eventually([&] { return mps.restarts() >= 1; }));
    CHECK_THAT(std::string(mps.Ready().message()), Catch::Contains("exited with status 3"));
    CHECK_THAT(std::string(mps.Ready().message()), Catch::Contains(dir / "log"));
  }
}

TEST_CASE("an agent that detaches leaves its MPS control daemon running, and the next one adopts it") {
  TempDir dir;
  pid_t pid = 0;
  {
    MpsControlDaemon first(Options(dir), gpusched::GetLogger("test"));
    REQUIRE(first.Start().ok());
    pid = first.pid();
    REQUIRE(Eventually([&] { return std::filesystem::exists(dir / "pipe/nvidia-cuda-mps-control.pid"); }));
    first.Detach();
  }
  CHECK(Alive(pid));
  MpsControlDaemon next(Options(dir), gpusched::GetLogger("test"));
  REQUIRE(next.Start().ok());
  CHECK(next.pid() == pid);
  CHECK(next.Ready().ok());
  next.Stop();
  CHECK(StandInLog(dir).find("command: quit") != std::string::npos);
  CHECK(Eventually([&] { return !Alive(pid); }));
}

TEST_CASE("a process of another user on the pid file's pid is not adopted as the MPS control daemon") {
  if (geteuid() != 0) GPUSCHED_SKIP("needs root: the stand-in runs as another user");
  TempDir dir;
  std::filesystem::create_directories(dir / "pipe");
  // Named like the control daemon, running as nobody.
  const pid_t impostor = fork();
  if (impostor == 0) {
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(1);
    execl("/bin/sh", "nvidia-cuda-mps-control", "-c", "sleep 30", static_cast<char*>(nullptr));
    _exit(127);
  }
  REQUIRE(impostor > 0);
  REQUIRE(Eventually(
      [&] { return ReadFile("/proc/" + std::to_string(impostor) + "/cmdline").find("nvidia-cuda-mps-control") == 0; }));
  WriteFile(dir / "pipe/nvidia-cuda-mps-control.pid", std::to_string(impostor) + "\n");
  {
    MpsControlDaemon daemon(Options(dir), gpusched::GetLogger("test"));
    REQUIRE(daemon.Start().ok());
    CHECK(daemon.pid() != impostor);
    daemon.Stop();
  }
  CHECK(Alive(impostor));  // not signalled as ours either
  kill(impostor, SIGKILL);
  waitpid(impostor, nullptr, 0);
}
