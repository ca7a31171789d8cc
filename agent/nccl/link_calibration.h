#pragma once

#include "agent/nccl/bandwidth_probe.h"
#include "common/topology/node_topology.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::agent {

// Calibrates a node's links with the NCCL probe: an all-reduce over every
// pair of its GPUs, then over all of them, each next to the topology's
// estimate. A probe error ends it with NodeProbe.error naming the GPUs; a
// node with fewer than two GPUs gets NodeProbe.unavailable. `time` is left
// for the caller.
v1::NodeProbe CalibrateLinks(BandwidthProbe& probe, const topology::NodeTopology& topology);

}  // namespace gpusched::agent
