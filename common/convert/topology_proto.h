#pragma once

#include "absl/status/statusor.h"
#include "common/topology/node_topology.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::convert {

// Writes `topo` into `node`: its GPUs replace node->gpus, the rest goes to
// node->topology (whose `source` is left as it was).
void TopologyToProto(const topology::NodeTopology& topo, v1::NodeInfo* node);

// The model back from what an agent sent. Matrices may be absent (an agent
// that knows nothing about the wiring: every pair reads as SYS) but not
// half-sized; links must be of a known kind, the diagonal self and nothing
// else self; GPU indices unique and non-negative. InvalidArgument names the
// offending field and entry.
absl::StatusOr<topology::NodeTopology> TopologyFromProto(const v1::NodeInfo& node);

}  // namespace gpusched::convert
