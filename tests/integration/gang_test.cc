// Multi-node gangs across two real agents.

#include <signal.h>

#include <catch2/catch.hpp>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "tests/integration/test_cluster.h"

using namespace gpusched;
using gpusched::testing::TestCluster;

namespace {

std::map<std::string, std::string> ParseVars(const std::string& line) {
  std::map<std::string, std::string> vars;
  std::regex kv(R"((\w+)=(\S*))");
  for (auto it = std::sregex_iterator(line.begin(), line.end(), kv); it != std::sregex_iterator(); ++it) {
    vars[(*it)[1]] = (*it)[2];
  }
  return vars;
}

}  // namespace

TEST_CASE("a 2-node x 2-GPU gang starts on both agents with distinct RANKs and one MASTER_ADDR", "[integration]") {
  TestCluster cluster;
  uint64_t id = cluster.Submit({"--nodes", "2", "--gpus-per-node", "2", "--", "/bin/sh", "-c",
                                "echo RANK=$RANK WORLD_SIZE=$WORLD_SIZE LOCAL_RANK=$LOCAL_RANK "
                                "LOCAL_WORLD_SIZE=$LOCAL_WORLD_SIZE NODE_RANK=$NODE_RANK NNODES=$NNODES "
                                "MASTER=$MASTER_ADDR:$MASTER_PORT CVD=$CUDA_VISIBLE_DEVICES NODE=$GPUSCHED_NODE"});
  v1::Job job = cluster.WaitForEnd(id);
  REQUIRE(job.state() == v1::JOB_STATE_COMPLETED);
  REQUIRE(job.allocation().nodes_size() == 2);
  CHECK(job.allocation().nodes(0).node() != job.allocation().nodes(1).node());

  std::set<std::string> ranks, masters, nodes;
  for (int rank = 0; rank < 4; ++rank) {
    auto logs = cluster.Cli({"logs", std::to_string(id), "--rank", std::to_string(rank)});
    INFO("rank " << rank << ": " << logs.out << logs.err);
    REQUIRE(logs.exit_code == 0);
    auto vars = ParseVars(logs.out);
    CHECK(vars["RANK"] == std::to_string(rank));
    CHECK(vars["WORLD_SIZE"] == "4");
    CHECK(vars["LOCAL_WORLD_SIZE"] == "2");
    CHECK(vars["NNODES"] == "2");
    CHECK(vars["CVD"].size() == 3);  // two GPU indices, "i,j"
    ranks.insert(vars["RANK"]);
    masters.insert(vars["MASTER"]);
    nodes.insert(vars["NODE"]);
  }
  CHECK(ranks.size() == 4);
  CHECK(masters.size() == 1);
  CHECK(nodes.size() == 2);
  CHECK(*masters.begin() == job.allocation().master_addr() + ":" + std::to_string(job.allocation().master_port()));
}

TEST_CASE("a gang waits whole: no part of it starts while one node is busy", "[integration]") {
  TestCluster cluster;
  uint64_t blocker = cluster.Submit({"--gpus", "4", "--", "/bin/sleep", "300"});
  cluster.WaitForState(blocker, v1::JOB_STATE_RUNNING);
  uint64_t gang = cluster.Submit({"--nodes", "2", "--gpus-per-node", "2", "--", "/bin/true"});
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  v1::Job waiting = cluster.GetJob(gang);
  CHECK(waiting.state() == v1::JOB_STATE_PENDING);
  CHECK_THAT(waiting.reason(), Catch::StartsWith("waiting for 2 nodes with 2 free GPUs each (1 has them now)"));
  auto status = cluster.Cli({"status"});
  CHECK(status.out.find("waiting for 2 nodes") != std::string::npos);

  v1::ListNodesResponse nodes;
  grpc::ClientContext ctx;
  REQUIRE(cluster.stub().ListNodes(&ctx, {}, &nodes).ok());
  int64_t free = 0;
  for (const auto& node : nodes.nodes()) free += node.gpus_free();
  CHECK(free == 4);  // the idle node holds nothing for the half-placed gang

  REQUIRE(cluster.Cli({"cancel", std::to_string(blocker)}).exit_code == 0);
  CHECK(cluster.WaitForEnd(gang).state() == v1::JOB_STATE_COMPLETED);
}

TEST_CASE("a dead host's gang is stopped on the other nodes and ends NODE_FAIL", "[integration]") {
  TestCluster cluster;
  const std::string pids = cluster.dir() + "/pids";
  uint64_t id = cluster.Submit({"--nodes", "2", "--gpus-per-node", "1", "--requeue", "no", "--", "/bin/sh", "-c",
                                "echo $$ $GPUSCHED_NODE >> " + pids + "; exec sleep 300"});
  v1::Job running = cluster.WaitForState(id, v1::JOB_STATE_RUNNING);
  std::map<std::string, int> pid_of;
  for (int i = 0; i < 100 && pid_of.size() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::istringstream in(gpusched::testing::ReadFile(pids));
    int pid;
    std::string node;
    while (in >> pid >> node) pid_of[node] = pid;
  }
  REQUIRE(pid_of.size() == 2);

  cluster.KillAgent("node-b");
  v1::Job job = cluster.WaitForEnd(id, 30);
  CHECK(job.state() == v1::JOB_STATE_NODE_FAIL);
  CHECK(job.reason().find("node node-b is down") == 0);
  CHECK(gpusched::testing::ProcessGone(pid_of["node-a"]));  // no half-gang left on node-a
  auto nodes = cluster.Cli({"nodes"});
  CHECK(nodes.out.find("DOWN") != std::string::npos);
  CHECK(nodes.out.find("silent for") != std::string::npos);
  kill(pid_of["node-b"], SIGKILL);  // the dead host's orphan, which only a live agent could reap
}

TEST_CASE("a dead host's gang is requeued by default and runs again when a second node is back", "[integration]") {
  TestCluster cluster;
  const std::string pids = cluster.dir() + "/pids";
  uint64_t id = cluster.Submit({"--nodes", "2", "--gpus-per-node", "1", "--", "/bin/sh", "-c",
                                "echo $$ >> " + pids + "; echo restart $GPUSCHED_RESTART_COUNT; exec sleep 300"});
  cluster.WaitForState(id, v1::JOB_STATE_RUNNING);
  cluster.KillAgent("node-b");
  // Back in the queue as its second attempt, waiting for a second node.
  v1::Job waiting = cluster.WaitForState(id, v1::JOB_STATE_PENDING, 30);
  CHECK(waiting.attempt() == 1);
  CHECK(waiting.allocation().nodes_size() == 0);
  bool node_fail_event = false;
  const v1::Job with_events = cluster.GetJob(id);
  for (const v1::JobEvent& e : with_events.events()) {
    if (e.state() != v1::JOB_STATE_NODE_FAIL) continue;
    node_fail_event = true;
    CHECK_THAT(e.reason(), Catch::Contains("node node-b is down"));
  }
  CHECK(node_fail_event);

  cluster.AddAgent({"node-c", 2});
  v1::Job again = cluster.WaitForState(id, v1::JOB_STATE_RUNNING, 30);
  CHECK(again.attempt() == 1);
  CHECK_THAT(cluster.Cli({"logs", std::to_string(id), "--rank", "0"}).out, Catch::Contains("restart 1"));
  cluster.Cli({"cancel", std::to_string(id)});
  cluster.WaitForEnd(id);
  // The dead host's orphan, which only a live agent could reap.
  std::istringstream in(gpusched::testing::ReadFile(pids));
  for (int pid; in >> pid;) kill(pid, SIGKILL);
}
