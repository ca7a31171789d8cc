#include "agent/gpu/assemble_topology.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/gpu/pci_address.h"

namespace gpusched::agent {
namespace {

using topology::Link;
using topology::LinkKind;

// The fabric all GPUs share, or empty when they do not all report the same.
std::string CommonFabric(const std::vector<topology::GpuInfo>& gpus) {
  if (gpus.empty() || gpus[0].fabric_cluster_uuid.empty()) return "";
  for (const topology::GpuInfo& g : gpus) {
    if (g.fabric_cluster_uuid != gpus[0].fabric_cluster_uuid || g.fabric_clique_id != gpus[0].fabric_clique_id) {
      return "";
    }
  }
  return absl::StrCat(gpus[0].fabric_cluster_uuid, "/", gpus[0].fabric_clique_id);
}

// The NUMA node whose CPUs include all of `cpus`, when exactly one does:
// for GPUs hwloc cannot place, NVML's CPU affinity is the next best witness.
int NodeHolding(const std::vector<topology::NumaNode>& nodes, const std::vector<int>& cpus) {
  if (cpus.empty()) return -1;
  int found = -1;
  for (const topology::NumaNode& node : nodes) {
    bool holds = std::all_of(cpus.begin(), cpus.end(),
                             [&](int cpu) { return std::binary_search(node.cpus.begin(), node.cpus.end(), cpu); });
    if (holds) {
      if (found >= 0) return -1;
      found = node.id;
    }
  }
  return found;
}

}  // namespace

topology::NodeTopology AssembleTopology(const NvmlGpus& nvml, const HwlocHost& host) {
  std::vector<topology::NicInfo> nics = host.Nics();
  const int num_gpus = nvml.num_gpus();
  const int num_nics = static_cast<int>(nics.size());
  topology::NodeTopology topo(num_gpus, num_nics);
  topo.numa_nodes() = host.NumaNodes();
  topo.nics() = nics;

  std::vector<std::optional<PciAddress>> gpu_at(num_gpus);
  for (int i = 0; i < num_gpus; ++i) {
    topology::GpuInfo gpu = nvml.gpus[i];
    gpu_at[i] = ParsePciAddress(gpu.pci_bus_id);
    if (gpu_at[i].has_value()) {
      if (auto node = host.NumaNodeOf(*gpu_at[i])) gpu.numa_node = *node;
      if (gpu.cpu_affinity.empty()) gpu.cpu_affinity = host.CpusNear(*gpu_at[i]);
    }
    if (gpu.numa_node < 0) gpu.numa_node = NodeHolding(topo.numa_nodes(), gpu.cpu_affinity);
    topo.gpus()[i] = std::move(gpu);
  }
  std::vector<std::optional<PciAddress>> nic_at(num_nics);
  for (int k = 0; k < num_nics; ++k) nic_at[k] = ParsePciAddress(nics[k].pci_bus_id);

  auto pci_link = [&](const std::optional<PciAddress>& a, const std::optional<PciAddress>& b) {
    return a.has_value() && b.has_value() ? host.PciLink(*a, *b) : std::nullopt;
  };

  for (int i = 0; i < num_gpus; ++i) {
    for (int j = 0; j < num_gpus; ++j) {
      if (i == j) continue;
      std::optional<Link> link = nvml.link(i, j);
      if (!link.has_value()) link = pci_link(gpu_at[i], gpu_at[j]);
      topo.SetGpuLink(i, j, link.value_or(Link{LinkKind::kSys, 0}));
      topo.SetGpuP2p(i, j, nvml.p2p_status(i, j));
    }
    for (int k = 0; k < num_nics; ++k) {
      std::optional<Link> link = pci_link(gpu_at[i], nic_at[k]);
      if (!link.has_value()) {
        int gpu_node = topo.gpus()[i].numa_node;
        bool same_node = gpu_node >= 0 && gpu_node == nics[k].numa_node;
        link = Link{same_node ? LinkKind::kNode : LinkKind::kSys, 0};
      }
      topo.SetGpuNicLink(i, k, *link);
    }
  }
  for (int a = 0; a < num_nics; ++a) {
    for (int b = 0; b < num_nics; ++b) {
      if (a != b) topo.SetNicLink(a, b, pci_link(nic_at[a], nic_at[b]).value_or(Link{LinkKind::kSys, 0}));
    }
  }

  topo.set_nvswitch(nvml.nvswitch);
  topo.network().nvlink_domain = CommonFabric(topo.gpus());
  return topo;
}

}  // namespace gpusched::agent
