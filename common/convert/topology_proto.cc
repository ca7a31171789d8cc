#include "common/convert/topology_proto.h"

#include <map>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace gpusched::convert {
namespace {

using topology::Link;
using topology::LinkKind;

v1::LinkKind KindToProto(LinkKind kind) {
  switch (kind) {
    case LinkKind::kSelf: return v1::LINK_KIND_SELF;
    case LinkKind::kNvLink: return v1::LINK_KIND_NVLINK;
    case LinkKind::kPix: return v1::LINK_KIND_PIX;
    case LinkKind::kPxb: return v1::LINK_KIND_PXB;
    case LinkKind::kPhb: return v1::LINK_KIND_PHB;
    case LinkKind::kNode: return v1::LINK_KIND_NODE;
    case LinkKind::kSys: return v1::LINK_KIND_SYS;
  }
  return v1::LINK_KIND_UNSPECIFIED;
}

absl::StatusOr<Link> LinkFromProto(const v1::Link& link, bool diagonal, const std::string& where) {
  Link out;
  switch (link.kind()) {
    case v1::LINK_KIND_SELF: out.kind = LinkKind::kSelf; break;
    case v1::LINK_KIND_NVLINK: out.kind = LinkKind::kNvLink; break;
    case v1::LINK_KIND_PIX: out.kind = LinkKind::kPix; break;
    case v1::LINK_KIND_PXB: out.kind = LinkKind::kPxb; break;
    case v1::LINK_KIND_PHB: out.kind = LinkKind::kPhb; break;
    case v1::LINK_KIND_NODE: out.kind = LinkKind::kNode; break;
    case v1::LINK_KIND_SYS: out.kind = LinkKind::kSys; break;
    default: return absl::InvalidArgumentError(absl::StrCat(where, " has unknown link kind ", link.kind()));
  }
  if (diagonal != (out.kind == LinkKind::kSelf)) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, diagonal ? " must be SELF (a device to itself)" : " is SELF between two devices"));
  }
  if (out.kind == LinkKind::kNvLink) {
    // The same bound as the topo -m parser: no GPU has more than 18 today.
    if (link.nvlinks() < 1 || link.nvlinks() > 64) {
      return absl::InvalidArgumentError(absl::StrCat(where, " is NVLink with ", link.nvlinks(), " links (want 1..64)"));
    }
    out.nvlinks = link.nvlinks();
  }
  return out;
}

// Reads an rows x cols matrix of links; absent means "unknown", left as SYS.
template <typename Set>
absl::Status ReadMatrix(const google::protobuf::RepeatedPtrField<v1::Link>& links, int rows, int cols, bool square,
                        const std::string& field, Set set) {
  if (links.empty()) return absl::OkStatus();
  if (links.size() != rows * cols) {
    return absl::InvalidArgumentError(absl::StrCat("topology.", field, " has ", links.size(), " entries, want ", rows,
                                                   "x", cols, " = ", rows * cols));
  }
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < cols; ++j) {
      auto link =
          LinkFromProto(links[i * cols + j], square && i == j, absl::StrCat("topology.", field, "[", i, "][", j, "]"));
      if (!link.ok()) return link.status();
      set(i, j, *link);
    }
  }
  return absl::OkStatus();
}

}  // namespace

