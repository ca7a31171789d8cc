#include "daemon/core/placement/subset_table.h"

#include <algorithm>
#include <bit>
#include <limits>

#include "daemon/core/placement/ring_search.h"
#include "daemon/core/placement/subset_score.h"

namespace gpusched::core::placement {

SubsetTable::SubsetTable(const GpuGraph& graph, std::vector<int> members) : members_(std::move(members)) {
  const int m = size();
  const uint32_t count = uint32_t{1} << m;
  const std::vector<BandwidthLevel> ring = BestRingLevelOfEverySubset(graph, members_);

  // Each subset extends the one without its highest member, so the weakest
  // pair, the worst NIC rank and the domains touched grow one GPU at a time.
  std::vector<BandwidthLevel> weakest_pair(count, std::numeric_limits<BandwidthLevel>::max());
  std::vector<int> worst_nic(count, std::numeric_limits<int>::max());
  std::vector<uint64_t> domains(count, 0);
  score_.assign(count, 0);
  for (uint32_t s = 1; s < count; ++s) {
    const int top = 31 - std::countl_zero(s);
    const uint32_t rest = s & ~(uint32_t{1} << top);
    const int gpu = members_[top];
    BandwidthLevel pair = weakest_pair[rest];
    for (uint32_t r = rest; r != 0; r &= r - 1) {
      pair = std::min(pair, graph.Level(gpu, members_[std::countr_zero(r)]));
    }
    weakest_pair[s] = pair;
    worst_nic[s] = std::min(worst_nic[rest], graph.NicRank(gpu));
    domains[s] = domains[rest] | graph.DomainBit(gpu);

    SubsetScore score;
    score.ring_level = ring[s];
    score.pair_level = rest == 0 ? 0 : pair;
    score.nic_rank = worst_nic[s];
    score.domains_spanned = std::popcount(domains[s]);
    score_[s] = score.Packed();
  }
}

void SubsetTable::ComputeBestOfSize(int max_size) {
  const int m = size();
  const uint32_t count = uint32_t{1} << m;
  best_of_size_.assign(static_cast<size_t>(count) * (m + 1), 0);
  for (uint32_t s = 1; s < count; ++s) {
    const int n = std::popcount(s);
    if (n > max_size) continue;
    uint64_t* best = &best_of_size_[static_cast<size_t>(s) * (m + 1)];
    best[n] = score_[s];
    // A best j-subset of S misses at least one member x (j < |S|), so it is
    // a best j-subset of some S - {x}.
    for (uint32_t in = s; in != 0; in &= in - 1) {
      const uint64_t* without = &best_of_size_[static_cast<size_t>(s & ~(in & -in)) * (m + 1)];
      for (int j = 1; j < n; ++j) best[j] = std::max(best[j], without[j]);
    }
  }
}

}  // namespace gpusched::core::placement
