#pragma once

#include <vector>

#include "daemon/core/sharing/fragmentation.h"
#include "daemon/core/sharing/pack_node.h"

namespace gpusched::core::sharing {

// By GPU model (PackNode::model, 0-63): the share of that model's GPU
// capacity that the mix's tasks limited to some of the cluster's models
// expect to need there, each task's request spread over its models by
// capacity, at the mix's proportions scaled to the whole cluster (1 = all of
// it; above 1, more than there is). fill-fgd charges a task this much per
// GPU thousandth it takes of a model, so that tasks that could run anywhere
// leave the scarce models to those that cannot: on the openb list with
// every third GPU pod limited to one model, 4.37% unallocated against FGD's
// 10.74% (11.20% without this term). All 0 when no task is limited.
std::vector<double> ModelPressure(const std::vector<PackNode>& nodes, const TaskMix& mix);

}  // namespace gpusched::core::sharing
