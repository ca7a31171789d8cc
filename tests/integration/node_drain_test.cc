// An operator drains a node through the CLI: new jobs go elsewhere, running
// ones finish, the drain survives a daemon crash, and resume undoes it.
#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>

#include "tests/integration/test_cluster.h"

using gpusched::testing::TestCluster;
namespace v1 = gpusched::v1;

TEST_CASE("gpusched nodes drain/resume: new jobs avoid a drained node until it is resumed", "[integration]") {
  TestCluster cluster({{"node-a", 4}, {"node-b", 4}});
  uint64_t running = cluster.Submit({"--gpus", "4", "--", "/bin/sleep", "300"});
  const std::string busy = cluster.WaitForState(running, v1::JOB_STATE_RUNNING).allocation().nodes(0).node();
  const std::string other = busy == "node-a" ? "node-b" : "node-a";

  auto drain = cluster.Cli({"nodes", "drain", other, "--reason", "bad NVLink"});
  REQUIRE(drain.exit_code == 0);
  CHECK(drain.out.find("node " + other + " drained: bad NVLink") == 0);
  auto table = cluster.Cli({"nodes"});
  CHECK_THAT(table.out, Catch::Contains(other + "  UP+DRAINED"));
  CHECK_THAT(table.out, Catch::Contains("drained: bad NVLink"));

  // Nowhere to go: one node busy, the other drained.
  uint64_t waiting = cluster.Submit({"--gpus", "2", "--", "/bin/true"});
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  CHECK(cluster.GetJob(waiting).state() == v1::JOB_STATE_PENDING);

  // An operator's drain outlives a daemon crash.
  cluster.CrashDaemon();
  cluster.StartDaemon();
  cluster.WaitForNodesUp(2);
  CHECK_THAT(cluster.Cli({"nodes", "show", other}).out, Catch::Contains("UP+DRAINED (drained: bad NVLink)"));
  CHECK(cluster.GetJob(waiting).state() == v1::JOB_STATE_PENDING);
  CHECK(cluster.GetJob(running).state() == v1::JOB_STATE_RUNNING);

  auto resume = cluster.Cli({"nodes", "resume", other});
  REQUIRE(resume.exit_code == 0);
  v1::Job placed = cluster.WaitForEnd(waiting);
  CHECK(placed.state() == v1::JOB_STATE_COMPLETED);
  CHECK(placed.allocation().nodes(0).node() == other);

  auto unknown = cluster.Cli({"nodes", "drain", "node-z", "--reason", "x"});
  CHECK(unknown.exit_code == 1);
  CHECK_THAT(unknown.err, Catch::Contains("no node node-z"));
  cluster.Cli({"cancel", std::to_string(running)});
}
