#include "common/topology/nccl_topo_xml.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/topology/cpu_mask.h"
#include "common/topology/pci_bus_id.h"
#include "common/topology/pcie_tree.h"
#include "common/topology/xml_element.h"

namespace gpusched::topology {
namespace {

// Placeholder domains (see PlaceholderPciBusId): one per kind of device so
// that a placeholder says what it stands for.
constexpr uint16_t kBridgeDomain = 0xffff;
constexpr uint16_t kGpuDomain = 0xfffe;
constexpr uint16_t kNicDomain = 0xfffd;
constexpr uint16_t kNvSwitchDomain = 0xfffc;

constexpr char kBridgeClass[] = "0x060400";
constexpr char kGpuClass[] = "0x030200";
constexpr char kNvSwitchClass[] = "0x068000";
constexpr char kInfinibandClass[] = "0x020700";
constexpr char kEthernetClass[] = "0x020000";

// The longest attribute value NCCL's reader takes (its buffer is 255 bytes,
// and the closing quote and terminator take two).
constexpr size_t kNcclMaxValueLength = 253;

struct PcieLink {
  int generation = 0;  // 0: unknown
  int width = 0;       // 0: unknown
};

// NCCL matches link_speed by prefix against the strings Linux has printed in
// max_link_speed; the short form is the one NCCL has known longest.
std::optional<std::string> LinkSpeedText(int generation) {
  switch (generation) {
    case 1: return "2.5 GT/s";
    case 2: return "5 GT/s";
    case 3: return "8 GT/s";
    case 4: return "16 GT/s";
    case 5: return "32 GT/s";
    case 6: return "64.0 GT/s PCIe";
    default: return std::nullopt;
  }
}

void SetLink(const PcieLink& link, XmlElement* pci) {
  if (std::optional<std::string> speed = LinkSpeedText(link.generation)) {
    pci->Set("link_speed", *speed);
  }
  if (link.width > 0) pci->Set("link_width", absl::StrCat(link.width));
}

class Writer {
 public:
  explicit Writer(const NodeTopology& topo) : topo_(topo) { AssignBusIds(); }

  std::string Write() {
    std::vector<CpuDomain> domains = SynthesizePcieTree(topo_);
    const std::optional<int> mask_words = AffinityMaskWords(domains);
    XmlElement system("system");
    system.Set("version", "1");
    for (const CpuDomain& d : domains) {
      XmlElement& cpu = system.AddChild("cpu");
      cpu.Set("numaid", absl::StrCat(d.numa_id));
      if (mask_words.has_value() && !d.cpus.empty()) {
        cpu.Set("affinity", FormatCpuMask(d.cpus, *mask_words));
      }
      for (const PcieNode& n : d.children) AddPcie(n, &cpu);
    }
    return SerializeXml(system);
  }

 private:
  // Real bus ids first, so that a placeholder never displaces one.
  void AssignBusIds() {
    std::set<std::string> taken;
    auto pick = [&](const std::string& own, uint16_t domain, int n) {
      std::optional<std::string> id = NormalizePciBusId(own);
      if (!id.has_value() || !taken.insert(*id).second) {
        id = PlaceholderPciBusId(domain, n);
      }
      return *id;
    };
    for (int g = 0; g < topo_.num_gpus(); ++g) {
      gpu_bus_.push_back(pick(topo_.gpus()[g].pci_bus_id, kGpuDomain, g));
    }
    for (int n = 0; n < topo_.num_nics(); ++n) {
      nic_bus_.push_back(pick(topo_.nics()[n].pci_bus_id, kNicDomain, n));
    }
  }

  // The width of every affinity mask, or nullopt when the masks would be too
  // long for NCCL to read.
  static std::optional<int> AffinityMaskWords(const std::vector<CpuDomain>& domains) {
    int max_cpu = -1;
    for (const CpuDomain& d : domains) {
      if (!d.cpus.empty()) max_cpu = std::max(max_cpu, d.cpus.back());
    }
    const int words = CpuMaskWords(max_cpu);
    if (static_cast<size_t>(words) * 9 - 1 > kNcclMaxValueLength) return std::nullopt;
    return words;
  }

