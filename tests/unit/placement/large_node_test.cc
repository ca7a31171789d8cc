// Nodes with more free GPUs than the exact search scores (up to 64): the
// greedy search must still return exactly k free GPUs and an honest ring.
#include <bit>
#include <catch2/catch.hpp>
#include <random>

#include "common/topology/link_bandwidth.h"
#include "daemon/core/placement/gpu_choice.h"
#include "daemon/core/placement/ring_search.h"
#include "placement_test_util.h"
#include "random_node.h"

using namespace gpusched::core::placement;
using namespace gpusched::placement_testing;
using gpusched::topology::EstimatedGpuPairBandwidthGBps;
using gpusched::topology::NodeTopology;

namespace {

// `islands` NVSwitch islands of 8 H200s, SYS between islands, one NUMA node
// per island.
NodeTopology NvSwitchIslands(int islands) {
  NodeTopology topo = UniformNode(8 * islands, kSys, "NVIDIA H200", /*gpus_per_numa_node=*/8);
  for (int a = 0; a < 8 * islands; ++a) {
    for (int b = a + 1; b < 8 * islands; ++b) {
      if (a / 8 == b / 8) SetPair(topo, a, b, Nv(18));
    }
  }
  return topo;
}

std::vector<int> Range(int from, int to) {
  std::vector<int> v;
  for (int i = from; i < to; ++i) v.push_back(i);
  return v;
}

double RingOf(const NodeTopology& topo, const std::vector<int>& order) {
  const size_t m = order.size();
  if (m < 2) return 0;
  double ring = 1e9;
  for (size_t i = 0; i < m; ++i) {
    const int a = order[i], b = order[(i + 1) % m];
    ring = std::min({ring, EstimatedGpuPairBandwidthGBps(topo, a, b), EstimatedGpuPairBandwidthGBps(topo, b, a)});
  }
  return ring;
}

}  // namespace

TEST_CASE("two NVSwitch islands of 8: a gang stays in one island, best fit first") {
  NodeTopology topo = NvSwitchIslands(2);
  std::optional<GpuChoice> eight = ChooseGpus(topo, AllFree(16), 8);
  REQUIRE(eight);
  CHECK_FALSE(eight->exact);
  CHECK(eight->gpus == Range(0, 8));
  CHECK(eight->ring_bandwidth_gbps == Approx(450));

  // Island 0 has 5 free GPUs, island 1 has 8: a quad fills island 0.
  std::optional<GpuChoice> quad = ChooseGpus(topo, AllFreeBut(16, {0, 1, 2}), 4);
  REQUIRE(quad);
  CHECK(quad->gpus == std::vector<int>{3, 4, 5, 6});
  std::optional<GpuChoice> five = ChooseGpus(topo, AllFreeBut(16, {0, 1, 2}), 5);
  REQUIRE(five);
  CHECK(five->gpus == Range(3, 8));

  // Twelve free GPUs or fewer: the exact search, same answer.
  std::optional<GpuChoice> exact = ChooseGpus(topo, AllFreeBut(16, {0, 1, 2, 8}), 4);
  REQUIRE(exact);
  CHECK(exact->exact);
  CHECK(exact->gpus == std::vector<int>{3, 4, 5, 6});
}

TEST_CASE("64 GPUs in 8 islands: islands first, every size up to all 64") {
  NodeTopology topo = NvSwitchIslands(8);
  std::optional<GpuChoice> eight = ChooseGpus(topo, AllFree(64), 8);
  REQUIRE(eight);
  CHECK(eight->gpus == Range(0, 8));
  std::optional<GpuChoice> sixteen = ChooseGpus(topo, AllFree(64), 16);
  REQUIRE(sixteen);
  CHECK(Sorted(sixteen->gpus) == Range(0, 16));
  CHECK(sixteen->ring_bandwidth_gbps == Approx(50 * 0.65));  // two SYS hops
  std::optional<GpuChoice> all = ChooseGpus(topo, AllFree(64), 64);
  REQUIRE(all);
  CHECK(Sorted(all->gpus) == Range(0, 64));
  CHECK_FALSE(all->exact);  // the set is forced, the 64-GPU ring is nearest-neighbour
  std::optional<GpuChoice> island = ChooseGpus(topo, MaskOf({8, 9, 10, 11, 12, 13, 14, 15, 16}), 9);
  REQUIRE(island);
  CHECK(island->exact);
  CHECK(all->ring_bandwidth_gbps == RingOf(topo, all->gpus));
  CHECK_FALSE(ChooseGpus(topo, AllFree(64), 65));
}

TEST_CASE("GPUs beyond position 63 are never chosen") {
  NodeTopology topo = UniformNode(70, kPix, "NVIDIA L40S");
  std::optional<GpuChoice> all = ChooseGpus(topo, ~uint64_t{0}, 64);
  REQUIRE(all);
  CHECK(Sorted(all->gpus) == Range(0, 64));
  CHECK_FALSE(ChooseGpus(topo, ~uint64_t{0}, 65));
}

TEST_CASE("seeded random nodes of 13-64 GPUs: k distinct free GPUs, honest ring") {
  std::mt19937 rng(4242);
  for (int trial = 0; trial < 40; ++trial) {
    const int gpus = 13 + static_cast<int>(rng() % 52);
    RandomNodeOptions options;
    options.mixed_models = trial % 4 == 1;
    options.asymmetric_links = trial % 4 == 2;
    NodeTopology topo = RandomNode(rng, gpus, options);
    const uint64_t free_mask = std::uniform_int_distribution<uint64_t>(0, ~uint64_t{0})(rng) & AllFree(gpus);
    const int free_gpus = std::popcount(free_mask);
    const int k = 1 + static_cast<int>(rng() % std::max(free_gpus, 1));
    INFO("trial " << trial << ": " << gpus << " GPUs, free_mask=" << free_mask << " k=" << k);
    std::optional<GpuChoice> choice = ChooseGpus(topo, free_mask, k);
    if (free_gpus == 0) {
      CHECK_FALSE(choice);
      continue;
    }
    REQUIRE(choice);
    CHECK(choice->exact == ((free_gpus <= kMaxExactSearchFreeGpus || k == free_gpus) && k <= kMaxExactRingGpus));
    REQUIRE(choice->gpus.size() == static_cast<size_t>(k));
    uint64_t chosen = 0;
    for (int g : choice->gpus) chosen |= uint64_t{1} << g;
    CHECK(std::popcount(chosen) == k);
    CHECK((chosen & ~free_mask) == 0);
    CHECK(choice->ring_bandwidth_gbps == RingOf(topo, choice->gpus));
  }
}
