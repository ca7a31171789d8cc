#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "common/topology/link_kind.h"
#include "common/topology/node_topology.h"
#include "daemon/core/placement/gpu_graph.h"
#include "daemon/core/placement/ring_search.h"

namespace gpusched::core::placement {

// Which k free GPUs of one node a gang gets, and in which ring order.
//
// Preference, each rule deciding only among the sets tied on all before it:
//  1. Ring bandwidth: the highest ring bottleneck, i.e. over all Hamiltonian
//     cycles through the set, the best minimum of the per-hop
//     EstimatedLinkBandwidthGBps (what NCCL's ring all-reduce sees; for two
//     GPUs their single link). Then the highest weakest-pair bandwidth over
//     all pairs of the set (what all-to-all and tree traffic see): on a DGX-1
//     this prefers the fully NVLinked quad 0-3 to a cube face such as
//     {0,1,4,5}, whose ring is just as fast but whose diagonals cross SYS.
//  2. NIC and CPU closeness: the best "worst GPU's best NIC link" (each GPU
//     of the set takes its closest NIC; the set is as good as its farthest
//     GPU; LinkRank order PIX > PXB > PHB > NODE > SYS; nodes without NICs
//     tie), then the fewest CPU locality domains spanned (NUMA nodes; see
//     GpuGraph::Domain).
//  3. Anti-fragmentation: the GPUs the set leaves free should serve future
//     gangs best. For each gang size j, take the best set of j GPUs the
//     leftover could still offer (by rules 1 and 2) and compare, first at
//     the powers of two, largest first (8, 4, 2, 1: real gangs are powers
//     of two, see exact_search.cc), then at the other sizes, largest first.
//     This keeps whole NVLink islands, PCIe groups and NUMA halves free and
//     takes GPUs next to busy ones: on a DGX-1 with GPU 0 busy a pair goes
//     to the quad 0-3, leaving 4-7 a fully linked quad; on the 8x RTX 4090
//     box with GPU 0 busy it goes to the NUMA half 0-3.
//  4. Determinism: the set holding the lowest position where tied sets
//     differ.
//
// Exact for up to kMaxExactSearchFreeGpus free GPUs: every k-subset is scored
// from tables built by bitmask DPs (SubsetTable); cold calls cost microseconds
// on 8-GPU nodes and under a millisecond at 12 free GPUs. With more free GPUs
// (nodes of up to 64 GPUs) a greedy search takes over (greedy_search.h),
// unless k takes them all: its answer is still k distinct free GPUs with an
// honestly computed ring bandwidth, but not necessarily the best set, and
// rule 3 becomes best fit by CPU domain. Rings through more than
// kMaxExactRingGpus GPUs are nearest-neighbour (ring_search.h).
inline constexpr int kMaxExactSearchFreeGpus = 12;

struct GpuChoice {
  // Positions in topo.gpus(), in ring order (what CUDA_VISIBLE_DEVICES
  // should list): the lowest position first, each GPU next to its ring
  // neighbours, the last one closing the ring to the first; among equally
  // fast rings the lexicographically smallest (BestRingOrder).
  std::vector<int> gpus;
  // The slowest hop of that ring in estimated GB/s (rule 1). 0 for k == 1,
  // which has no ring.
  double ring_bandwidth_gbps = 0;
  // The worst link class (by LinkRank) the ring crosses; kSelf for k == 1.
  topology::Link worst_link{topology::LinkKind::kSelf, 0};
  // The weakest pair of the set in estimated GB/s (rule 1); 0 for k == 1.
  double weakest_pair_gbps = 0;
  // The worst, over the chosen GPUs, of each GPU's best NIC link (rule 2);
  // nullopt when the node lists no NICs.
  std::optional<topology::Link> nic_link;
  // CPU locality domains (NUMA nodes) the set spans (rule 2).
  int numa_domains_spanned = 0;
  // False when the answer may fall short of the rules: the greedy search
  // chose the set, or the ring is nearest-neighbour (more than
  // kMaxExactRingGpus GPUs).
  bool exact = true;
};

// The best k GPUs among those whose bit is set in free_mask (bit i = GPU at
// position i is free; bits at or above topo.num_gpus() are ignored).
// nullopt when k <= 0 or fewer than k GPUs are free. Pure and deterministic.
// Builds the node's GpuGraph on every call; GpuChooser caches instead.
std::optional<GpuChoice> ChooseGpus(const topology::NodeTopology& topo, uint64_t free_mask, int k);

// The same on an already built graph.
std::optional<GpuChoice> ChooseGpusOnGraph(const GpuGraph& graph, uint64_t free_mask, int k);

}  // namespace gpusched::core::placement
