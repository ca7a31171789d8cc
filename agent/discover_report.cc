#include "agent/discover_report.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/convert/topology_proto.h"
#include "common/topology/cpu_list.h"
#include "common/topology/nccl_topo_xml.h"
#include "common/topology/nvidia_smi_topo_format.h"
#include "google/protobuf/util/json_util.h"

namespace gpusched::agent {
namespace {

std::string Text(const v1::NodeInfo& node, const topology::NodeTopology& topo) {
  std::string out = absl::StrCat("node ", node.name(), ": ", node.gpus_size(), " GPUs (source ",
                                 node.topology().source(), "), ", node.topology().nics_size(), " NICs, ", node.cpus(),
                                 " CPUs, ", node.memory_mb(), " MB, NVSwitch ", topo.nvswitch() ? "yes" : "no", "\n");
  for (const topology::GpuInfo& g : topo.gpus()) {
    absl::StrAppend(&out, "GPU", g.index, ": ", g.model, ", ", g.memory_mb, " MB, ", g.uuid, ", pci ", g.pci_bus_id,
                    ", numa ", g.numa_node, ", cc ", g.compute_capability, ", pcie gen", g.pcie_generation, " x",
                    g.pcie_width, ", mig ", g.mig_enabled ? "on" : "off");
    if (!g.fabric_cluster_uuid.empty()) {
      absl::StrAppend(&out, ", fabric ", g.fabric_cluster_uuid, " clique ", g.fabric_clique_id);
    }
    absl::StrAppend(&out, "\n");
    for (const topology::MigDevice& m : g.mig_devices) {
      absl::StrAppend(&out, "  MIG ", m.index, ": ", m.profile, ", ", m.memory_mb, " MB, ", m.slices, " slices, ",
                      m.uuid, ", gi ", m.gpu_instance_id, " ci ", m.compute_instance_id, "\n");
    }
  }
  for (int k = 0; k < topo.num_nics(); ++k) {
    const topology::NicInfo& n = topo.nics()[k];
    absl::StrAppend(&out, "NIC", k, ": ", n.device.empty() ? n.name : n.device, ", pci ", n.pci_bus_id, ", numa ",
                    n.numa_node, ", ", n.link_speed_gbps, " Gb/s\n");
  }
  for (const topology::NumaNode& numa : topo.numa_nodes()) {
    absl::StrAppend(&out, "NUMA ", numa.id, ": CPUs ", topology::FormatCpuList(numa.cpus), ", ", numa.memory_mb,
                    " MB\n");
  }
  absl::StrAppend(&out, "\n", topology::FormatNvidiaSmiTopo(topo));
  return out;
}

}  // namespace

std::string DiscoverReport(const v1::NodeInfo& node, DiscoverFormat format) {
  if (format == DiscoverFormat::kJson) {
    std::string json;
    google::protobuf::util::JsonPrintOptions options;
    options.add_whitespace = true;
    options.always_print_primitive_fields = true;
    (void)google::protobuf::util::MessageToJsonString(node, &json, options);
    return json;
  }
  // The agent built `node` from a model, so converting back cannot fail; an
  // empty model would only hide the GPUs, never crash.
  auto topo = convert::TopologyFromProto(node);
  topology::NodeTopology model = topo.ok() ? *std::move(topo) : topology::NodeTopology();
  if (format == DiscoverFormat::kNcclXml) return topology::WriteNcclTopoXml(model);
  return Text(node, model);
}

}  // namespace gpusched::agent
