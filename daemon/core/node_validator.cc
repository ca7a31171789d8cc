#include "daemon/core/node_validator.h"

#include "absl/strings/str_cat.h"
#include "common/convert/topology_proto.h"

namespace gpusched::core {

absl::Status ValidateNodeInfo(const v1::NodeInfo& node) {
  if (node.name().empty()) return absl::InvalidArgumentError("node.name is empty");
  if (node.cpus() < 0) return absl::InvalidArgumentError(absl::StrCat("node.cpus is negative: ", node.cpus()));
  if (node.memory_mb() < 0) {
    return absl::InvalidArgumentError(absl::StrCat("node.memory_mb is negative: ", node.memory_mb()));
  }
  for (int i = 0; i < node.gpus_size(); ++i) {
    if (node.gpus(i).memory_mb() < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("node.gpus[", i, "].memory_mb is negative: ", node.gpus(i).memory_mb()));
    }
  }
  absl::Status topology = convert::TopologyFromProto(node).status();
  if (!topology.ok()) return absl::InvalidArgumentError(absl::StrCat("node.", topology.message()));
  return absl::OkStatus();
}

}  // namespace gpusched::core