  // The fastest device link below `node` (highest generation, then widest).
  PcieLink FastestLink(const PcieNode& node) const {
    if (!node.is_bridge()) {
      if (node.device->kind != DeviceRef::Kind::kGpu) return {};
      const GpuInfo& gpu = topo_.gpus()[node.device->index];
      return {gpu.pcie_generation, gpu.pcie_width};
    }
    PcieLink best;
    for (const PcieNode& child : node.children) {
      PcieLink l = FastestLink(child);
      if (std::tie(l.generation, l.width) > std::tie(best.generation, best.width)) best = l;
    }
    return best;
  }

  void AddPcie(const PcieNode& node, XmlElement* parent) {
    XmlElement& pci = parent->AddChild("pci");
    if (node.is_bridge()) {
      pci.Set("busid", PlaceholderPciBusId(kBridgeDomain, ++bridges_));
      pci.Set("class", kBridgeClass);
      SetLink(FastestLink(node), &pci);
      for (const PcieNode& child : node.children) AddPcie(child, &pci);
    } else if (node.device->kind == DeviceRef::Kind::kGpu) {
      AddGpu(node.device->index, &pci);
    } else {
      AddNic(node.device->index, &pci);
    }
  }

  void AddGpu(int g, XmlElement* pci) {
    const GpuInfo& info = topo_.gpus()[g];
    pci->Set("busid", gpu_bus_[g]).Set("class", kGpuClass);
    SetLink({info.pcie_generation, info.pcie_width}, pci);
    XmlElement& gpu = pci->AddChild("gpu");
    gpu.Set("dev", absl::StrCat(info.index));
    if (info.compute_capability > 0) gpu.Set("sm", absl::StrCat(info.compute_capability));
    gpu.Set("rank", absl::StrCat(g));
    if (topo_.nvswitch()) {
      int links = 0;
      for (int peer = 0; peer < topo_.num_gpus(); ++peer) {
        Link l = topo_.GpuLink(g, peer);
        if (l.kind == LinkKind::kNvLink) links = std::max(links, l.nvlinks);
      }
      if (links > 0) {
        gpu.AddChild("nvlink")
            .Set("target", PlaceholderPciBusId(kNvSwitchDomain, 0))
            .Set("count", absl::StrCat(links))
            .Set("tclass", kNvSwitchClass);
      }
      return;
    }
    for (int peer = 0; peer < topo_.num_gpus(); ++peer) {
      Link l = topo_.GpuLink(g, peer);
      if (peer == g || l.kind != LinkKind::kNvLink) continue;
      gpu.AddChild("nvlink")
          .Set("target", gpu_bus_[peer])
          .Set("count", absl::StrCat(l.nvlinks))
          .Set("tclass", kGpuClass);
    }
  }

  void AddNic(int n, XmlElement* pci) {
    const NicInfo& info = topo_.nics()[n];
    const std::string& name = info.device.empty() ? info.name : info.device;
    const bool infiniband = absl::StartsWith(name, "mlx") || absl::StartsWith(name, "ib");
    pci->Set("busid", nic_bus_[n]).Set("class", infiniband ? kInfinibandClass : kEthernetClass);
    XmlElement& net = pci->AddChild("nic").AddChild("net");
    net.Set("name", name).Set("dev", absl::StrCat(n));
    if (info.link_speed_gbps > 0) {
      net.Set("speed", absl::StrCat(int64_t{info.link_speed_gbps} * 1000));
    }
  }

  const NodeTopology& topo_;
  std::vector<std::string> gpu_bus_;
  std::vector<std::string> nic_bus_;
  int bridges_ = 0;
};

}  // namespace

std::string WriteNcclTopoXml(const NodeTopology& topo) { return Writer(topo).Write(); }

}  // namespace gpusched::topology
