#pragma once

#include <cstdint>
#include <vector>

#include "daemon/core/placement/gpu_graph.h"

namespace gpusched::core::placement {

// The search for nodes with more free GPUs than the exact search can score
// (up to 64): a heuristic, but its answer is always k distinct free GPUs.
//
// From every free GPU as a seed it grows a set one GPU at a time, always
// adding the free GPU whose weakest link to the set is strongest (then whose
// strongest link is, then one in a CPU domain the set already touches, then
// the better NIC rank, then the lowest position). Each distinct set is
// scored like the exact search (rule 1 with a nearest-neighbour ring, rule
// 2), and ties are broken by best fit instead of the exact leftover ranking:
// fewer free GPUs left in the CPU domains the set touches, then the lowest
// positions. Cost about seeds * k * free GPUs.
// Requires 1 <= k <= popcount(free_mask). Returns ascending positions.
std::vector<int> ChooseSubsetGreedily(const GpuGraph& graph, uint64_t free_mask, int k);

}  // namespace gpusched::core::placement
