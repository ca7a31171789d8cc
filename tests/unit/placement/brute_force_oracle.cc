#include "brute_force_oracle.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <set>
#include <utility>

#include "common/topology/link_bandwidth.h"

namespace gpusched::placement_testing {
namespace {

std::vector<int> Members(uint64_t set) {
  std::vector<int> out;
  for (int i = 0; i < 64; ++i) {
    if (set >> i & 1) out.push_back(i);
  }
  return out;
}

// Sets of equal size: the smaller sorted list of positions.
bool LexicographicallyLower(uint64_t a, uint64_t b) { return Members(a) < Members(b); }

}  // namespace

BruteForceOracle::BruteForceOracle(const topology::NodeTopology& topo) : topo_(topo), n_(topo.num_gpus()) {
  const uint64_t count = uint64_t{1} << n_;
  best_ring_.assign(count, 0);
  smallest_ring_.assign(count, {});
  score_.assign(count, {});
  for (uint64_t set = 1; set < count; ++set) {
    std::vector<int> order = Members(set);
    best_ring_[set] = -1;
    do {
      double ring = RingBottleneck(order);
      if (ring > best_ring_[set]) {  // permutations come in lexicographic order
        best_ring_[set] = ring;
        smallest_ring_[set] = order;
      }
    } while (std::next_permutation(order.begin() + 1, order.end()));

    std::vector<int> gpus = Members(set);
    double weakest = gpus.size() < 2 ? 0 : std::numeric_limits<double>::max();
    int nic = std::numeric_limits<int>::max();
    for (int a : gpus) {
      for (int b : gpus) {
        if (a < b) weakest = std::min(weakest, PairGBps(a, b));
      }
      int best_nic = 0;
      for (int k = 0; k < topo.num_nics(); ++k) {
        best_nic = std::max(best_nic, topology::LinkRank(topo.GpuNicLink(a, k)));
      }
      nic = std::min(nic, best_nic);
    }
    score_[set] = {best_ring_[set], weakest, nic, -Domains(set)};
  }
}

double BruteForceOracle::PairGBps(int i, int j) const {
  return std::min(topology::EstimatedGpuPairBandwidthGBps(topo_, i, j),
                  topology::EstimatedGpuPairBandwidthGBps(topo_, j, i));
}

double BruteForceOracle::RingBottleneck(const std::vector<int>& order) const {
  if (order.size() < 2) return 0;
  double worst = std::numeric_limits<double>::max();
  for (size_t i = 0; i < order.size(); ++i) {
    worst = std::min(worst, PairGBps(order[i], order[(i + 1) % order.size()]));
  }
  return worst;
}

int BruteForceOracle::Domains(uint64_t set) const {
  std::set<std::pair<int, std::vector<int>>> domains;
  for (int g : Members(set)) {
    const topology::GpuInfo& gpu = topo_.gpus()[g];
    domains.insert({gpu.numa_node, gpu.numa_node >= 0 ? std::vector<int>{} : gpu.cpu_affinity});
  }
  return static_cast<int>(domains.size());
}

std::vector<BruteForceOracle::Score> BruteForceOracle::LeftoverProfile(uint64_t left) const {
  std::vector<int> sizes;  // powers of two, largest first, then the rest
  for (int j : {64, 32, 16, 8, 4, 2, 1}) {
    if (j <= std::popcount(left)) sizes.push_back(j);
  }
  for (int j = std::popcount(left); j >= 1; --j) {
    if ((j & (j - 1)) != 0) sizes.push_back(j);
  }
  std::vector<Score> profile;
  for (int j : sizes) {
    Score best{-1, -1, -1, -1000};
    for (uint64_t sub = left; sub != 0; sub = (sub - 1) & left) {
      if (std::popcount(sub) == j) best = std::max(best, score_[sub]);
    }
    profile.push_back(best);
  }
  return profile;
}

uint64_t BruteForceOracle::Choose(uint64_t free_mask, int k) const {
  free_mask &= (uint64_t{1} << n_) - 1;
  if (k <= 0 || k > std::popcount(free_mask)) return 0;
  uint64_t best = 0;
  for (uint64_t set = free_mask; set != 0; set = (set - 1) & free_mask) {
    if (std::popcount(set) != k) continue;
    if (best == 0) {
      best = set;
      continue;
    }
    if (score_[set] != score_[best]) {
      if (score_[set] > score_[best]) best = set;
      continue;
    }
    auto mine = LeftoverProfile(free_mask & ~set);
    auto theirs = LeftoverProfile(free_mask & ~best);
    if (mine > theirs || (mine == theirs && LexicographicallyLower(set, best))) best = set;
  }
  return best;
}

}  // namespace gpusched::placement_testing
