#pragma once

#include "agent/agent.h"
#include "agent/topology_discovery.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::agent {

// Labels that place the node in the cluster network; they fill
// NodeTopology.network, which the placement engine reads.
inline constexpr char kRackLabel[] = "rack";
inline constexpr char kLeafLabel[] = "leaf";
inline constexpr char kSpineLabel[] = "spine";
inline constexpr char kNvlinkDomainLabel[] = "nvlink-domain";

// The node as it registers: the discovered topology, overridden by what the
// operator configured, with the host's own numbers for whatever is still
// unset. The NVLink domain comes from the label, else from the GPUs' fabric
// clique when all of them report the same one. `options` must already carry
// the resolved node name and advertise address.
v1::NodeInfo DescribeNode(const AgentOptions& options, const DiscoveredTopology& discovered);

}  // namespace gpusched::agent
