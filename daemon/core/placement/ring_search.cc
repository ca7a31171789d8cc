#include "daemon/core/placement/ring_search.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>

namespace gpusched::core::placement {
namespace {

// A path of one GPU has no hop yet, so nothing bounds it.
constexpr BandwidthLevel kNoHopYet = std::numeric_limits<BandwidthLevel>::max();

// reach[S] (S always holds local GPU 0): bit v set when some path starts at
// local 0, visits exactly S and ends at v using only hops in `adjacent`.
std::vector<uint32_t> PathEndsFromFirst(const std::vector<uint32_t>& adjacent) {
  const int m = static_cast<int>(adjacent.size());
  const uint32_t full = (uint32_t{1} << m) - 1;
  std::vector<uint32_t> reach(size_t{1} << m, 0);
  reach[1] = 1;
  for (uint32_t s = 1; s <= full; s += 2) {
    const uint32_t ends = reach[s];
    if (ends == 0) continue;
    for (uint32_t outside = full & ~s; outside != 0; outside &= outside - 1) {
      const int x = std::countr_zero(outside);
      if (adjacent[x] & ends) reach[s | (uint32_t{1} << x)] |= uint32_t{1} << x;
    }
  }
  return reach;
}

// Local adjacency (bit j of row i) of the hops at or above `threshold`.
std::vector<uint32_t> HopsAtLeast(const GpuGraph& graph, const std::vector<int>& gpus, BandwidthLevel threshold) {
  const int m = static_cast<int>(gpus.size());
  std::vector<uint32_t> adjacent(m, 0);
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < m; ++j) {
      if (i != j && graph.Level(gpus[i], gpus[j]) >= threshold) {
        adjacent[i] |= uint32_t{1} << j;
      }
    }
  }
  return adjacent;
}

bool HasCycle(const std::vector<uint32_t>& adjacent) {
  const uint32_t full = (uint32_t{1} << adjacent.size()) - 1;
  return (PathEndsFromFirst(adjacent)[full] & adjacent[0]) != 0;
}

// Walks the cycle greedily, always to the lowest next GPU from which the
// rest of the cycle can still be completed: x can follow when a path from
// local 0 through {0} + remaining ends at x, i.e. read backwards, x can
// reach local 0 through everything not yet visited.
std::vector<int> SmallestCycle(const std::vector<int>& gpus, const std::vector<uint32_t>& adjacent) {
  const int m = static_cast<int>(gpus.size());
  const std::vector<uint32_t> reach = PathEndsFromFirst(adjacent);
  std::vector<int> order = {gpus[0]};
  uint32_t remaining = ((uint32_t{1} << m) - 1) & ~uint32_t{1};
  int current = 0;
  while (remaining != 0) {
    const uint32_t can_follow = adjacent[current] & reach[remaining | 1] & remaining;
    current = std::countr_zero(can_follow);  // never empty: a cycle exists
    order.push_back(gpus[current]);
    remaining &= ~(uint32_t{1} << current);
  }
  return order;
}

std::vector<int> ExactRing(const GpuGraph& graph, const std::vector<int>& gpus) {
  const int m = static_cast<int>(gpus.size());
  std::vector<BandwidthLevel> levels;
  for (int i = 0; i < m; ++i) {
    for (int j = i + 1; j < m; ++j) levels.push_back(graph.Level(gpus[i], gpus[j]));
  }
  std::sort(levels.begin(), levels.end());
  levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
  // The weakest level always works (the pair graph is complete); find the
  // strongest one that still leaves a Hamiltonian cycle.
  size_t lo = 0, hi = levels.size() - 1;
  while (lo < hi) {
    size_t mid = (lo + hi + 1) / 2;
    if (HasCycle(HopsAtLeast(graph, gpus, levels[mid]))) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return SmallestCycle(gpus, HopsAtLeast(graph, gpus, levels[lo]));
}

}  // namespace

std::vector<int> NearestNeighbourRingOrder(const GpuGraph& graph, std::vector<int> gpus) {
  std::sort(gpus.begin(), gpus.end());
  if (gpus.empty()) return gpus;
  std::vector<int> order = {gpus[0]};
  std::vector<int> left(gpus.begin() + 1, gpus.end());
  while (!left.empty()) {
    size_t best = 0;
    for (size_t i = 1; i < left.size(); ++i) {
      if (graph.Level(order.back(), left[i]) > graph.Level(order.back(), left[best])) best = i;
    }
    order.push_back(left[best]);
    left.erase(left.begin() + static_cast<long>(best));
  }
  return order;
}

std::vector<BandwidthLevel> BestRingLevelOfEverySubset(const GpuGraph& graph, const std::vector<int>& members) {
  const int m = static_cast<int>(members.size());
  const uint32_t count = uint32_t{1} << m;
  const uint32_t full = count - 1;
  std::vector<BandwidthLevel> local(static_cast<size_t>(m) * m);
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < m; ++j) local[i * m + j] = graph.Level(members[i], members[j]);
  }

  std::vector<BandwidthLevel> ring(count, 0);
  std::vector<BandwidthLevel> path(static_cast<size_t>(count) * m, 0);  // 0: no path
  for (int v = 0; v < m; ++v) path[(size_t{1} << v) * m + v] = kNoHopYet;

  for (uint32_t s = 1; s < count; ++s) {
    const int first = std::countr_zero(s);
    const BandwidthLevel* ends = &path[static_cast<size_t>(s) * m];
    if (std::popcount(s) >= 2) {
      BandwidthLevel best = 0;
      for (uint32_t rest = s & (s - 1); rest != 0; rest &= rest - 1) {
        const int v = std::countr_zero(rest);
        best = std::max(best, std::min(ends[v], local[v * m + first]));
      }
      ring[s] = best;
    }
    // Only GPUs above the start may join, so that S keeps its start.
    const uint32_t above_first = full & ~((uint32_t{2} << first) - 1);
    for (uint32_t inside = s; inside != 0; inside &= inside - 1) {
      const int v = std::countr_zero(inside);
      if (ends[v] == 0) continue;
      for (uint32_t out = above_first & ~s; out != 0; out &= out - 1) {
        const int x = std::countr_zero(out);
        const BandwidthLevel via = std::min(ends[v], local[v * m + x]);
        BandwidthLevel& slot = path[static_cast<size_t>(s | (uint32_t{1} << x)) * m + x];
        slot = std::max(slot, via);
      }
    }
  }
  return ring;
}

std::vector<int> BestRingOrder(const GpuGraph& graph, std::vector<int> gpus) {
  std::sort(gpus.begin(), gpus.end());
  if (gpus.size() <= 2) return gpus;
  if (gpus.size() <= static_cast<size_t>(kMaxExactRingGpus)) return ExactRing(graph, gpus);
  return NearestNeighbourRingOrder(graph, std::move(gpus));
}

BandwidthLevel RingBottleneck(const GpuGraph& graph, const std::vector<int>& order) {
  if (order.size() < 2) return 0;
  BandwidthLevel worst = std::numeric_limits<BandwidthLevel>::max();
  for (size_t i = 0; i < order.size(); ++i) {
    worst = std::min(worst, graph.Level(order[i], order[(i + 1) % order.size()]));
  }
  return worst;
}

}  // namespace gpusched::core::placement