void TopologyToProto(const topology::NodeTopology& topo, v1::NodeInfo* node) {
  node->clear_gpus();
  for (const topology::GpuInfo& g : topo.gpus()) {
    v1::GpuInfo* gpu = node->add_gpus();
    gpu->set_index(g.index);
    gpu->set_uuid(g.uuid);
    gpu->set_model(g.model);
    gpu->set_memory_mb(g.memory_mb);
    gpu->set_pci_bus_id(g.pci_bus_id);
    gpu->set_numa_node(g.numa_node);
    gpu->mutable_cpu_affinity()->Add(g.cpu_affinity.begin(), g.cpu_affinity.end());
    gpu->set_mig_enabled(g.mig_enabled);
    gpu->set_compute_capability(g.compute_capability);
    gpu->set_pcie_generation(g.pcie_generation);
    gpu->set_pcie_width(g.pcie_width);
    gpu->set_fabric_cluster_uuid(g.fabric_cluster_uuid);
    gpu->set_fabric_clique_id(g.fabric_clique_id);
    for (const topology::MigDevice& m : g.mig_devices) {
      v1::MigInstance& mig = *gpu->add_mig_instances();
      mig.set_index(m.index);
      mig.set_uuid(m.uuid);
      mig.set_profile(m.profile);
      mig.set_gpu_instance_id(m.gpu_instance_id);
      mig.set_compute_instance_id(m.compute_instance_id);
      mig.set_memory_mb(m.memory_mb);
      mig.set_slices(m.slices);
    }
  }
  v1::NodeTopology* out = node->mutable_topology();
  std::string source = out->source();
  out->Clear();
  out->set_source(source);
  for (const topology::NicInfo& n : topo.nics()) {
    v1::NicInfo* nic = out->add_nics();
    nic->set_name(n.name);
    nic->set_device(n.device);
    nic->set_pci_bus_id(n.pci_bus_id);
    nic->set_link_speed_gbps(n.link_speed_gbps);
    nic->set_numa_node(n.numa_node);
  }
  for (const topology::NumaNode& n : topo.numa_nodes()) {
    v1::NumaNodeInfo* numa = out->add_numa_nodes();
    numa->set_id(n.id);
    numa->mutable_cpus()->Add(n.cpus.begin(), n.cpus.end());
    numa->set_memory_mb(n.memory_mb);
  }
  auto add = [](google::protobuf::RepeatedPtrField<v1::Link>* links, const Link& link) {
    v1::Link* l = links->Add();
    l->set_kind(KindToProto(link.kind));
    l->set_nvlinks(link.nvlinks);
  };
  int gpus = topo.num_gpus();
  int nics = topo.num_nics();
  bool any_p2p = false;
  for (int i = 0; i < gpus; ++i) {
    for (int j = 0; j < gpus; ++j) {
      add(out->mutable_gpu_links(), topo.GpuLink(i, j));
      any_p2p = any_p2p || topo.GpuP2p(i, j) != topology::P2pStatus::kUnknown;
    }
    for (int k = 0; k < nics; ++k) add(out->mutable_gpu_nic_links(), topo.GpuNicLink(i, k));
  }
  for (int a = 0; a < nics; ++a) {
    for (int b = 0; b < nics; ++b) add(out->mutable_nic_links(), topo.NicLink(a, b));
  }
  if (any_p2p) {
    for (int i = 0; i < gpus; ++i) {
      for (int j = 0; j < gpus; ++j) {
        switch (topo.GpuP2p(i, j)) {
          case topology::P2pStatus::kUnknown: out->add_gpu_p2p(v1::P2P_STATUS_UNKNOWN); break;
          case topology::P2pStatus::kOk: out->add_gpu_p2p(v1::P2P_STATUS_OK); break;
          case topology::P2pStatus::kNotSupported: out->add_gpu_p2p(v1::P2P_STATUS_NOT_SUPPORTED); break;
        }
      }
    }
  }
  out->set_nvswitch(topo.nvswitch());
  v1::NetworkLocation* net = out->mutable_network();
  net->set_rack(topo.network().rack);
  net->set_leaf(topo.network().leaf);
  net->set_spine(topo.network().spine);
  net->set_nvlink_domain(topo.network().nvlink_domain);
}

