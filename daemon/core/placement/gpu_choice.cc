#include "daemon/core/placement/gpu_choice.h"

#include <algorithm>
#include <bit>
#include <limits>

#include "daemon/core/placement/exact_search.h"
#include "daemon/core/placement/greedy_search.h"
#include "daemon/core/placement/ring_search.h"
#include "daemon/core/placement/subset_table.h"

namespace gpusched::core::placement {
namespace {

static_assert(kMaxExactSearchFreeGpus <= SubsetTable::kMaxMembers);

using topology::Link;

GpuChoice Describe(const GpuGraph& graph, std::vector<int> ring, bool exact) {
  GpuChoice choice;
  choice.gpus = std::move(ring);
  choice.exact = exact;
  const std::vector<int>& gpus = choice.gpus;
  const size_t k = gpus.size();

  if (k >= 2) {
    choice.ring_bandwidth_gbps = graph.LevelGBps(RingBottleneck(graph, gpus));
    choice.worst_link = graph.GpuLink(gpus[0], gpus[1]);
    for (size_t i = 1; i < k; ++i) {
      const Link& hop = graph.GpuLink(gpus[i], gpus[(i + 1) % k]);
      if (topology::BetterThan(choice.worst_link, hop)) choice.worst_link = hop;
    }
    BandwidthLevel weakest = std::numeric_limits<BandwidthLevel>::max();
    for (size_t i = 0; i < k; ++i) {
      for (size_t j = i + 1; j < k; ++j) weakest = std::min(weakest, graph.Level(gpus[i], gpus[j]));
    }
    choice.weakest_pair_gbps = graph.LevelGBps(weakest);
  }

  uint64_t domains = 0;
  for (int gpu : gpus) {
    domains |= graph.DomainBit(gpu);
    const std::optional<Link>& nic = graph.BestNicLink(gpu);
    if (nic && (!choice.nic_link || topology::BetterThan(*choice.nic_link, *nic))) {
      choice.nic_link = nic;
    }
  }
  choice.numa_domains_spanned = std::popcount(domains);
  return choice;
}

}  // namespace

std::optional<GpuChoice> ChooseGpus(const topology::NodeTopology& topo, uint64_t free_mask, int k) {
  return ChooseGpusOnGraph(GpuGraph::FromTopology(topo), free_mask, k);
}

std::optional<GpuChoice> ChooseGpusOnGraph(const GpuGraph& graph, uint64_t free_mask, int k) {
  free_mask &= graph.all_gpus_mask();
  const int free_gpus = std::popcount(free_mask);
  if (k <= 0 || k > free_gpus) return std::nullopt;
  // All free GPUs wanted: the set is forced, whatever the node's size.
  const bool exact_set = free_gpus <= kMaxExactSearchFreeGpus || k == free_gpus;
  std::vector<int> chosen =
      exact_set ? ChooseSubsetExactly(graph, free_mask, k) : ChooseSubsetGreedily(graph, free_mask, k);
  return Describe(graph, BestRingOrder(graph, std::move(chosen)), exact_set && k <= kMaxExactRingGpus);
}

}  // namespace gpusched::core::placement
