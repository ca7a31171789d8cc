// Topology-aware placement through the real daemon, agents and CLI: GPUs
// chosen by NVLink, ranks handed them in ring order, gangs kept under one
// leaf switch of the operator's network file, strict jobs waiting.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <set>
#include <string>
#include <thread>

#include "tests/integration/test_cluster.h"

using gpusched::testing::AgentSpec;
using gpusched::testing::CommandResult;
using gpusched::testing::TestCluster;
namespace v1 = gpusched::v1;

namespace {

std::string Fixture(const std::string& name) { return std::string(GPUSCHED_FIXTURES_DIR) + "/topo/" + name; }

AgentSpec Dgx1(const std::string& name) {
  return {
      name,
      0,
      {"--topology-file", Fixture("dgx1-v100.txt"), "--gpu-model", "Tesla V100-SXM2-32GB", "--gpu-memory-mb", "32768"},
      {}};
}

std::set<int> Gpus(const v1::NodeAllocation& part) { return {part.gpu_indices().begin(), part.gpu_indices().end()}; }

}  // namespace

TEST_CASE("a 4-GPU job on a DGX-1 gets a fully NVLinked quad; ranks see the ring order", "[integration]") {
  TestCluster cluster({Dgx1("dgx1-01")});
  uint64_t id =
      cluster.Submit({"--gpus", "4", "--launch", "per-node", "--", "/bin/sh", "-c", "echo CVD=$CUDA_VISIBLE_DEVICES"});
  v1::Job job = cluster.WaitForEnd(id);
  REQUIRE(job.state() == v1::JOB_STATE_COMPLETED);
  REQUIRE(job.allocation().nodes_size() == 1);
  const v1::NodeAllocation& part = job.allocation().nodes(0);
  // The two quads of the hybrid cube mesh are the only fully NVLinked 4-sets.
  std::set<int> gpus = Gpus(part);
  CHECK((gpus == std::set<int>{0, 1, 2, 3} || gpus == std::set<int>{4, 5, 6, 7}));
  CHECK(job.allocation().policy() == "topology");
  CHECK(job.allocation().span() == "node");
  CHECK(job.allocation().worst_link().rfind("NV", 0) == 0);
  CHECK(job.allocation().est_bus_bandwidth_gbps() > 20);

  std::string ring;
  for (int i = 0; i < part.gpu_indices_size(); ++i) ring += (i ? "," : "") + std::to_string(part.gpu_indices(i));
  CommandResult log = cluster.Cli({"logs", std::to_string(id)});
  CHECK_THAT(log.out, Catch::Contains("CVD=" + ring));

  CommandResult status = cluster.Cli({"status", std::to_string(id)});
  CHECK_THAT(status.out, Catch::Contains("Estimated:"));
  CHECK_THAT(status.out, Catch::Contains("spans node (topology policy)"));
}

TEST_CASE("a two-node gang stays under one leaf switch of the operator's network file", "[integration]") {
  std::string conf = "/tmp/gpusched-it-network-" + std::to_string(getpid()) + ".conf";
  std::ofstream(conf) << "# two leaves under one spine\n"
                         "SwitchName=leaf01 Nodes=n[1-2]\n"
                         "SwitchName=leaf02 Nodes=n[3-4]\n"
                         "SwitchName=spine01 Switches=leaf[01-02]\n";
  TestCluster cluster({{"n1", 4}, {"n2", 4}, {"n3", 4}, {"n4", 4}}, {"--network-topology", conf});
  std::remove(conf.c_str());

  // One GPU busy on n1: leaf01 can no longer give two whole nodes.
  uint64_t blocker = cluster.Submit({"--gpus", "1", "--", "/bin/sleep", "300"});
  v1::Job running = cluster.WaitForState(blocker, v1::JOB_STATE_RUNNING);
  const std::string busy = running.allocation().nodes(0).node();

  uint64_t gang = cluster.Submit({"--nodes", "2", "--gpus-per-node", "4", "--", "/bin/true"});
  v1::Job job = cluster.WaitForEnd(gang);
  REQUIRE(job.state() == v1::JOB_STATE_COMPLETED);
  REQUIRE(job.allocation().nodes_size() == 2);
  std::set<std::string> nodes = {job.allocation().nodes(0).node(), job.allocation().nodes(1).node()};
  const bool busy_on_leaf01 = busy == "n1" || busy == "n2";
  CHECK(nodes == (busy_on_leaf01 ? std::set<std::string>{"n3", "n4"} : std::set<std::string>{"n1", "n2"}));
  CHECK(job.allocation().span() == (busy_on_leaf01 ? "leaf leaf02" : "leaf leaf01"));
  CHECK(job.allocation().worst_link() == "NET");

  // The operator's file wins over labels and shows on the node.
  CommandResult show = cluster.Cli({"nodes", "show", "n3"});
  CHECK_THAT(show.out, Catch::Contains("leaf leaf02, spine spine01"));
  cluster.Cli({"cancel", std::to_string(blocker)});
}

