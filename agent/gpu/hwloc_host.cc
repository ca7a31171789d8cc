#include "agent/gpu/hwloc_host.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <tuple>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "agent/gpu/libhwloc.h"
#include "agent/gpu/nic_link_speed.h"

namespace gpusched::agent {

struct HwlocHost::Impl {
  const Libhwloc* hw = nullptr;
  hwloc_topology_t topology = nullptr;
  HostOptions options;

  ~Impl() {
    if (topology != nullptr) hw->hwloc_topology_destroy(topology);
  }

  // hwloc_get_next_obj_by_type (hwloc/inlines.h) on the loaded library:
  // the objects of `type` in order, the first when `prev` is null.
  hwloc_obj_t Next(hwloc_obj_type_t type, hwloc_obj_t prev) const {
    if (prev != nullptr) return prev->type == type ? prev->next_cousin : nullptr;
    const int depth = hw->hwloc_get_type_depth(topology, type);
    if (depth == HWLOC_TYPE_DEPTH_UNKNOWN || depth == HWLOC_TYPE_DEPTH_MULTIPLE) return nullptr;
    return hw->hwloc_get_obj_by_depth(topology, depth, 0);
  }

  hwloc_obj_t FindPci(const PciAddress& a) const {
    for (hwloc_obj_t obj = Next(HWLOC_OBJ_PCI_DEVICE, nullptr); obj != nullptr; obj = Next(HWLOC_OBJ_PCI_DEVICE, obj)) {
      const auto& pci = obj->attr->pcidev;
      if (pci.domain == a.domain && pci.bus == a.bus && pci.dev == a.device && pci.func == a.function) return obj;
    }
    return nullptr;
  }
};

namespace {

std::vector<int> ToList(const Libhwloc& hw, hwloc_const_bitmap_t set) {
  std::vector<int> ids;
  if (set == nullptr) return ids;
  int id = hw.hwloc_bitmap_first(set);
  while (id >= 0) {
    ids.push_back(id);
    id = hw.hwloc_bitmap_next(set, id);
  }
  return ids;
}

// I/O objects have no CPU set; the first ancestor with one is where the
// device is attached (a package, a group, or the whole machine).
hwloc_obj_t Locality(hwloc_obj_t obj) {
  while (obj != nullptr && obj->cpuset == nullptr) obj = obj->parent;
  return obj;
}

bool IsHostBridge(hwloc_obj_t obj) {
  return obj->type == HWLOC_OBJ_BRIDGE && obj->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST;
}

// Bridges strictly between `obj` and its ancestor `top`.
int BridgesBetween(hwloc_obj_t obj, hwloc_obj_t top) {
  int bridges = 0;
  for (hwloc_obj_t p = obj->parent; p != nullptr && p != top; p = p->parent) {
    if (p->type == HWLOC_OBJ_BRIDGE) ++bridges;
  }
  return bridges;
}

// hwloc_get_common_ancestor_obj compares depths, which I/O objects do not
// have in a usable form, so walk the parent chains instead.
hwloc_obj_t CommonAncestor(hwloc_obj_t a, hwloc_obj_t b) {
  std::vector<hwloc_obj_t> up;
  for (hwloc_obj_t p = a; p != nullptr; p = p->parent) up.push_back(p);
  for (hwloc_obj_t p = b; p != nullptr; p = p->parent) {
    if (std::find(up.begin(), up.end(), p) != up.end()) return p;
  }
  return nullptr;
}

// "mlx5_10" -> {"mlx5_", 10}: device names compare by prefix, then number.
std::pair<std::string, long> NameKey(const std::string& name) {
  size_t digits = name.size();
  while (digits > 0 && absl::ascii_isdigit(static_cast<unsigned char>(name[digits - 1]))) --digits;
  long number = -1;
  if (digits < name.size() && name.size() - digits < 10) absl::SimpleAtoi(name.substr(digits), &number);
  return {name.substr(0, digits), number};
}

struct NicCandidate {
  std::string rdma;  // OpenFabrics device, e.g. mlx5_0
  std::string net;   // network interface, e.g. ib0 / ens1f0np0
};

}  // namespace

HwlocHost::HwlocHost(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HwlocHost::~HwlocHost() = default;

absl::StatusOr<std::unique_ptr<HwlocHost>> HwlocHost::Load(const HostOptions& options) {
  auto hw = LoadLibhwloc();
  if (!hw.ok()) return hw.status();
  auto impl = std::make_unique<Impl>();
  impl->hw = *hw;
  impl->options = options;
  if ((*hw)->hwloc_topology_init(&impl->topology) != 0) {
    impl->topology = nullptr;
    return absl::InternalError(absl::StrCat("hwloc_topology_init: ", std::strerror(errno)));
  }
  // I/O discovery is off by default. "Important" keeps GPUs, NICs and the
  // bridges above them, which is all the PCIe classes need.
  (*hw)->hwloc_topology_set_io_types_filter(impl->topology, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  if (!options.hwloc_xml_path.empty() &&
      (*hw)->hwloc_topology_set_xml(impl->topology, options.hwloc_xml_path.c_str()) != 0) {
    return absl::InternalError(absl::StrCat("hwloc cannot read ", options.hwloc_xml_path, ": ", std::strerror(errno)));
  }
  if (options.hwloc_xml_path.empty() && !options.hwloc_synthetic.empty() &&
      (*hw)->hwloc_topology_set_synthetic(impl->topology, options.hwloc_synthetic.c_str()) != 0) {
    return absl::InvalidArgumentError(absl::StrCat("bad hwloc synthetic topology \"", options.hwloc_synthetic, "\""));
  }
  if ((*hw)->hwloc_topology_load(impl->topology) != 0) {
    return absl::InternalError(
        absl::StrCat("hwloc_topology_load",
                     options.hwloc_xml_path.empty() ? std::string() : absl::StrCat(" (", options.hwloc_xml_path, ")"),
                     ": ", std::strerror(errno)));
  }
  return std::unique_ptr<HwlocHost>(new HwlocHost(std::move(impl)));
}

std::vector<topology::NumaNode> HwlocHost::NumaNodes() const {
  std::vector<topology::NumaNode> nodes;
  for (hwloc_obj_t obj = impl_->Next(HWLOC_OBJ_NUMANODE, nullptr); obj != nullptr;
       obj = impl_->Next(HWLOC_OBJ_NUMANODE, obj)) {
    topology::NumaNode node;
    node.id = static_cast<int>(obj->os_index);
    node.cpus = ToList(*impl_->hw, obj->cpuset);
    node.memory_mb = static_cast<int64_t>(obj->attr->numanode.local_memory / (1024 * 1024));
    nodes.push_back(std::move(node));
  }
  std::sort(nodes.begin(), nodes.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  return nodes;
}

std::vector<topology::NicInfo> HwlocHost::Nics() const {
  std::map<PciAddress, NicCandidate> by_function;
  for (hwloc_obj_t os = impl_->Next(HWLOC_OBJ_OS_DEVICE, nullptr); os != nullptr;
       os = impl_->Next(HWLOC_OBJ_OS_DEVICE, os)) {
    const hwloc_obj_osdev_type_t type = os->attr->osdev.type;
    if (type != HWLOC_OBJ_OSDEV_OPENFABRICS && type != HWLOC_OBJ_OSDEV_NETWORK) continue;
    if (os->name == nullptr || os->parent == nullptr || os->parent->type != HWLOC_OBJ_PCI_DEVICE) continue;
    const auto& pci = os->parent->attr->pcidev;
    NicCandidate& nic = by_function[PciAddress{pci.domain, pci.bus, pci.dev, pci.func}];
    std::string& slot = type == HWLOC_OBJ_OSDEV_OPENFABRICS ? nic.rdma : nic.net;
    // Several names on one function are rare (child interfaces); keep one
    // deterministically.
    if (slot.empty() || NameKey(os->name) < NameKey(slot)) slot = os->name;
  }

  // RDMA devices first: they are the NICs topo -m and NCCL list, so that
  // their NIC<k> names match nvidia-smi's on the same machine.
  using SortKey = std::tuple<bool, std::pair<std::string, long>, PciAddress>;
  std::vector<std::pair<SortKey, topology::NicInfo>> sorted;
  for (const auto& [address, candidate] : by_function) {
    topology::NicInfo nic;
    nic.device = candidate.rdma.empty() ? candidate.net : candidate.rdma;
    nic.pci_bus_id = FormatPciAddress(address);
    nic.numa_node = NumaNodeOf(address).value_or(-1);
    if (!candidate.rdma.empty()) nic.link_speed_gbps = RdmaLinkSpeedGbps(impl_->options.sysfs_root, candidate.rdma);
    if (nic.link_speed_gbps == 0 && !candidate.net.empty()) {
      nic.link_speed_gbps = NetLinkSpeedGbps(impl_->options.sysfs_root, candidate.net);
    }
    sorted.emplace_back(SortKey{candidate.rdma.empty(), NameKey(nic.device), address}, std::move(nic));
  }
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<topology::NicInfo> nics;
  for (auto& entry : sorted) nics.push_back(std::move(entry.second));
  for (size_t k = 0; k < nics.size(); ++k) nics[k].name = absl::StrCat("NIC", k);
  return nics;
}

std::optional<topology::Link> HwlocHost::PciLink(const PciAddress& a, const PciAddress& b) const {
  using topology::LinkKind;
  hwloc_obj_t da = impl_->FindPci(a);
  hwloc_obj_t db = impl_->FindPci(b);
  if (da == nullptr || db == nullptr) return std::nullopt;
  if (da == db) return topology::Link{LinkKind::kSelf, 0};
  hwloc_obj_t common = CommonAncestor(da, db);
  if (common == nullptr) return std::nullopt;
  if (common->type == HWLOC_OBJ_BRIDGE) {
    if (IsHostBridge(common)) return topology::Link{LinkKind::kPhb, 0};
    // A PCIe switch is an upstream-port bridge with a downstream-port bridge
    // per slot: two devices on one switch each have one bridge below the
    // common one.
    bool one_switch = BridgesBetween(da, common) <= 1 && BridgesBetween(db, common) <= 1;
    return topology::Link{one_switch ? LinkKind::kPix : LinkKind::kPxb, 0};
  }
  if (common->type == HWLOC_OBJ_PCI_DEVICE) return topology::Link{LinkKind::kPix, 0};
  // Different host bridges: the common ancestor is a CPU-side object.
  hwloc_obj_t where = Locality(common);
  bool one_node = where != nullptr && where->nodeset != nullptr && impl_->hw->hwloc_bitmap_weight(where->nodeset) <= 1;
  return topology::Link{one_node ? LinkKind::kNode : LinkKind::kSys, 0};
}

std::optional<int> HwlocHost::NumaNodeOf(const PciAddress& address) const {
  hwloc_obj_t dev = impl_->FindPci(address);
  hwloc_obj_t where = dev == nullptr ? nullptr : Locality(dev);
  if (where == nullptr || where->nodeset == nullptr || impl_->hw->hwloc_bitmap_weight(where->nodeset) != 1) {
    return std::nullopt;
  }
  return impl_->hw->hwloc_bitmap_first(where->nodeset);
}

std::vector<int> HwlocHost::CpusNear(const PciAddress& address) const {
  hwloc_obj_t dev = impl_->FindPci(address);
  hwloc_obj_t where = dev == nullptr ? nullptr : Locality(dev);
  return where == nullptr ? std::vector<int>() : ToList(*impl_->hw, where->cpuset);
}

}  // namespace gpusched::agent
