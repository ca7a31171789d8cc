#pragma once

#include <cstdint>
#include <vector>

#include "daemon/core/placement/gpu_graph.h"

namespace gpusched::core::placement {

// The best k GPUs among the free ones by every preference rule of
// gpu_choice.h, found by scoring every k-subset from a SubsetTable: exact.
// Rule 3 (anti-fragmentation) ranks the candidates still tied after rules 1
// and 2 by the GPUs each would leave free: for each gang size j, the best
// Score any j of them could still get, compared at the powers of two first
// (largest first), then at the other sizes (largest first).
// Requires 1 <= k <= popcount(free_mask), and popcount(free_mask) <=
// SubsetTable::kMaxMembers unless k takes every free GPU.
// Returns ascending positions.
std::vector<int> ChooseSubsetExactly(const GpuGraph& graph, uint64_t free_mask, int k);

}  // namespace gpusched::core::placement
