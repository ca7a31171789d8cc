#include "agent/node_info.h"

#include <utility>

#include "agent/host_info.h"
#include "common/defaults.h"

namespace gpusched::agent {

v1::NodeInfo DescribeNode(const AgentOptions& options, v1::NodeInfo discovered) {
  v1::NodeInfo node = std::move(discovered);
  node.set_name(options.node_name);
  node.set_address(options.advertise_address);
  if (options.cpus > 0) {
    node.set_cpus(options.cpus);
  } else if (node.cpus() <= 0) {
    node.set_cpus(DetectCpus());
  }
  if (options.memory_mb > 0) {
    node.set_memory_mb(options.memory_mb);
  } else if (node.memory_mb() <= 0) {
    node.set_memory_mb(DetectMemoryMb());
  }
  for (const auto& [key, value] : options.labels) (*node.mutable_labels())[key] = value;
  node.set_agent_version(kVersion);
  return node;
}

}  // namespace gpusched::agent
