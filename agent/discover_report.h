#pragma once

#include <string>

#include "gpusched/v1/types.pb.h"

namespace gpusched::agent {

enum class DiscoverFormat { kText, kJson, kNcclXml };

// What `gpusched-agent --discover` prints: the node exactly as it would
// register, as a readable report (GPUs, NICs, NUMA nodes, then the link
// matrix as `nvidia-smi topo -m` draws it, to hold next to the real one),
// as the NodeInfo in JSON, or as an NCCL topology XML file.
std::string DiscoverReport(const v1::NodeInfo& node, DiscoverFormat format);

}  // namespace gpusched::agent