TEST_CASE("a strict job waits for its ideal placement and says so; prefer takes what is free", "[integration]") {
  // The same GPUs twice: one box NVLinked (DGX-1), one wired over PCIe only.
  AgentSpec pcie{"pcie-01",
                 0,
                 {"--topology-file", Fixture("pcie-8x-rtx4090.txt"), "--gpu-model", "Tesla V100-SXM2-32GB",
                  "--gpu-memory-mb", "32768"},
                 {}};
  TestCluster cluster({Dgx1("dgx1-01"), pcie});
  // An 8-GPU ring is fastest on the NVLinked box, so it takes all of it.
  uint64_t big = cluster.Submit({"--gpus", "8", "--", "/bin/sleep", "300"});
  REQUIRE(cluster.WaitForState(big, v1::JOB_STATE_RUNNING).allocation().nodes(0).node() == "dgx1-01");

  uint64_t strict = cluster.Submit({"--gpus", "4", "--topology", "strict", "--", "/bin/true"});
  uint64_t prefer = cluster.Submit({"--gpus", "4", "--", "/bin/true"});
  // The strict job waits, and says for what; the one behind it may not pass
  // it (strict priority order), so cancel the big job to let both through.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  v1::Job waiting = cluster.GetJob(strict);
  CHECK(waiting.state() == v1::JOB_STATE_PENDING);
  CHECK_THAT(waiting.reason(), Catch::StartsWith("strict topology: waiting for 4 GPUs on one node at ~"));
  CHECK_THAT(waiting.reason(), Catch::Contains("(NV1)"));
  CHECK_THAT(waiting.reason(), Catch::Contains("the best free now is 4 GPUs on one node at ~"));
  CHECK_THAT(waiting.reason(), Catch::Contains("(SYS)"));

  cluster.Cli({"cancel", std::to_string(big)});
  v1::Job placed = cluster.WaitForEnd(strict);
  CHECK(placed.state() == v1::JOB_STATE_COMPLETED);
  CHECK(placed.allocation().nodes(0).node() == "dgx1-01");
  CHECK(cluster.WaitForEnd(prefer).state() == v1::JOB_STATE_COMPLETED);
}

TEST_CASE("a strict job with a wait bound takes the best free placement once the bound is over", "[integration]") {
  AgentSpec pcie{"pcie-01",
                 0,
                 {"--topology-file", Fixture("pcie-8x-rtx4090.txt"), "--gpu-model", "Tesla V100-SXM2-32GB",
                  "--gpu-memory-mb", "32768"},
                 {}};
  TestCluster cluster({Dgx1("dgx1-01"), pcie});
  uint64_t big = cluster.Submit({"--gpus", "8", "--", "/bin/sleep", "300"});
  cluster.WaitForState(big, v1::JOB_STATE_RUNNING);
  // Slurm notation: 0:02 is two seconds.
  uint64_t strict = cluster.Submit({"--gpus", "4", "--topology-wait", "0:02", "--", "/bin/true"});
  v1::Job job = cluster.WaitForEnd(strict);
  CHECK(job.state() == v1::JOB_STATE_COMPLETED);
  CHECK(job.allocation().nodes(0).node() == "pcie-01");
  CHECK(job.spec().topology() == v1::TOPOLOGY_MODE_STRICT);
  cluster.Cli({"cancel", std::to_string(big)});
}

TEST_CASE("--default-topology strict makes a job that does not choose wait like a strict one", "[integration]") {
  AgentSpec pcie{"pcie-01",
                 0,
                 {"--topology-file", Fixture("pcie-8x-rtx4090.txt"), "--gpu-model", "Tesla V100-SXM2-32GB",
                  "--gpu-memory-mb", "32768"},
                 {}};
  TestCluster cluster({Dgx1("dgx1-01"), pcie}, {"--default-topology", "strict"});
  uint64_t big = cluster.Submit({"--gpus", "8", "--", "/bin/sleep", "300"});
  REQUIRE(cluster.WaitForState(big, v1::JOB_STATE_RUNNING).allocation().nodes(0).node() == "dgx1-01");
  uint64_t unset = cluster.Submit({"--gpus", "4", "--", "/bin/true"});
  uint64_t any = cluster.Submit({"--gpus", "4", "--topology", "any", "--", "/bin/true"});
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  v1::Job waiting = cluster.GetJob(unset);
  CHECK(waiting.spec().topology() == v1::TOPOLOGY_MODE_STRICT);
  CHECK(waiting.state() == v1::JOB_STATE_PENDING);
  CHECK_THAT(waiting.reason(), Catch::StartsWith("strict topology: waiting for 4 GPUs on one node"));
  // Jobs that choose keep their choice (this one waits only for its turn).
  CHECK(cluster.GetJob(any).spec().topology() == v1::TOPOLOGY_MODE_ANY);
  cluster.Cli({"cancel", std::to_string(big)});
  CHECK(cluster.WaitForEnd(unset).allocation().nodes(0).node() == "dgx1-01");
  CHECK(cluster.WaitForEnd(any).state() == v1::JOB_STATE_COMPLETED);
}
