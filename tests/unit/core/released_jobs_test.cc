// Trial releases for backfill and preemption: whatever sets of jobs a search
// releases, and in whatever order, the jobs marked are exactly the ones let
// go, and the cluster is as before once the search is over.

#include "daemon/core/released_jobs.h"

#include <catch2/catch.hpp>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "tests/unit/core/test_cluster.h"

namespace gpusched::core {
namespace {

using testing::MakeNode;

// What a node holds, as placement sees it.
using Holdings = std::map<std::string, std::tuple<uint64_t, int64_t, int64_t, std::vector<uint64_t>, int>>;

Holdings HoldingsOf(const ClusterState& cluster) {
  Holdings h;
  for (const auto& [name, slot] : cluster.nodes()) {
    int share_milli = 0;
    for (const GpuShares& shares : slot.gpu_shares) share_milli += shares.milli_used;
    h[name] = {slot.free_mask, slot.cpus_used, slot.mem_used_mb, slot.gpu_owner, share_milli};
  }
  return h;
}

v1::Allocation On(const std::string& node, std::vector<int32_t> gpus, int64_t cpus, int share_milli = 0) {
  v1::Allocation allocation;
  v1::NodeAllocation* part = allocation.add_nodes();
  part->set_node(node);
  for (int32_t g : gpus) part->add_gpu_indices(g);
  part->set_cpus(cpus);
  part->set_mem_mb(1024 * cpus);
  part->set_gpu_share_milli(share_milli);
  return allocation;
}

TEST_CASE("released jobs: the marked ones are let go, and the cluster is as before afterwards") {
  ClusterState cluster;
  v1::NodeInfo shared = MakeNode("s1", 4);
  for (v1::GpuInfo& gpu : *shared.mutable_gpus()) gpu.set_share_mode(v1::GPU_SHARE_MODE_TIMESLICE);
  cluster.UpsertNode(MakeNode("n1", 8));
  cluster.UpsertNode(MakeNode("n2", 8));
  cluster.UpsertNode(shared);
  // Whole GPUs over two nodes, a CPU-only job, and shares of one GPU.
  const std::vector<v1::Allocation> allocations = {
      On("n1", {0, 1, 2, 3}, 8), On("n1", {4}, 2),      On("n2", {0, 1, 2, 3, 4, 5, 6, 7}, 16),
      On("n1", {}, 4),           On("s1", {0}, 1, 300), On("s1", {0}, 1, 450),
      On("s1", {1}, 1, 500)};
  std::vector<ReleasedJobs::Job> jobs;
  for (size_t i = 0; i < allocations.size(); ++i) {
    REQUIRE(cluster.Allocate(100 + i, allocations[i]).ok());
    jobs.push_back({100 + i, &allocations[i]});
  }
  const Holdings before = HoldingsOf(cluster);
  {
    ReleasedJobs released(cluster, jobs);
    std::mt19937_64 rng(7);
    for (int round = 0; round < 200; ++round) {
      std::vector<bool> marked(jobs.size());
      for (size_t i = 0; i < jobs.size(); ++i) marked[i] = rng() % 2 == 0;
      if (round % 3 == 0) {
        const size_t count = rng() % (jobs.size() + 1);
        for (size_t i = 0; i < jobs.size(); ++i) marked[i] = i < count;
        released.SetFirst(count);
      } else {
        released.Set(marked);
      }
      for (size_t i = 0; i < jobs.size(); ++i) {
        if (!marked[i]) continue;
        CHECK_FALSE(cluster.Find(jobs[i].allocation->nodes(0).node())->jobs.contains(jobs[i].id));
      }
      // The same as a cluster that never held the marked jobs.
      ClusterState reference;
      reference.UpsertNode(MakeNode("n1", 8));
      reference.UpsertNode(MakeNode("n2", 8));
      reference.UpsertNode(shared);
      for (size_t i = 0; i < jobs.size(); ++i) {
        if (!marked[i]) REQUIRE(reference.Allocate(jobs[i].id, allocations[i]).ok());
      }
      REQUIRE(HoldingsOf(released.cluster()) == HoldingsOf(reference));
    }
  }
  CHECK(HoldingsOf(cluster) == before);
}

TEST_CASE("a copy of the cluster finds its own nodes by name, not the original's") {
  ClusterState cluster;
  cluster.UpsertNode(MakeNode("n1", 8));
  cluster.UpsertNode(MakeNode("n2", 8));
  ClusterState copy = cluster;
  CHECK(copy.Find("n1") == &copy.nodes().at("n1"));
  REQUIRE(copy.Allocate(1, On("n2", {0, 1}, 2)).ok());
  CHECK(copy.Find("n2")->FreeGpus() == 6);
  CHECK(cluster.Find("n2")->FreeGpus() == 8);
  ClusterState assigned;
  assigned = copy;
  CHECK(assigned.Find("n2") == &assigned.nodes().at("n2"));
  CHECK(assigned.Find("n2")->FreeGpus() == 6);
  CHECK(assigned.Find("n3") == nullptr);
}

}  // namespace
}  // namespace gpusched::core
