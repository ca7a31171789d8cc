#include "daemon/core/placement/greedy_search.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <tuple>

#include "daemon/core/placement/ring_search.h"
#include "daemon/core/placement/subset_score.h"

namespace gpusched::core::placement {
namespace {

std::vector<int> Positions(uint64_t mask) {
  std::vector<int> out;
  for (; mask != 0; mask &= mask - 1) out.push_back(std::countr_zero(mask));
  return out;
}

uint64_t Bit(int position) { return uint64_t{1} << position; }

uint64_t GrowFrom(const GpuGraph& graph, int seed, uint64_t free_mask, int k) {
  const std::vector<int> free_gpus = Positions(free_mask);
  std::vector<BandwidthLevel> weakest(graph.size(), 0), strongest(graph.size(), 0);
  for (int x : free_gpus) weakest[x] = strongest[x] = graph.Level(seed, x);
  uint64_t chosen = Bit(seed);
  uint64_t domains = graph.DomainBit(seed);
  for (int added = 1; added < k; ++added) {
    int best = -1;
    auto rank = [&](int x) {
      return std::make_tuple(weakest[x], strongest[x], (domains & graph.DomainBit(x)) != 0, graph.NicRank(x));
    };
    for (int x : free_gpus) {
      if (chosen & Bit(x)) continue;
      if (best < 0 || rank(x) > rank(best)) best = x;  // ascending: lowest wins ties
    }
    if (best < 0) break;  // fewer free GPUs than k: the caller sees fewer bits than it asked for
    chosen |= Bit(best);
    domains |= graph.DomainBit(best);
    for (int x : free_gpus) {
      weakest[x] = std::min(weakest[x], graph.Level(best, x));
      strongest[x] = std::max(strongest[x], graph.Level(best, x));
    }
  }
  return chosen;
}

// Exact rings cost 2^k per seed; above this many GPUs the seeds are ranked
// by the nearest-neighbour ring instead.
constexpr int kMaxExactRingPerSeed = 8;

uint64_t ScoreOf(const GpuGraph& graph, const std::vector<int>& gpus) {
  SubsetScore score;
  score.ring_level = RingBottleneck(
      graph, gpus.size() <= kMaxExactRingPerSeed ? BestRingOrder(graph, gpus) : NearestNeighbourRingOrder(graph, gpus));
  score.pair_level = gpus.size() < 2 ? 0 : std::numeric_limits<BandwidthLevel>::max();
  score.nic_rank = std::numeric_limits<int>::max();
  uint64_t domains = 0;
  for (size_t i = 0; i < gpus.size(); ++i) {
    for (size_t j = i + 1; j < gpus.size(); ++j) {
      score.pair_level = std::min(score.pair_level, graph.Level(gpus[i], gpus[j]));
    }
    score.nic_rank = std::min(score.nic_rank, graph.NicRank(gpus[i]));
    domains |= graph.DomainBit(gpus[i]);
  }
  score.domains_spanned = std::popcount(domains);
  return score.Packed();
}

// Best fit: how many free GPUs the set leaves in the domains it touches.
int FreeLeftInTouchedDomains(const GpuGraph& graph, uint64_t chosen, uint64_t free_mask) {
  uint64_t touched = 0;
  for (int x : Positions(chosen)) touched |= graph.DomainBit(x);
  int left = 0;
  for (int x : Positions(free_mask & ~chosen)) left += (touched & graph.DomainBit(x)) != 0;
  return left;
}

bool HasLowerPositions(uint64_t a, uint64_t b) {
  const uint64_t differ = a ^ b;
  return (a & differ & -differ) != 0;
}

}  // namespace

std::vector<int> ChooseSubsetGreedily(const GpuGraph& graph, uint64_t free_mask, int k) {
  if (std::popcount(free_mask) == k) return Positions(free_mask);
  std::vector<uint64_t> seen;
  uint64_t best = 0, best_score = 0;
  int best_left = 0;
  for (int seed : Positions(free_mask)) {
    const uint64_t chosen = GrowFrom(graph, seed, free_mask, k);
    if (std::find(seen.begin(), seen.end(), chosen) != seen.end()) continue;
    seen.push_back(chosen);
    const uint64_t score = ScoreOf(graph, Positions(chosen));
    const int left = FreeLeftInTouchedDomains(graph, chosen, free_mask);
    const bool better =
        best == 0 || score > best_score ||
        (score == best_score && (left < best_left || (left == best_left && HasLowerPositions(chosen, best))));
    if (better) {
      best = chosen;
      best_score = score;
      best_left = left;
    }
  }
  return Positions(best);
}

}  // namespace gpusched::core::placement
