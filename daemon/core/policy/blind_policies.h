#pragma once

#include <memory>

#include "daemon/core/policy/placement_policy.h"

namespace gpusched::core::policy {

// The topology-blind baselines the topology policy is measured against:
//
// first-fit: nodes in name order; the first that can hold the whole gang,
//   else the first ones in name order that together can.
// best-fit: the node with the fewest free GPUs that can hold the gang (fills
//   partly used nodes, keeps idle ones whole); a gang too large for any node
//   takes the emptiest nodes first, to span as few as possible. When it
//   fits nowhere and lower-tier gangs may be preempted, it compacts: nodes
//   from least to most utilized, evicting there until it fits
//   (PreemptionOrder::kLeastUtilizedNodes).
// spread: the least utilized node that can hold the gang (score 1/(1+used
//   fraction of its GPUs), the load-balancing extender many Kubernetes
//   clusters run); spanning gangs take the least utilized nodes first.
std::unique_ptr<PlacementPolicy> MakeFirstFitPolicy();
std::unique_ptr<PlacementPolicy> MakeBestFitPolicy();
std::unique_ptr<PlacementPolicy> MakeSpreadPolicy();

}  // namespace gpusched::core::policy
