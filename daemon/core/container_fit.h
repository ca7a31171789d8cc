#pragma once

#include "absl/status/status.h"
#include "daemon/core/cluster_state.h"
#include "daemon/core/gang_request.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::core {

// At submit, for a job in a container: InvalidArgument unless some node of
// its queue runs containers and every such node allows its image's registry
// and its mounts (so that placement need only ask NodeSlot::runs_containers).
// OK while no node of its queue has registered: they may be anything.
absl::Status CheckContainerEverRuns(const ClusterState& cluster, const GangRequest& request,
                                    const v1::ContainerSpec& container);

}  // namespace gpusched::core
