#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "agent/agent.h"
#include "common/topology/node_topology.h"

namespace gpusched::agent {

struct DiscoveredTopology {
  topology::NodeTopology topology;
  std::string source;  // "nvml", "file:<path>", "fake", "host" (hwloc only, no GPUs)
  // Why kAuto settled for less than NVML, for the log; empty otherwise.
  std::string fallback_reason;
};

// Runs the TopologySource that `options` ask for. kAuto never fails for want
// of a driver: without NVML the node registers its host (NUMA nodes, NICs)
// with no GPUs and runs CPU jobs, and fallback_reason says why. An explicit
// source that fails is an error.
absl::StatusOr<DiscoveredTopology> DiscoverTopology(const AgentOptions& options);

}  // namespace gpusched::agent
