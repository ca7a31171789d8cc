#include "cli/node_detail.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/time/time.h"
#include "cli/format.h"
#include "cli/node_table.h"
#include "cli/sizes.h"
#include "cli/table.h"
#include "common/convert/topology_proto.h"
#include "common/proto_time.h"
#include "common/share_mode_name.h"
#include "common/topology/cpu_list.h"
#include "common/topology/nvidia_smi_topo_format.h"

namespace gpusched::cli {
namespace {

std::string OrUnknown(const std::string& value) { return value.empty() ? "-" : value; }

std::string NumaWord(int numa) { return numa < 0 ? "-" : absl::StrCat(numa); }

void AppendField(std::string& out, const char* name, const std::string& value) {
  // Values line up in column 14, like `scontrol show node`'s readers expect
  // of a key: value listing.
  size_t width = std::string(name).size() + 1;
  absl::StrAppend(&out, name, ":", std::string(width < 14 ? 14 - width : 1, ' '), value, "\n");
}

std::string Network(const v1::NetworkLocation& net) {
  std::vector<std::string> parts;
  if (!net.rack().empty()) parts.push_back(absl::StrCat("rack ", net.rack()));
  if (!net.leaf().empty()) parts.push_back(absl::StrCat("leaf ", net.leaf()));
  if (!net.spine().empty()) parts.push_back(absl::StrCat("spine ", net.spine()));
  if (!net.nvlink_domain().empty()) parts.push_back(absl::StrCat("NVLink domain ", net.nvlink_domain()));
  return parts.empty() ? "unknown (no rack/leaf/spine/nvlink-domain labels)" : absl::StrJoin(parts, ", ");
}

// "off", "on" (no instances), or the instances' profiles: "3g.40gb,3g.40gb".
std::string MigWord(const v1::GpuInfo& gpu) {
  if (!gpu.mig_enabled()) return "off";
  if (gpu.mig_instances().empty()) return "on";
  std::vector<std::string> profiles;
  for (const v1::MigInstance& mig : gpu.mig_instances()) profiles.push_back(mig.profile());
  return absl::StrJoin(profiles, ",");
}

// "job 12", "jobs 3 (30%), 4 (30%); 40% and 32G free", "MIG 5,-", or "-".
std::string HeldBy(const v1::Node& node, int position) {
  if (position >= node.gpu_holders_size()) return "-";
  const v1::GpuHolders& holders = node.gpu_holders(position);
  if (holders.job_id() != 0) return absl::StrCat("job ", holders.job_id());
  if (holders.mig_holders_size() > 0) {
    std::vector<std::string> each;
    for (uint64_t job : holders.mig_holders()) each.push_back(job == 0 ? "-" : absl::StrCat(job));
    return absl::StrCat("MIG ", absl::StrJoin(each, ","));
  }
  if (holders.shares().empty()) return "-";
  const std::string user = holders.mps_user().empty() ? "" : absl::StrCat(" as ", holders.mps_user());
  std::vector<std::string> jobs;
  int used = 0;
  for (const v1::GpuShareHolder& share : holders.shares()) {
    jobs.push_back(absl::StrCat(share.job_id(), " (", share.milli() / 10.0, "%)"));
    used += share.milli();
  }
  const int64_t memory = node.info().gpus(position).memory_mb();
  return absl::StrCat(jobs.size() == 1 ? "job " : "jobs ", absl::StrJoin(jobs, ", "), user, "; ",
                      std::max(0, 1000 - used) / 10.0, "% and ",
                      FormatSizeMb(std::max<int64_t>(0, memory - holders.shared_mem_mb())), " free");
}

std::string GpuTable(const v1::Node& node) {
  const v1::NodeInfo& info = node.info();
  Table table({"GPU", "MODEL", "MEMORY", "PCI", "NUMA", "CC", "PCIE", "MIG", "SHARING", "HELD BY", "UUID"});
  for (int position = 0; position < info.gpus_size(); ++position) {
    const v1::GpuInfo& gpu = info.gpus(position);
    table.AddRow({absl::StrCat(gpu.index()), absl::StrReplaceAll(gpu.model(), {{" ", "-"}}),
                  gpu.memory_mb() > 0 ? FormatSizeMb(gpu.memory_mb()) : "", gpu.pci_bus_id(), NumaWord(gpu.numa_node()),
                  gpu.compute_capability() > 0
                      ? absl::StrCat(gpu.compute_capability() / 10, ".", gpu.compute_capability() % 10)
                      : "",
                  gpu.pcie_generation() > 0 ? absl::StrCat("gen", gpu.pcie_generation(), "x", gpu.pcie_width()) : "",
                  MigWord(gpu), std::string(ShareModeName(gpu.share_mode())), HeldBy(node, position), gpu.uuid()});
  }
  return table.ToString();
}

std::string NicTable(const v1::NodeTopology& topo) {
  Table table({"NIC", "DEVICE", "PCI", "NUMA", "SPEED"});
  for (int k = 0; k < topo.nics_size(); ++k) {
    // Titled by position, as in the matrix below; the device is the name the
    // operator knows (NCCL_IB_HCA takes it).
    const v1::NicInfo& nic = topo.nics(k);
    table.AddRow({absl::StrCat("NIC", k), nic.device().empty() ? nic.name() : nic.device(), nic.pci_bus_id(),
                  NumaWord(nic.numa_node()),
                  nic.link_speed_gbps() > 0 ? absl::StrCat(nic.link_speed_gbps(), "Gb/s") : ""});
  }
  return table.ToString();
}

}  // namespace

std::string RenderLinkCalibration(const v1::Node& node) {
  if (!node.info().has_probe()) return "";
  const v1::NodeProbe& probe = node.info().probe();
  std::string out;
  const std::string when = IsSet(probe.time()) ? FormatTimestamp(probe.time(), absl::LocalTimeZone()) : "-";
  if (!probe.unavailable().empty()) {
    AppendField(out, "Calibration", absl::StrCat("none (", probe.unavailable(), "), ", when));
    return out;
  }
  AppendField(
      out, "Calibration",
      absl::StrCat(
          when, probe.nccl_version().empty() ? "" : absl::StrCat(", NCCL ", probe.nccl_version()),
          probe.all_gpus_busbw_gbps() > 0 ? absl::StrFormat(", all GPUs %.1f GB/s", probe.all_gpus_busbw_gbps()) : ""));
  if (!probe.error().empty()) AppendField(out, "Probe error", probe.error());
  if (probe.pairs_size() == 0) return out;
  Table table({"GPUS", "LINK", "MEASURED", "ESTIMATE", "RATIO"});
  for (const v1::GpuPairBandwidth& pair : probe.pairs()) {
    table.AddRow(
        {absl::StrCat(pair.gpu_a(), "-", pair.gpu_b()), pair.link(), absl::StrFormat("%.1f GB/s", pair.busbw_gbps()),
         absl::StrFormat("%.1f GB/s", pair.estimated_gbps()),
         pair.estimated_gbps() > 0 ? absl::StrFormat("%.0f%%", 100 * pair.busbw_gbps() / pair.estimated_gbps()) : "-"});
  }
  absl::StrAppend(&out, table.ToString());
  return out;
}

std::string RenderNodeDetail(const v1::Node& node) {
  const v1::NodeInfo& info = node.info();
  const v1::NodeTopology& topo = info.topology();
  std::string out;
  AppendField(out, "Node", info.name());
  const std::string why = NodeReasonText(node);
  AppendField(out, "State", why.empty() ? NodeStateText(node) : absl::StrCat(NodeStateText(node), " (", why, ")"));
  AppendField(out, "Address", OrUnknown(info.address()));
  AppendField(out, "Agent", OrUnknown(info.agent_version()));
  AppendField(out, "GPUs",
              absl::StrCat(node.gpus_free(), " free of ", info.gpus_size(),
                           topo.source().empty() ? "" : absl::StrCat(" (from ", topo.source(), ")")));
  AppendField(out, "CPUs", absl::StrCat(node.cpus_free(), " free of ", info.cpus()));
  const v1::ContainerSupport& containers = info.containers();
  AppendField(
      out, "Containers",
      containers.runtime().empty()
          ? std::string("no (no container runtime on this node)")
          : absl::StrCat(
                containers.runtime(), "; registries: ",
                containers.registries().empty() ? "any" : absl::StrJoin(containers.registries(), ", "), "; mounts: ",
                containers.mount_sources().empty() ? "none" : absl::StrJoin(containers.mount_sources(), ", ")));
  AppendField(out, "Memory",
              absl::StrCat(FormatSizeMb(node.mem_free_mb()), " free of ", FormatSizeMb(info.memory_mb())));
  AppendField(out, "Network", Network(topo.network()));
  AppendField(out, "NVSwitch", topo.nvswitch() ? "yes" : "no");
  const std::vector<std::string> labels = SortedLabels(info);
  AppendField(out, "Labels", labels.empty() ? "-" : absl::StrJoin(labels, ", "));
  AppendField(out, "Running jobs", node.running_jobs().empty() ? "-" : absl::StrJoin(node.running_jobs(), ", "));
  for (const v1::NumaNodeInfo& numa : topo.numa_nodes()) {
    AppendField(out, absl::StrCat("NUMA ", numa.id()).c_str(),
                absl::StrCat("CPUs ", topology::FormatCpuList({numa.cpus().begin(), numa.cpus().end()}),
                             numa.memory_mb() > 0 ? absl::StrCat(", ", FormatSizeMb(numa.memory_mb())) : ""));
  }
  if (info.gpus_size() > 0) absl::StrAppend(&out, "\n", GpuTable(node));
  if (topo.nics_size() > 0) absl::StrAppend(&out, "\n", NicTable(topo));
  if (info.has_probe()) absl::StrAppend(&out, "\n", RenderLinkCalibration(node));
  if (info.gpus_size() > 0) {
    auto model = convert::TopologyFromProto(info);
    if (model.ok()) {
      absl::StrAppend(&out, "\n", topology::FormatNvidiaSmiTopo(*model));
    } else {
      absl::StrAppend(&out, "\n(topology not shown: ", model.status().message(), ")\n");
    }
  }
  return out;
}

}  // namespace gpusched::cli
