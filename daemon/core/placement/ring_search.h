#pragma once

#include <vector>

#include "daemon/core/placement/gpu_graph.h"

namespace gpusched::core::placement {

// NCCL's ring all-reduce runs at the speed of the slowest hop of its ring, so
// a set of GPUs is worth the best bottleneck over all Hamiltonian cycles
// through it. Both searches below are exact dynamic programs over bitmasks,
// never enumerations of permutations.

// Rings through up to this many GPUs are found exactly; BestRingOrder falls
// back to a nearest-neighbour ring above it.
inline constexpr int kMaxExactRingGpus = 16;

// The best ring bottleneck level of every subset of `members` (at most 16
// GPUs; positions in the graph), indexed by local mask: bit b of the index
// stands for members[b]. One GPU (and the empty set) has no ring: level 0;
// two GPUs ring over their single link.
//
// One max-min DP: path[S][v] is the best bottleneck of a path that starts
// at the lowest member of S, visits exactly S and ends at v. Paths only
// grow upwards from their start, so every subset is reached from its own
// lowest member. Cost 2^m * m^2.
std::vector<BandwidthLevel> BestRingLevelOfEverySubset(const GpuGraph& graph, const std::vector<int>& members);

// The GPUs of `gpus` (distinct positions) in ring order: a Hamiltonian cycle
// with the best bottleneck, starting at the lowest position; among equally
// good cycles the lexicographically smallest, so that the answer is
// deterministic. Exact up to kMaxExactRingGpus (binary search over the
// distinct levels, each a reachability DP over bitmasks with the hops below
// the threshold removed); above that a nearest-neighbour ring (always the
// strongest link onwards, lowest position on ties) whose bottleneck may fall
// short of the best.
std::vector<int> BestRingOrder(const GpuGraph& graph, std::vector<int> gpus);

// The nearest-neighbour ring BestRingOrder falls back to, for callers that
// must rank many large sets cheaply: from the lowest position, always on
// over the strongest link (lowest position on ties). Cost m^2.
std::vector<int> NearestNeighbourRingOrder(const GpuGraph& graph, std::vector<int> gpus);

// The slowest hop of the ring `order` (closing back to the front); 0 for
// fewer than two GPUs.
BandwidthLevel RingBottleneck(const GpuGraph& graph, const std::vector<int>& order);

}  // namespace gpusched::core::placement
