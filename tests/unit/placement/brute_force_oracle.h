#pragma once

#include <cstdint>
#include <tuple>
#include <vector>

#include "common/topology/node_topology.h"

namespace gpusched::placement_testing {

// gpu_choice.h's preference rules restated the slow, obvious way, for nodes
// of up to 8 GPUs: rings by trying every permutation, sets by trying every
// mask, bandwidth straight from EstimatedGpuPairBandwidthGBps. The tests
// hold ChooseGpus to it on every free mask and every k.
class BruteForceOracle {
 public:
  // Rules 1 and 2 as a tuple, larger is better: ring bottleneck, weakest
  // pair, worst GPU's best NIC LinkRank, minus the NUMA domains spanned.
  using Score = std::tuple<double, double, int, int>;

  explicit BruteForceOracle(const topology::NodeTopology& topo);

  // The worse direction of the pair, as GpuGraph reads it.
  double PairGBps(int i, int j) const;
  // The slowest hop of `order` closed into a ring; 0 below two GPUs.
  double RingBottleneck(const std::vector<int>& order) const;
  double BestRing(uint64_t set) const { return best_ring_[set]; }
  // Among the orders starting at the lowest GPU with the best bottleneck,
  // the lexicographically smallest.
  const std::vector<int>& SmallestBestRing(uint64_t set) const { return smallest_ring_[set]; }
  const Score& ScoreOf(uint64_t set) const { return score_[set]; }

  // The set ChooseGpus must return (rules 1-4); 0 when k is out of range.
  uint64_t Choose(uint64_t free_mask, int k) const;

 private:
  int Domains(uint64_t set) const;
  // Rule 3: the best Score of any j of them, for j = the powers of two
  // (largest first), then the other sizes (largest first).
  std::vector<Score> LeftoverProfile(uint64_t left) const;

  const topology::NodeTopology& topo_;
  int n_;
  std::vector<double> best_ring_;
  std::vector<std::vector<int>> smallest_ring_;
  std::vector<Score> score_;
};

}  // namespace gpusched::placement_testing
