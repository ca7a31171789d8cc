#pragma once

#include "agent/agent.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::agent {

// The node as it registers: the source's discovery, overridden by what the
// operator configured, with the host's own numbers for whatever is still unset.
// `options` must already carry the resolved node name and advertise address.
v1::NodeInfo DescribeNode(const AgentOptions& options, v1::NodeInfo discovered);

}  // namespace gpusched::agent
