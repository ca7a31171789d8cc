// The Unix socket: the daemon takes the caller's uid from the kernel, and
// users act only on their own jobs. Needs root, to run the CLI as `nobody`.

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tests/integration/socket_cli.h"
#include "tests/integration/test_cluster.h"
#include "tests/skip.h"

using namespace gpusched;
using gpusched::testing::CommandResult;
using gpusched::testing::SocketCli;
using gpusched::testing::SocketDir;
using gpusched::testing::SubmittedJobId;
using gpusched::testing::TestCluster;

namespace {

constexpr const char* kNobody = "65534";

}  // namespace

TEST_CASE("on the Unix socket users act only on their own jobs, which run with their uid; root on all",
          "[integration]") {
  if (geteuid() != 0) {
    GPUSCHED_SKIP("not root: cannot run the CLI as another user");
  }
  const SocketDir socket_dir;
  const std::string socket = socket_dir.socket();
  {
    TestCluster cluster({{"node-a", 4}}, {"--socket", socket});
    // Users reach the logs where the agent writes them (a shared log dir).
    REQUIRE(chmod(cluster.dir().c_str(), 0755) == 0);
    struct stat st {};
    REQUIRE(stat(socket.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0666);

    const uint64_t roots = SubmittedJobId(SocketCli(socket, "0", {"submit", "--gpus", "1", "--", "sleep", "300"}));
    CHECK(cluster.GetJob(roots).spec().user() == "root");
    const uint64_t nobodys = SubmittedJobId(SocketCli(
        socket, kNobody,
        {"submit", "--gpus", "1", "--workdir", "/tmp", "--", "/bin/sh", "-c", "echo uid=$(id -u); sleep 300"}));
    CHECK(cluster.GetJob(nobodys).spec().user() == "nobody");
    cluster.WaitForState(nobodys, v1::JOB_STATE_RUNNING);

    CommandResult denied = SocketCli(socket, kNobody, {"cancel", std::to_string(roots)});
    CHECK(denied.exit_code == 1);
    CHECK(denied.err == absl::StrCat("gpusched: job ", roots,
                                     " belongs to root, not nobody: only its owner or an admin may cancel it\n"));
    CHECK(SocketCli(socket, kNobody, {"hold", std::to_string(roots)}).exit_code == 1);
    CommandResult drain = SocketCli(socket, kNobody, {"nodes", "drain", "node-a", "--reason", "mine now"});
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
    CommandResult their_logs = SocketCli(socket, kNobody, {"logs", std::to_string(roots)});
    CHECK(their_logs.exit_code != 0);
    INFO(their_logs.err);
    CHECK(absl::StrContains(their_logs.err, "ermission denied"));
    CommandResult own_logs = SocketCli(socket, kNobody, {"logs", std::to_string(nobodys)});
    INFO(own_logs.err);
    CHECK(own_logs.exit_code == 0);

    CHECK(SocketCli(socket, kNobody, {"cancel", std::to_string(nobodys)}).exit_code == 0);  // its own
    CHECK(SocketCli(socket, "0", {"cancel", std::to_string(roots)}).exit_code == 0);        // root may
    CHECK(cluster.WaitForEnd(nobodys).state() == v1::JOB_STATE_CANCELLED);
    CHECK(cluster.WaitForEnd(roots).state() == v1::JOB_STATE_CANCELLED);
  }
  // The daemon removes its socket when it stops.
  struct stat gone {};
  CHECK(stat(socket.c_str(), &gone) != 0);
}

TEST_CASE("a request id is its user's own: another user sending the same one gets a job of their own",
          "[integration]") {
  if (geteuid() != 0) {
    GPUSCHED_SKIP("not root: cannot run the CLI as another user");
  }
  const SocketDir socket_dir;
  const std::string socket = socket_dir.socket();
  TestCluster cluster({{"node-a", 4}}, {"--socket", socket});
  auto submit = [&](const char* uid) {
    return SubmittedJobId(
        SocketCli(socket, uid,
                  {"submit", "--hold", "--request-id", "train-1", "--gpus", "1", "--workdir", "/tmp", "--", "true"}));
  };
  const uint64_t roots = submit("0");
  const uint64_t nobodys = submit(kNobody);
  CHECK(nobodys != roots);
  CHECK(cluster.GetJob(nobodys).spec().user() == "nobody");
  CHECK(cluster.GetJob(roots).spec().user() == "root");
  // Each user's retry finds their own job, not a second one.
  CHECK(submit(kNobody) == nobodys);
  CHECK(submit("0") == roots);
  CommandResult all = cluster.Cli({"status", "--all", "--json"});
  CHECK(absl::StrContains(all.out, absl::StrCat("\"id\":\"", nobodys, "\"")));
  CHECK_FALSE(absl::StrContains(all.out, absl::StrCat("\"id\":\"", nobodys + 1, "\"")));
}
