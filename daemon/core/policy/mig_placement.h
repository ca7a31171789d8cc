#pragma once

#include "daemon/core/cluster_state.h"
#include "daemon/core/gang_request.h"
#include "daemon/core/policy/placement_policy.h"

namespace gpusched::core::policy {

// Where a job that asks for MIG instances goes (request.wants_mig()):
// request.total_gpus free instances of its profile on one up node of its
// queue with the CPUs and memory for them, on GPUs within the model and
// memory constraints. Best fit: the node left with the fewest free instances
// of the profile after the job (nodes with many stay whole for bigger asks),
// then node name order; on the node, instances of the GPUs with the fewest
// free instances first, then by GPU position and instance index. Every
// placement policy places MIG jobs this way (PlacementPolicy::Place).
PlacementResult PlaceMigSlices(const ClusterState& cluster, const GangRequest& request);

// Free instances of `profile` (lower case) on the node, by GPU within
// `eligible`: (GPU position, instance position) in placement order.
std::vector<std::pair<int, int>> FreeMigInstances(const NodeSlot& slot, const std::string& profile, uint64_t eligible);

}  // namespace gpusched::core::policy
