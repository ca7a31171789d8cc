#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "daemon/sim/cluster_spec.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::sim {

// The nodes of a cluster spec as their agents would register them: GPUs and
// links from the fixture (read by the agent's own fixture source), the
// model, memory and CPUs the spec gives, and the leaf, spine and NVLink
// domain the spec's network puts each node under (what an agent reports
// from its labels).
struct SimCluster {
  std::string name;
  std::vector<v1::NodeInfo> nodes;  // in spec order
  int64_t total_gpus = 0;
  // One line for reports: "64 nodes, 512 GPUs (64 x h100: hgx-h200-8gpu-12nic.txt);
  // 8 leaf switches, 1 spine, 0 NVLink domains".
  std::string summary;
};

// `base_dir` resolves topology paths (the spec's folder). Errors name the
// node type's line or the node.
absl::StatusOr<SimCluster> BuildCluster(const ClusterSpec& spec, const std::string& base_dir);

}  // namespace gpusched::sim
