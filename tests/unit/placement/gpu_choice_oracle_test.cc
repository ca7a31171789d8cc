// ChooseGpus held to BruteForceOracle (the rules restated by brute force) on
// every free mask and every k of every fixture and of seeded random nodes,
// plus the invariants any answer must keep.
#include <bit>
#include <catch2/catch.hpp>
#include <random>
#include <sstream>

#include "brute_force_oracle.h"
#include "common/topology/link_bandwidth.h"
#include "daemon/core/placement/gpu_choice.h"
#include "placement_test_util.h"
#include "random_node.h"

using namespace gpusched::core::placement;
using namespace gpusched::placement_testing;
using gpusched::topology::EstimatedGpuPairBandwidthGBps;
using gpusched::topology::NodeTopology;

namespace {

uint64_t SetOf(const std::vector<int>& gpus) {
  uint64_t set = 0;
  for (int g : gpus) set |= uint64_t{1} << g;
  return set;
}

// "" when ChooseGpus(topo, free_mask, k) is what the rules demand; otherwise
// what is wrong. One string per call keeps millions of checks cheap.
std::string Mismatch(const NodeTopology& topo, const BruteForceOracle& oracle, uint64_t free_mask, int k) {
  std::ostringstream why;
  why << "free_mask=" << free_mask << " k=" << k << ": ";
  const std::optional<GpuChoice> choice = ChooseGpus(topo, free_mask, k);
  const uint64_t expected = oracle.Choose(free_mask, k);
  if (expected == 0) return choice ? why.str() + "a choice where none fits" : "";
  if (!choice) return why.str() + "nullopt";

  const uint64_t chosen = SetOf(choice->gpus);
  if (choice->gpus.size() != static_cast<size_t>(k) || std::popcount(chosen) != k) {
    return why.str() + "not k distinct GPUs";
  }
  if ((chosen & ~free_mask) != 0) return why.str() + "a busy GPU";
  if (choice->ring_bandwidth_gbps != oracle.RingBottleneck(choice->gpus)) {
    why << "ring_bandwidth " << choice->ring_bandwidth_gbps << " but the order's bottleneck is "
        << oracle.RingBottleneck(choice->gpus);
    return why.str();
  }
  for (uint64_t other = free_mask; other != 0; other = (other - 1) & free_mask) {
    if (std::popcount(other) == k && oracle.BestRing(other) > choice->ring_bandwidth_gbps) {
      why << "set " << other << " rings faster (" << oracle.BestRing(other) << ")";
      return why.str();
    }
  }
  if (chosen != expected) {
    why << "chose " << chosen << ", the rules pick " << expected;
    return why.str();
  }
  if (choice->gpus != oracle.SmallestBestRing(chosen)) return why.str() + "ring order";
  if (!choice->exact) return why.str() + "not exact";
  return "";
}

void CheckEveryMaskAndK(const NodeTopology& topo) {
  const BruteForceOracle oracle(topo);
  const int n = topo.num_gpus();
  for (uint64_t free_mask = 0; free_mask < (uint64_t{1} << n); ++free_mask) {
    for (int k = 0; k <= n + 1; ++k) {
      const std::string mismatch = Mismatch(topo, oracle, free_mask, k);
      if (!mismatch.empty()) {
        FAIL_CHECK(mismatch);
        return;  // one report per node is enough
      }
    }
  }
  SUCCEED();
}

}  // namespace

TEST_CASE("every fixture, every free mask, every k: the rules by brute force") {
  for (const TopoFixture& fixture : AllTopoFixtures()) {
    INFO(fixture.file);
    CheckEveryMaskAndK(LoadTopo(fixture));
  }
}

TEST_CASE("seeded random nodes of 1-8 GPUs, every free mask, every k") {
  std::mt19937 rng(20240611);
  for (int trial = 0; trial < 60; ++trial) {
    const int gpus = 1 + trial % 8;
    RandomNodeOptions options;
    options.mixed_models = trial % 5 == 3;
    options.asymmetric_links = trial % 7 == 5;
    INFO("trial " << trial << ", " << gpus << " GPUs");
    CheckEveryMaskAndK(RandomNode(rng, gpus, options));
  }
}

TEST_CASE("seeded random nodes of 9-12 GPUs: exact search, rings checked by brute force") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 12; ++trial) {
    const int gpus = 9 + trial % 4;
    NodeTopology topo = RandomNode(rng, gpus);
    INFO("trial " << trial << ", " << gpus << " GPUs");
    for (int sample = 0; sample < 6; ++sample) {
      const uint64_t free_mask = std::uniform_int_distribution<uint64_t>(0, AllFree(gpus))(rng);
      const int free_gpus = std::popcount(free_mask);
      for (int k = 1; k <= std::min(free_gpus, 6); ++k) {
        INFO("free_mask=" << free_mask << " k=" << k);
        auto ring_of = [&topo](const std::vector<int>& order) {
          const size_t m = order.size();
          double ring = m < 2 ? 0 : 1e9;
          for (size_t i = 0; m >= 2 && i < m; ++i) {
            const int a = order[i], b = order[(i + 1) % m];
            ring =
                std::min({ring, EstimatedGpuPairBandwidthGBps(topo, a, b), EstimatedGpuPairBandwidthGBps(topo, b, a)});
          }
          return ring;
        };
        const std::optional<GpuChoice> choice = ChooseGpus(topo, free_mask, k);
        REQUIRE(choice);
        CHECK(choice->exact);
        CHECK(Sorted(choice->gpus).size() == static_cast<size_t>(k));
        CHECK((SetOf(choice->gpus) & ~free_mask) == 0);
        CHECK(std::popcount(SetOf(choice->gpus)) == k);
        // Best ring over all k-subsets, by permutations.
        double best = 0;
        for (uint64_t s = free_mask; s != 0; s = (s - 1) & free_mask) {
          if (std::popcount(s) != k) continue;
          std::vector<int> order;
          for (uint64_t b = s; b != 0; b &= b - 1) order.push_back(std::countr_zero(b));
          do {
            best = std::max(best, ring_of(order));
          } while (std::next_permutation(order.begin() + 1, order.end()));
        }
        CHECK(choice->ring_bandwidth_gbps == best);
        CHECK(choice->ring_bandwidth_gbps == ring_of(choice->gpus));
      }
    }
  }
}
