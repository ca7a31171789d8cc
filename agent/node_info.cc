#include "agent/node_info.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "agent/host_info.h"
#include "common/convert/topology_proto.h"
#include "common/defaults.h"

namespace gpusched::agent {
namespace {

std::string Label(const AgentOptions& options, const char* key) {
  auto it = options.labels.find(key);
  return it == options.labels.end() ? "" : it->second;
}

// "<cluster uuid>/<clique>" when every GPU is in the same multi-node NVLink
// clique; GPUs of one node in different cliques would be a broken fabric,
// which is no domain to schedule by.
std::string FabricDomain(const topology::NodeTopology& topo) {
  std::string domain;
  for (const topology::GpuInfo& gpu : topo.gpus()) {
    if (gpu.fabric_cluster_uuid.empty() || gpu.fabric_clique_id < 0) return "";
    std::string mine = absl::StrCat(gpu.fabric_cluster_uuid, "/", gpu.fabric_clique_id);
    if (!domain.empty() && mine != domain) return "";
    domain = mine;
  }
  return domain;
}

}  // namespace

v1::NodeInfo DescribeNode(const AgentOptions& options, const DiscoveredTopology& discovered) {
  topology::NodeTopology topo = discovered.topology;
  topology::NetworkLocation& net = topo.network();
  net.rack = Label(options, kRackLabel);
  net.leaf = Label(options, kLeafLabel);
  net.spine = Label(options, kSpineLabel);
  net.nvlink_domain = Label(options, kNvlinkDomainLabel);
  if (net.nvlink_domain.empty()) net.nvlink_domain = FabricDomain(topo);

  v1::NodeInfo node;
  convert::TopologyToProto(topo, &node);
  node.mutable_topology()->set_source(discovered.source);
  node.set_name(options.node_name);
  node.set_address(options.advertise_address);

  int64_t numa_cpus = 0;
  int64_t numa_memory_mb = 0;
  for (const topology::NumaNode& numa : topo.numa_nodes()) {
    numa_cpus += static_cast<int64_t>(numa.cpus.size());
    numa_memory_mb += numa.memory_mb;
  }
  // NUMA CPU lists from topo -m name only the CPUs near GPUs, so only a
  // source that knows memory too (hwloc) is trusted for the totals.
  bool numa_complete = numa_memory_mb > 0;
  if (options.cpus > 0) {
    node.set_cpus(options.cpus);
  } else {
    node.set_cpus(numa_complete && numa_cpus > 0 ? numa_cpus : DetectCpus());
  }
  if (options.memory_mb > 0) {
    node.set_memory_mb(options.memory_mb);
  } else {
    node.set_memory_mb(numa_complete ? numa_memory_mb : DetectMemoryMb());
  }
  for (v1::GpuInfo& gpu : *node.mutable_gpus()) {
    auto mode = options.gpu_share_modes.find(gpu.index());
    // A GPU in MIG mode is its instances (CUDA sees nothing else of it),
    // unless the operator says otherwise for it (StartGpuSharing refuses that).
    const v1::GpuShareMode fallback = gpu.mig_enabled() ? v1::GPU_SHARE_MODE_MIG : options.gpu_share_mode;
    gpu.set_share_mode(mode == options.gpu_share_modes.end() ? fallback : mode->second);
  }
  for (const auto& [key, value] : options.labels) (*node.mutable_labels())[key] = value;
  node.set_agent_version(kVersion);
  return node;
}

}  // namespace gpusched::agent
