// gpuschedd serve and gpusched-agent under a stand-in for systemd: READY=1
// once serving, WATCHDOG=1 at half of WATCHDOG_USEC, STOPPING=1 on SIGTERM,
// and nothing of the kind without NOTIFY_SOCKET (every other test runs so).
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tests/service/notify_socket.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

using gpusched::testing::NotifySocket;
using gpusched::testing::ReadFile;
using gpusched::testing::Spawn;
using gpusched::testing::TempDir;
using gpusched::testing::WaitForExit;

namespace {

// An empty settings file: nothing from /etc/gpusched reaches the test.
std::string EmptySettings(const TempDir& dir) { return dir.Write("empty.toml", "# no settings\n"); }

// A child process that is SIGKILLed if the test ends early.
struct Child {
  pid_t pid;
  std::string log;
  ~Child() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      WaitForExit(pid);
    }
  }
  int Stop(int sig) {
    kill(pid, sig);
    const int code = WaitForExit(pid);
    pid = -1;
    return code;
  }
};

Child StartDaemon(const TempDir& dir, const std::map<std::string, std::string>& env,
                  const std::string& tick_ms = "50") {
  const std::string log = dir / "daemon.log";
  // The agent registers over plain TCP: a single-user setup.
  return Child{Spawn({GPUSCHED_DAEMON_BINARY, "serve", "--config", EmptySettings(dir), "--listen", "127.0.0.1:0",
                      "--allow-unauthenticated-tcp", "--init", "--state-dir", dir / "state", "--tick-ms", tick_ms},
                     env, log, log),
               log};
}

}  // namespace

TEST_CASE("gpuschedd serve: READY=1 once listening, WATCHDOG=1 from the scheduler loop, STOPPING=1 at SIGTERM") {
  TempDir dir;
  NotifySocket systemd;
  // 400 ms watchdog: the daemon pings every 200 ms; its tick is 50 ms.
  Child daemon = StartDaemon(dir, {{"NOTIFY_SOCKET", systemd.path()}, {"WATCHDOG_USEC", "400000"}});
  INFO(ReadFile(daemon.log));
  REQUIRE(systemd.WaitForLine("READY=1", absl::Seconds(30)));
  const std::string status = systemd.Last("STATUS");
  CHECK_THAT(status, Catch::StartsWith("serving on 127.0.0.1:"));
  CHECK_THAT(status, Catch::Contains(dir / "state"));

  // Pings keep coming at about the interval, not once.
  const absl::Time start = absl::Now();
  for (int i = 0; i < 3; ++i) {
    INFO(systemd.Received());
    REQUIRE(systemd.WaitForLine("WATCHDOG=1", absl::Seconds(5)));
  }
  CHECK(absl::Now() - start < absl::Seconds(3));

  // The agent, against this daemon: ready at once, then says it registered.
  const std::string address = status.substr(std::string("serving on ").size(), status.find(',') - 11);
  NotifySocket agent_systemd;
  const std::string agent_log = dir / "agent.log";
  Child agent{Spawn({GPUSCHED_AGENT_BINARY, "--config", EmptySettings(dir), "--daemon", address, "--node-name",
                     "notify-node", "--fake-gpus", "1", "--log-dir", dir / "logs"},
                    {{"NOTIFY_SOCKET", agent_systemd.path()}, {"WATCHDOG_USEC", "400000"}}, agent_log, agent_log),
              agent_log};
  INFO(ReadFile(agent_log));
  REQUIRE(agent_systemd.WaitForLine("READY=1", absl::Seconds(30)));
  REQUIRE(agent_systemd.WaitForLine("STATUS=registered with " + address, absl::Seconds(30)));
  REQUIRE(agent_systemd.WaitForLine("WATCHDOG=1", absl::Seconds(5)));
  CHECK(agent.Stop(SIGTERM) == 0);
  CHECK(agent_systemd.WaitForLine("STOPPING=1", absl::Seconds(1)));

  CHECK(daemon.Stop(SIGTERM) == 0);
  CHECK(systemd.WaitForLine("STOPPING=1", absl::Seconds(1)));
}

TEST_CASE("gpuschedd serve: no watchdog pings unless WATCHDOG_USEC asks for them") {
  TempDir dir;
  NotifySocket systemd;
  Child daemon = StartDaemon(dir, {{"NOTIFY_SOCKET", systemd.path()}});
  INFO(ReadFile(daemon.log));
  REQUIRE(systemd.WaitForLine("READY=1", absl::Seconds(30)));
  CHECK_FALSE(systemd.WaitForLine("WATCHDOG=1", absl::Seconds(1)));
  CHECK(daemon.Stop(SIGTERM) == 0);
}

TEST_CASE("gpuschedd serve: a tick longer than half the watchdog is refused at start, not killed later") {
  TempDir dir;
  NotifySocket systemd;
  // 100 ms watchdog: pings every 50 ms, but the loop wakes only every 200 ms.
  Child daemon = StartDaemon(dir, {{"NOTIFY_SOCKET", systemd.path()}, {"WATCHDOG_USEC", "100000"}}, "200");
  CHECK(WaitForExit(daemon.pid) == 1);
  daemon.pid = -1;
  CHECK_THAT(ReadFile(daemon.log), Catch::Contains("tick_ms 200 is longer than half of systemd's WatchdogSec (50 ms)"));
  CHECK_FALSE(systemd.WaitForLine("READY=1", absl::Milliseconds(200)));
}
