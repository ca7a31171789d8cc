#pragma once

#include <vector>

#include "daemon/core/policy/node_fit.h"
#include "daemon/core/policy/placement_policy.h"

namespace gpusched::core::policy {

// The topology-blind policies differ only in node order. Given the order in
// which single nodes are tried and the order in which a gang too large for
// one node takes nodes (candidates scored for `req`, not idle), places the
// gang on free GPUs, lowest positions first. CPU-only jobs take the first
// node of `cpu_order` with their CPUs and memory.
PlacementResult FillInOrder(const ClusterState& cluster, const GangRequest& req,
                            const std::vector<GpuCandidate>& single_node_order,
                            const std::vector<GpuCandidate>& spanning_order,
                            const std::vector<const NodeSlot*>& cpu_order);

// Why a GPU gang of this shape cannot be placed with what is free now.
std::string WaitReason(const ClusterState& cluster, const GangRequest& req);

// WaitReason from ScoreGpuCandidates(cluster, req) (not idle, any
// min_usable of 1), which a policy that searched has at hand.
std::string WaitReason(const ClusterState& cluster, const GangRequest& req,
                       const std::vector<GpuCandidate>& candidates);

}  // namespace gpusched::core::policy
