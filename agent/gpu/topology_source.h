#pragma once

#include "absl/status/statusor.h"
#include "common/topology/node_topology.h"

namespace gpusched::agent {

// Where a node's GPUs and their wiring come from: NVML (plus hwloc) on real
// hardware, a saved `nvidia-smi topo -m` file or N fake GPUs in tests and
// `gpuschedd dev`. Whatever the source, the same model comes out; the agent
// adds name, address, labels and host CPU/memory figures on top.
class TopologySource {
 public:
  virtual ~TopologySource() = default;
  virtual absl::StatusOr<topology::NodeTopology> Discover() = 0;
};

}  // namespace gpusched::agent
