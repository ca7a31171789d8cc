#include "daemon/core/placement/gpu_chooser.h"

#include <catch2/catch.hpp>
#include <random>

#include "placement_test_util.h"
#include "random_node.h"

using namespace gpusched::core::placement;
using namespace gpusched::placement_testing;
using gpusched::topology::NodeTopology;

namespace {

void CheckSame(const std::shared_ptr<const GpuChoice>& cached, const std::optional<GpuChoice>& direct) {
  REQUIRE((cached != nullptr) == direct.has_value());
  if (!direct) return;
  CHECK(cached->gpus == direct->gpus);
  CHECK(cached->ring_bandwidth_gbps == direct->ring_bandwidth_gbps);
  CHECK(cached->worst_link == direct->worst_link);
  CHECK(cached->weakest_pair_gbps == direct->weakest_pair_gbps);
  CHECK(cached->nic_link == direct->nic_link);
  CHECK(cached->numa_domains_spanned == direct->numa_domains_spanned);
  CHECK(cached->exact == direct->exact);
}

}  // namespace

TEST_CASE("GpuChooser: one interned topology per kind of node") {
  GpuChooser chooser;
  std::vector<GpuChooser::TopologyId> ids;
  for (int node = 0; node < 30; ++node) {
    const TopoFixture& fixture = AllTopoFixtures()[node % 3];
    NodeTopology topo = LoadTopo(fixture);
    for (auto& gpu : topo.gpus()) gpu.uuid = "GPU-node" + std::to_string(node);
    ids.push_back(chooser.Intern(topo));
  }
  CHECK(chooser.num_topologies() == 3);
  CHECK(ids[0] == ids[3]);
  CHECK_FALSE(ids[0] == ids[1]);
  REQUIRE(chooser.graph(ids[1]) != nullptr);
  CHECK(chooser.graph(ids[1])->size() == 8);
  CHECK(chooser.graph(GpuChooser::TopologyId{}) == nullptr);
}

TEST_CASE("GpuChooser answers what ChooseGpus answers, from cache the second time") {
  for (const TopoFixture& fixture : AllTopoFixtures()) {
    INFO(fixture.file);
    NodeTopology topo = LoadTopo(fixture);
    const int n = topo.num_gpus();
    GpuChooser chooser;
    const GpuChooser::TopologyId id = chooser.Intern(topo);
    for (int round = 0; round < 2; ++round) {
      for (uint64_t free_mask = 0; free_mask < (uint64_t{1} << n); ++free_mask) {
        for (int k = 0; k <= n + 1; ++k) {
          CheckSame(chooser.Choose(id, free_mask, k), ChooseGpus(topo, free_mask, k));
        }
      }
    }
    // Every feasible (mask, k) once cold, once warm; infeasible ones are not
    // counted. Bits above the node's GPUs share the slot without them.
    CHECK(chooser.cache_misses() == chooser.cache_hits());
    const uint64_t before = chooser.cache_misses();
    CHECK(chooser.Choose(id, ~uint64_t{0}, n) != nullptr);
    CHECK(chooser.cache_misses() == before);
  }
}

TEST_CASE("GpuChooser: large nodes cache in a hash map; bad ids and infeasible asks get nullptr") {
  std::mt19937 rng(11);
  NodeTopology topo = RandomNode(rng, 24);
  GpuChooser chooser;
  const GpuChooser::TopologyId id = chooser.Intern(topo);
  for (int i = 0; i < 40; ++i) {
    const uint64_t free_mask = rng() & AllFree(24);
    const int k = 1 + static_cast<int>(rng() % 12);
    CheckSame(chooser.Choose(id, free_mask, k), ChooseGpus(topo, free_mask, k));
    CheckSame(chooser.Choose(topo, free_mask, k), ChooseGpus(topo, free_mask, k));
  }
  CHECK(chooser.num_topologies() == 1);
  CHECK(chooser.Choose(GpuChooser::TopologyId{7}, 1, 1) == nullptr);
  CHECK(chooser.Choose(GpuChooser::TopologyId{}, 1, 1) == nullptr);
  CHECK(chooser.Choose(id, 0b11, 3) == nullptr);
  CHECK(chooser.Choose(id, 0b11, 0) == nullptr);
}
