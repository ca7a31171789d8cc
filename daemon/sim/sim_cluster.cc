#include "daemon/sim/sim_cluster.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/gpu/topology_file_source.h"
#include "common/convert/topology_proto.h"
#include "daemon/core/node_validator.h"
#include "daemon/sim/fixtures.h"

namespace gpusched::sim {
namespace {

absl::StatusOr<v1::NodeInfo> DescribeNode(const std::string& name, const NodeTypeSpec& type, const std::string& text,
                                          const NetworkTopologyConf& network) {
  agent::TopologyFileOptions options;
  options.path = type.topology;
  options.text = text;
  options.node_name = name;
  options.gpu_model = type.gpu_model;
  options.gpu_memory_mb = type.gpu_memory_mb;
  auto topo = agent::TopologyFileSource(options).Discover();
  if (!topo.ok()) return topo.status();
  if (type.nic_gbps > 0) {
    for (topology::NicInfo& nic : topo->nics()) nic.link_speed_gbps = type.nic_gbps;
  }
  if (auto located = network.Locate(name); located.has_value()) topo->network() = *located;
  v1::NodeInfo node;
  convert::TopologyToProto(*topo, &node);
  node.mutable_topology()->set_source(absl::StrCat("file:", type.topology));
  node.set_name(name);
  node.set_address(name);
  node.set_cpus(type.cpus);
  node.set_memory_mb(type.memory_mb);
  (*node.mutable_labels())["gpusched.sim/node-type"] = type.name;
  node.set_agent_version("simulated");
  if (absl::Status s = core::ValidateNodeInfo(node); !s.ok()) return s;
  return node;
}

}  // namespace

absl::StatusOr<SimCluster> BuildCluster(const ClusterSpec& spec, const std::string& base_dir) {
  SimCluster cluster;
  cluster.name = spec.name;
  std::map<std::string, const NodeTypeSpec*> types;
  std::map<std::string, std::string> texts;
  for (const NodeTypeSpec& type : spec.node_types) {
    types[type.name] = &type;
    auto text = LoadFixture(type.topology, base_dir);
    if (!text.ok()) {
      return absl::Status(text.status().code(), absl::StrCat("line ", type.line, ": ", text.status().message()));
    }
    texts[type.name] = *std::move(text);
  }
  std::map<std::string, int> count_by_type;
  for (const NodeGroupSpec& group : spec.node_groups) {
    const NodeTypeSpec& type = *types.at(group.type);
    for (const std::string& name : group.names) {
      auto node = DescribeNode(name, type, texts.at(type.name), spec.network);
      if (!node.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("line ", group.line, ": node ", name, " (type ", type.name, "): ", node.status().message()));
      }
      cluster.total_gpus += node->gpus_size();
      cluster.nodes.push_back(*std::move(node));
      ++count_by_type[type.name];
    }
  }
  std::vector<std::string> parts;
  for (const NodeTypeSpec& type : spec.node_types) {
    if (count_by_type[type.name] == 0) continue;
    parts.push_back(absl::StrCat(count_by_type[type.name], " x ", type.name, " (", type.topology, ")"));
  }
  int leaves = 0, tops = 0;
  for (const NetworkSwitch& sw : spec.network.switches()) {
    leaves += sw.nodes.empty() ? 0 : 1;
    tops += sw.parent.empty() && sw.nodes.empty() ? 1 : 0;
  }
  cluster.summary = absl::StrCat(cluster.nodes.size(), " nodes, ", cluster.total_gpus,
                                 " GPUs: ", absl::StrJoin(parts, ", "), "; ", leaves, " leaf switches, ", tops,
                                 " spine switches, ", spec.network.blocks().size(), " NVLink domains");
  return cluster;
}

}  // namespace gpusched::sim
