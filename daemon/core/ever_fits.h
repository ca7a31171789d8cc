#pragma once

#include "absl/status/status.h"
#include "daemon/core/cluster_state.h"
#include "daemon/core/gang_request.h"
#include "daemon/core/policy/placement_policy.h"

namespace gpusched::core {

// InvalidArgument when no node set of this cluster, even idle, could ever hold
// the gang ("never schedulable"). OK when it could, or when no node is known yet.
absl::Status CheckEverFits(const ClusterState& cluster, const GangRequest& request);

}  // namespace gpusched::core
