#include "common/topology/nvidia_smi_topo_format.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/topology/cpu_list.h"
#include "common/topology/link_kind.h"

namespace gpusched::topology {
namespace {

// The tool pads the self cell so that the X sits under the column title.
constexpr char kSelfCell[] = " X ";
constexpr char kUnknown[] = "N/A";

constexpr const char* kLegend[] = {
    "  X    = Self",
    "  SYS  = PCIe plus the SMP interconnect between NUMA nodes (QPI/UPI/xGMI)",
    "  NODE = PCIe plus the interconnect between PCIe host bridges within a NUMA node",
    "  PHB  = PCIe plus a PCIe host bridge (typically the CPU)",
    "  PXB  = multiple PCIe bridges, without the PCIe host bridge",
    "  PIX  = at most a single PCIe bridge",
    "  NV#  = a bonded set of # NVLinks",
};

std::string LinkCell(const Link& link) { return link.kind == LinkKind::kSelf ? kSelfCell : FormatLink(link); }

}  // namespace

std::string FormatNvidiaSmiTopo(const NodeTopology& topo) {
  const int gpus = topo.num_gpus();
  const int nics = topo.num_nics();
  std::vector<std::string> titles;
  for (int g = 0; g < gpus; ++g) titles.push_back(absl::StrCat("GPU", g));
  for (int n = 0; n < nics; ++n) titles.push_back(absl::StrCat("NIC", n));

  std::string out = absl::StrCat("\t", absl::StrJoin(titles, "\t"), "\tCPU Affinity\tNUMA Affinity\n");
  for (int g = 0; g < gpus; ++g) {
    std::vector<std::string> row = {titles[g]};
    for (int j = 0; j < gpus; ++j) row.push_back(LinkCell(topo.GpuLink(g, j)));
    for (int n = 0; n < nics; ++n) row.push_back(LinkCell(topo.GpuNicLink(g, n)));
    const GpuInfo& gpu = topo.gpus()[g];
    row.push_back(gpu.cpu_affinity.empty() ? kUnknown : FormatCpuList(gpu.cpu_affinity));
    row.push_back(gpu.numa_node < 0 ? kUnknown : absl::StrCat(gpu.numa_node));
    absl::StrAppend(&out, absl::StrJoin(row, "\t"), "\n");
  }
  for (int n = 0; n < nics; ++n) {
    std::vector<std::string> row = {titles[gpus + n]};
    for (int g = 0; g < gpus; ++g) row.push_back(LinkCell(topo.GpuNicLink(g, n)));
    for (int m = 0; m < nics; ++m) row.push_back(LinkCell(topo.NicLink(n, m)));
    absl::StrAppend(&out, absl::StrJoin(row, "\t"), "\n");
  }

  absl::StrAppend(&out, "\nLegend:\n\n");
  for (const char* line : kLegend) absl::StrAppend(&out, line, "\n");

  std::string nic_legend;
  for (int n = 0; n < nics; ++n) {
    const std::string& device = topo.nics()[n].device;
    if (!device.empty()) absl::StrAppend(&nic_legend, "  ", titles[gpus + n], ": ", device, "\n");
  }
  if (!nic_legend.empty()) absl::StrAppend(&out, "\nNIC Legend:\n\n", nic_legend);
  return out;
}

}  // namespace gpusched::topology
