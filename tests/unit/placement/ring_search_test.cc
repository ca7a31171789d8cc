#include "daemon/core/placement/ring_search.h"

#include <algorithm>
#include <bit>
#include <catch2/catch.hpp>
#include <limits>
#include <random>

#include "placement_test_util.h"
#include "random_node.h"

using namespace gpusched::core::placement;
using namespace gpusched::placement_testing;

namespace {

std::vector<int> Members(uint32_t local, const std::vector<int>& members) {
  std::vector<int> out;
  for (uint32_t b = local; b != 0; b &= b - 1) out.push_back(members[std::countr_zero(b)]);
  return out;
}

// Best bottleneck and the smallest order reaching it, over all permutations
// that start at the lowest GPU.
std::pair<BandwidthLevel, std::vector<int>> BruteForceRing(const GpuGraph& g, std::vector<int> order) {
  std::sort(order.begin(), order.end());
  BandwidthLevel best = 0;
  std::vector<int> smallest = order;
  bool first = true;
  do {
    BandwidthLevel ring = RingBottleneck(g, order);
    if (first || ring > best) {
      best = ring;
      smallest = order;
      first = false;
    }
  } while (order.size() > 1 && std::next_permutation(order.begin() + 1, order.end()));
  return {best, smallest};
}

}  // namespace

TEST_CASE("ring DP over every subset matches permutations on random nodes") {
  std::mt19937 rng(99);
  for (int trial = 0; trial < 30; ++trial) {
    const int n = 2 + trial % 8;
    GpuGraph g = GpuGraph::FromTopology(RandomNode(rng, n));
    // Members: a random subset of the node's GPUs, as for a partly busy node.
    std::vector<int> members;
    for (int i = 0; i < n; ++i) {
      if (rng() % 4 != 0) members.push_back(i);
    }
    INFO("trial " << trial);
    const std::vector<BandwidthLevel> table = BestRingLevelOfEverySubset(g, members);
    REQUIRE(table.size() == (size_t{1} << members.size()));
    CHECK(table[0] == 0);
    for (uint32_t local = 1; local < table.size(); ++local) {
      const std::vector<int> set = Members(local, members);
      auto [best, smallest] = BruteForceRing(g, set);
      INFO("set " << ::Catch::Detail::stringify(set));
      CHECK(table[local] == (set.size() < 2 ? 0 : best));
      const std::vector<int> order = BestRingOrder(g, set);
      CHECK(order == smallest);
      CHECK(RingBottleneck(g, order) == (set.size() < 2 ? 0 : best));
    }
  }
}

TEST_CASE("exact rings up to 16 GPUs agree with the subset DP") {
  std::mt19937 rng(5);
  for (int n : {9, 12, 14, 16}) {
    GpuGraph g = GpuGraph::FromTopology(RandomNode(rng, n));
    std::vector<int> all(n);
    for (int i = 0; i < n; ++i) all[i] = i;
    INFO(n << " GPUs");
    const std::vector<int> order = BestRingOrder(g, all);
    CHECK(Sorted(order) == all);
    CHECK(order.front() == 0);
    CHECK(RingBottleneck(g, order) == BestRingLevelOfEverySubset(g, all).back());
  }
}

TEST_CASE("the DGX-1 NV2 links form one 8-ring, found exactly") {
  GpuGraph g = GpuGraph::FromTopology(LoadTopo("dgx1-v100.txt", "Tesla V100-SXM2-32GB"));
  const std::vector<int> order = BestRingOrder(g, {7, 6, 5, 4, 3, 2, 1, 0});
  CHECK(order == std::vector<int>{0, 3, 2, 1, 5, 6, 7, 4});
  CHECK(g.LevelGBps(RingBottleneck(g, order)) == Approx(50));
}

TEST_CASE("above 16 GPUs the ring is nearest-neighbour: every GPU once, strongest link onwards") {
  // Two 10-GPU NVLink islands joined by SYS: nearest-neighbour stays inside
  // an island until it is used up, so only two hops cross.
  gpusched::topology::NodeTopology topo = UniformNode(20, kSys, "NVIDIA H200");
  for (int a = 0; a < 20; ++a) {
    for (int b = a + 1; b < 20; ++b) {
      if (a / 10 == b / 10) SetPair(topo, a, b, Nv(18));
    }
  }
  GpuGraph g = GpuGraph::FromTopology(topo);
  std::vector<int> all(20);
  for (int i = 0; i < 20; ++i) all[i] = 19 - i;
  const std::vector<int> order = BestRingOrder(g, all);
  CHECK(order == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19});
  CHECK(g.LevelGBps(RingBottleneck(g, order)) == Approx(50 * 0.65));
  CHECK(RingBottleneck(g, {}) == 0);
  CHECK(RingBottleneck(g, {3}) == 0);
}
