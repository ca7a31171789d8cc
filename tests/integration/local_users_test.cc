// The Unix socket: the daemon takes the caller's uid from the kernel, and
// users act only on their own jobs. Needs root, to run the CLI as `nobody`.

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tests/integration/test_cluster.h"

using namespace gpusched;
using gpusched::testing::CommandResult;
using gpusched::testing::RunCommand;
using gpusched::testing::TestCluster;

namespace {

constexpr const char* kNobody = "65534";

// A directory anyone may enter, for a socket `nobody` must reach.
std::string OpenSocketDir() {
  char pattern[] = "/tmp/gpusched-sock-XXXXXX";
  REQUIRE(mkdtemp(pattern) != nullptr);
  REQUIRE(chmod(pattern, 0755) == 0);
  return pattern;
}

// The CLI on the socket, as root or (with `as_nobody`) as uid 65534.
CommandResult Cli(const std::string& socket, std::vector<std::string> args, bool as_nobody) {
  std::vector<std::string> argv;
  if (as_nobody) argv = {"/usr/bin/setpriv", std::string("--reuid=") + kNobody, std::string("--regid=") + kNobody, "--clear-groups"};
  argv.push_back(GPUSCHED_CLI_BIN);
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv, {{"GPUSCHED_ADDR", "unix:" + socket}, {"HOME", "/tmp"}});
}

uint64_t Submitted(const CommandResult& r) {
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  REQUIRE(absl::StartsWith(r.out, "Submitted job "));
  return std::stoull(r.out.substr(std::string("Submitted job ").size()));
}

}  // namespace

TEST_CASE("on the Unix socket users act only on their own jobs, which run with their uid; root on all",
          "[integration]") {
  if (geteuid() != 0) {
    WARN("not root: cannot run the CLI as another user; skipped");
    return;
  }
  const std::string dir = OpenSocketDir();
  const std::string socket = dir + "/gpuschedd.sock";
  {
    TestCluster cluster({{"node-a", 4}}, {"--socket", socket});
    // Users reach the logs where the agent writes them (a shared log dir).
    REQUIRE(chmod(cluster.dir().c_str(), 0755) == 0);
    struct stat st {};
    REQUIRE(stat(socket.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0666);

    const uint64_t roots = Submitted(Cli(socket, {"submit", "--gpus", "1", "--", "sleep", "300"}, false));
    CHECK(cluster.GetJob(roots).spec().user() == "root");
    const uint64_t nobodys = Submitted(Cli(
        socket, {"submit", "--gpus", "1", "--workdir", "/tmp", "--", "/bin/sh", "-c", "echo uid=$(id -u); sleep 300"},
        true));
    CHECK(cluster.GetJob(nobodys).spec().user() == "nobody");
    cluster.WaitForState(nobodys, v1::JOB_STATE_RUNNING);

    CommandResult denied = Cli(socket, {"cancel", std::to_string(roots)}, true);
    CHECK(denied.exit_code == 1);
    CHECK(denied.err == absl::StrCat("gpusched: job ", roots,
                                     " belongs to root, not nobody: only its owner or an admin may cancel it\n"));
    CHECK(Cli(socket, {"hold", std::to_string(roots)}, true).exit_code == 1);
    CommandResult drain = Cli(socket, {"nodes", "drain", "node-a", "--reason", "mine now"}, true);
    CHECK(drain.exit_code == 1);
    CHECK(absl::StrContains(drain.err, "only an admin may drain a node"));
    CHECK(cluster.GetJob(roots).state() != v1::JOB_STATE_CANCELLED);

    // Its processes run as the user the kernel named, not as the daemon.
    for (int i = 0; i < 100; ++i) {
      if (absl::StrContains(cluster.Cli({"logs", std::to_string(nobodys)}).out, "uid=")) break;
      usleep(50'000);
    }
    CHECK(absl::StrContains(cluster.Cli({"logs", std::to_string(nobodys)}).out, std::string("uid=") + kNobody));
    // Rank logs are the owner's files: another user cannot read them.
    CommandResult their_logs = Cli(socket, {"logs", std::to_string(roots)}, true);
    CHECK(their_logs.exit_code != 0);
    INFO(their_logs.err);
    CHECK(absl::StrContains(their_logs.err, "ermission denied"));
    CommandResult own_logs = Cli(socket, {"logs", std::to_string(nobodys)}, true);
    INFO(own_logs.err);
    CHECK(own_logs.exit_code == 0);

    CHECK(Cli(socket, {"cancel", std::to_string(nobodys)}, true).exit_code == 0);  // its own
    CHECK(Cli(socket, {"cancel", std::to_string(roots)}, false).exit_code == 0);   // root may
    CHECK(cluster.WaitForEnd(nobodys).state() == v1::JOB_STATE_CANCELLED);
    CHECK(cluster.WaitForEnd(roots).state() == v1::JOB_STATE_CANCELLED);
  }
  // The daemon removes its socket when it stops.
  struct stat gone {};
  CHECK(stat(socket.c_str(), &gone) != 0);
  rmdir(dir.c_str());
}
