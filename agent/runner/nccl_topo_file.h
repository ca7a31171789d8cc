#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "common/topology/node_topology.h"

namespace gpusched::agent {

// Writes the node as an NCCL topology file (WriteNcclTopoXml) to
// <dir>/nccl-topo.xml and returns that path. Written to a temporary file and
// renamed into place, so that a job starting while an agent restarts reads
// either the old file or the new one, never half of one. World-readable:
// jobs run as their submitters.
absl::StatusOr<std::string> WriteNcclTopoFile(const topology::NodeTopology& topo, const std::string& dir);

}  // namespace gpusched::agent