absl::StatusOr<topology::NodeTopology> TopologyFromProto(const v1::NodeInfo& node) {
  const v1::NodeTopology& in = node.topology();
  int gpus = node.gpus_size();
  int nics = in.nics_size();
  topology::NodeTopology topo(gpus, nics);
  std::set<int> indices;
  for (int i = 0; i < gpus; ++i) {
    const v1::GpuInfo& g = node.gpus(i);
    if (g.index() < 0 || !indices.insert(g.index()).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("gpus[", i, "].index ", g.index(), g.index() < 0 ? " is negative" : " is repeated"));
    }
    topology::GpuInfo& gpu = topo.gpus()[i];
    gpu.index = g.index();
    gpu.uuid = g.uuid();
    gpu.model = g.model();
    gpu.memory_mb = g.memory_mb();
    gpu.pci_bus_id = g.pci_bus_id();
    gpu.numa_node = g.numa_node();
    gpu.cpu_affinity.assign(g.cpu_affinity().begin(), g.cpu_affinity().end());
    gpu.mig_enabled = g.mig_enabled();
    gpu.compute_capability = g.compute_capability();
    gpu.pcie_generation = g.pcie_generation();
    gpu.pcie_width = g.pcie_width();
    gpu.fabric_cluster_uuid = g.fabric_cluster_uuid();
    gpu.fabric_clique_id = g.fabric_clique_id();
    for (const v1::MigInstance& m : g.mig_instances()) {
      gpu.mig_devices.push_back(
          {m.index(), m.uuid(), m.profile(), m.gpu_instance_id(), m.compute_instance_id(), m.memory_mb(), m.slices()});
    }
  }
  for (int k = 0; k < nics; ++k) {
    const v1::NicInfo& n = in.nics(k);
    topology::NicInfo& nic = topo.nics()[k];
    nic.name = n.name();
    nic.device = n.device();
    nic.pci_bus_id = n.pci_bus_id();
    nic.link_speed_gbps = n.link_speed_gbps();
    nic.numa_node = n.numa_node();
  }
  for (const v1::NumaNodeInfo& n : in.numa_nodes()) {
    topo.numa_nodes().push_back({n.id(), {n.cpus().begin(), n.cpus().end()}, n.memory_mb()});
  }
  if (absl::Status s = ReadMatrix(in.gpu_links(), gpus, gpus, true, "gpu_links",
                                  [&](int i, int j, Link l) { topo.SetGpuLink(i, j, l); });
      !s.ok()) {
    return s;
  }
  if (absl::Status s = ReadMatrix(in.gpu_nic_links(), gpus, nics, false, "gpu_nic_links",
                                  [&](int i, int j, Link l) { topo.SetGpuNicLink(i, j, l); });
      !s.ok()) {
    return s;
  }
  if (absl::Status s = ReadMatrix(in.nic_links(), nics, nics, true, "nic_links",
                                  [&](int i, int j, Link l) { topo.SetNicLink(i, j, l); });
      !s.ok()) {
    return s;
  }
  if (!in.gpu_p2p().empty()) {
    if (in.gpu_p2p_size() != gpus * gpus) {
      return absl::InvalidArgumentError(absl::StrCat("topology.gpu_p2p has ", in.gpu_p2p_size(), " entries, want ",
                                                     gpus, "x", gpus, " = ", gpus * gpus));
    }
    for (int i = 0; i < gpus; ++i) {
      for (int j = 0; j < gpus; ++j) {
        int status = in.gpu_p2p(i * gpus + j);
        if (status == v1::P2P_STATUS_OK) topo.SetGpuP2p(i, j, topology::P2pStatus::kOk);
        if (status == v1::P2P_STATUS_NOT_SUPPORTED) topo.SetGpuP2p(i, j, topology::P2pStatus::kNotSupported);
      }
    }
  }
  topo.set_nvswitch(in.nvswitch());
  topo.network() = {in.network().rack(), in.network().leaf(), in.network().spine(), in.network().nvlink_domain()};
  // Measurements of GPUs the node no longer lists are stale, not errors.
  std::map<int, int> position;
  for (int i = 0; i < gpus; ++i) position[node.gpus(i).index()] = i;
  for (const v1::GpuPairBandwidth& pair : node.probe().pairs()) {
    auto a = position.find(pair.gpu_a());
    auto b = position.find(pair.gpu_b());
    if (a != position.end() && b != position.end() && pair.busbw_gbps() > 0) {
      topo.SetMeasuredGpuPairGBps(a->second, b->second, pair.busbw_gbps());
    }
  }
  return topo;
}

}  // namespace gpusched::convert
