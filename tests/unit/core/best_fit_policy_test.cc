#include <catch2/catch.hpp>

#include "daemon/core/ever_fits.h"
#include "daemon/core/policy/placement_policy.h"
#include "tests/unit/core/test_cluster.h"

using namespace gpusched;
using core::testing::MakeNode;

namespace {

core::ClusterState Cluster(std::initializer_list<std::pair<const char*, int>> nodes) {
  core::ClusterState cluster;
  for (auto [name, gpus] : nodes) {
    cluster.UpsertNode(MakeNode(name, gpus));
    cluster.SetState(name, v1::NODE_STATE_UP, "");
  }
  return cluster;
}

core::GangRequest Gpus(int64_t total, int64_t nodes = 0, int64_t per_node = 0) {
  core::GangRequest r;
  r.total_gpus = nodes > 0 ? nodes * per_node : total;
  r.nodes = nodes;
  r.gpus_per_node = per_node;
  return r;
}

std::unique_ptr<core::PlacementPolicy> Policy(const char* name) { return *core::MakePlacementPolicy(name); }

// Holds `gpus` GPUs of `node` for a job, as if it were running there.
void Occupy(core::ClusterState& cluster, const char* node, int gpus, uint64_t job) {
  v1::Allocation a;
  v1::NodeAllocation* part = a.add_nodes();
  part->set_node(node);
  auto free = cluster.Find(node)->FreeGpuIndices();
  for (int i = 0; i < gpus; ++i) part->add_gpu_indices(free[i]);
  REQUIRE(cluster.Allocate(job, a).ok());
}

}  // namespace

TEST_CASE("a gang that fits one node goes to the fullest node that can take it") {
  auto cluster = Cluster({{"a", 8}, {"b", 8}, {"c", 4}});
  Occupy(cluster, "b", 5, 99);  // b has 3 free: best fit for 2
  auto result = Policy("best-fit")->Place(cluster, Gpus(2));
  REQUIRE(result.placed());
  REQUIRE(result.allocation().nodes_size() == 1);
  CHECK(result.allocation().nodes(0).node() == "b");
  CHECK(result.allocation().nodes(0).gpu_indices_size() == 2);
  CHECK(result.allocation().nodes(0).gpu_indices(0) == 5);  // the free ones, not 0
}

TEST_CASE("nodes x gpus_per_node takes exactly that shape, ranks in order") {
  auto cluster = Cluster({{"a", 8}, {"b", 8}, {"c", 8}});
  Occupy(cluster, "a", 6, 99);  // only 2 free on a
  auto result = Policy("best-fit")->Place(cluster, Gpus(0, 2, 4));
  REQUIRE(result.placed());
  REQUIRE(result.allocation().nodes_size() == 2);
  for (int i = 0; i < 2; ++i) {
    CHECK(result.allocation().nodes(i).node() != "a");
    CHECK(result.allocation().nodes(i).gpu_indices_size() == 4);
    CHECK(result.allocation().nodes(i).node_rank() == i);
  }
}

TEST_CASE("a gang bigger than any node spans the fewest nodes") {
  auto cluster = Cluster({{"a", 8}, {"b", 8}, {"c", 8}});
  Occupy(cluster, "c", 4, 99);
  auto result = Policy("best-fit")->Place(cluster, Gpus(12));
  REQUIRE(result.placed());
  REQUIRE(result.allocation().nodes_size() == 2);
  int total = 0;
  for (const auto& part : result.allocation().nodes()) total += part.gpu_indices_size();
  CHECK(total == 12);
}

TEST_CASE("a gang is all or nothing: too few free GPUs places nothing and says why") {
  auto cluster = Cluster({{"a", 8}, {"b", 8}});
  Occupy(cluster, "a", 6, 98);
  Occupy(cluster, "b", 6, 99);
  auto result = Policy("best-fit")->Place(cluster, Gpus(0, 2, 4));
  REQUIRE_FALSE(result.placed());
  CHECK(result.reason() == "waiting for 2 nodes with 4 free GPUs each (0 have them now)");
  auto any = Policy("best-fit")->Place(cluster, Gpus(6));
  REQUIRE_FALSE(any.placed());
  CHECK(any.reason() == "waiting for 6 free GPUs (4 free on 2 up nodes)");
}

TEST_CASE("down nodes take nothing") {
  auto cluster = Cluster({{"a", 8}});
  cluster.SetState("a", v1::NODE_STATE_NOT_RESPONDING, "agent disconnected");
  auto result = Policy("best-fit")->Place(cluster, Gpus(1));
  REQUIRE_FALSE(result.placed());
  CHECK(result.reason() == "waiting for a node: no node is up");
}

TEST_CASE("CPU and memory per GPU count against the node") {
  core::ClusterState cluster;
  cluster.UpsertNode(MakeNode("small", 8, /*cpus=*/16, /*mem_mb=*/64000));
  cluster.SetState("small", v1::NODE_STATE_UP, "");
  core::GangRequest r = Gpus(4);
  r.cpus_per_gpu = 8;  // 32 CPUs > 16
  CHECK_FALSE(Policy("best-fit")->Place(cluster, r).placed());
  CHECK(core::CheckEverFits(cluster, r).code() == absl::StatusCode::kInvalidArgument);
  r.cpus_per_gpu = 4;
  auto placed = Policy("best-fit")->Place(cluster, r);
  REQUIRE(placed.placed());
  CHECK(placed.allocation().nodes(0).cpus() == 16);
}

TEST_CASE("CPU-only jobs get a node and no GPU") {
  auto cluster = Cluster({{"a", 8}});
  core::GangRequest r;
  r.cpus = 4;
  auto result = Policy("best-fit")->Place(cluster, r);
  REQUIRE(result.placed());
  CHECK(result.allocation().nodes(0).gpu_indices_size() == 0);
  CHECK(result.allocation().nodes(0).cpus() == 4);
}

TEST_CASE("never-schedulable gangs are told apart from busy clusters") {
  auto cluster = Cluster({{"a", 8}, {"b", 8}});
  Occupy(cluster, "a", 8, 99);  // busy, but that is no reason to refuse
  CHECK(core::CheckEverFits(cluster, Gpus(16)).ok());
  CHECK(core::CheckEverFits(cluster, Gpus(0, 2, 8)).ok());

  absl::Status too_wide = core::CheckEverFits(cluster, Gpus(0, 1, 16));
  CHECK(too_wide.code() == absl::StatusCode::kInvalidArgument);
  CHECK(too_wide.message() == "resources.gpus_per_node: 16 GPUs per node, but the largest node has 8");
  CHECK(core::CheckEverFits(cluster, Gpus(0, 3, 8)).code() == absl::StatusCode::kInvalidArgument);
  CHECK(core::CheckEverFits(cluster, Gpus(1000)).code() == absl::StatusCode::kInvalidArgument);
  CHECK(core::CheckEverFits(core::ClusterState{}, Gpus(1000)).ok());  // nothing known yet: wait
}
