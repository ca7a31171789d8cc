#include "daemon/sim/openb_cluster.h"

#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/convert/topology_proto.h"
#include "common/topology/node_topology.h"
#include "daemon/core/node_validator.h"

namespace gpusched::sim {
namespace {

// Each model's memory in MiB, from its maker's data sheet; 0 = unknown.
int64_t MemoryMibOf(const std::string& model) {
  static const std::map<std::string, int64_t> kMemory = {
      {"T4", 16384}, {"P100", 16384}, {"V100M16", 16384}, {"V100M32", 32768}, {"A10", 24576}};
  auto it = kMemory.find(model);
  return it == kMemory.end() ? 0 : it->second;
}

absl::StatusOr<v1::NodeInfo> Describe(const OpenbNode& n) {
  topology::NodeTopology topo(n.gpus, 0);
  for (int i = 0; i < n.gpus; ++i) {
    topology::GpuInfo& gpu = topo.gpus()[i];
    gpu.index = i;
    gpu.uuid = absl::StrCat("GPU-", n.name, "-", i);
    gpu.model = n.model;
    gpu.memory_mb = MemoryMibOf(n.model);
  }
  v1::NodeInfo node;
  convert::TopologyToProto(topo, &node);
  for (v1::GpuInfo& gpu : *node.mutable_gpus()) gpu.set_share_mode(v1::GPU_SHARE_MODE_TIMESLICE);
  node.mutable_topology()->set_source("openb node list");
  node.set_name(n.name);
  node.set_address(n.name);
  // Whole cores: the core counts CPUs in cores (jobs round theirs up).
  node.set_cpus(n.cpu_milli / 1000);
  node.set_memory_mb(n.memory_mib);
  (*node.mutable_labels())["gpusched.sim/node-type"] = n.model;
  node.set_agent_version("simulated");
  if (absl::Status s = core::ValidateNodeInfo(node); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("line ", n.line, ": node ", n.name, ": ", s.message()));
  }
  return node;
}

}  // namespace

absl::StatusOr<SimCluster> BuildOpenbCluster(const std::vector<OpenbNode>& nodes, const std::string& name) {
  SimCluster cluster;
  cluster.name = name;
  std::map<std::string, std::pair<int, int>> by_model;  // nodes, GPUs
  int without_gpus = 0;
  for (const OpenbNode& n : nodes) {
    if (n.gpus == 0) {
      ++without_gpus;
      continue;
    }
    auto node = Describe(n);
    if (!node.ok()) return node.status();
    cluster.total_gpus += n.gpus;
    cluster.nodes.push_back(*std::move(node));
    by_model[n.model].first += 1;
    by_model[n.model].second += n.gpus;
  }
  if (cluster.nodes.empty()) return absl::InvalidArgumentError("no node has a GPU");
  std::vector<std::string> parts;
  for (const auto& [model, counts] : by_model) {
    parts.push_back(absl::StrCat(counts.first, " ", model, " nodes (", counts.second, " GPUs)"));
  }
  cluster.summary = absl::StrCat(cluster.nodes.size(), " nodes, ", cluster.total_gpus,
                                 " GPUs: ", absl::StrJoin(parts, ", "), "; every GPU time-sliced, links unknown");
  if (without_gpus > 0) absl::StrAppend(&cluster.summary, "; ", without_gpus, " nodes without GPUs left out");
  return cluster;
}

bool LooksLikeOpenbNodeList(const std::string& text) { return absl::StartsWith(text, "sn,"); }

}  // namespace gpusched::sim
