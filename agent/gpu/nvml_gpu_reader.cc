#include "agent/gpu/nvml_gpu_reader.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agent/gpu/nvlink_matrix.h"
#include "agent/gpu/nvml_mig_reader.h"
#include "agent/gpu/pci_address.h"
#include "common/topology/cpu_list.h"

namespace gpusched::agent {
namespace {

using nvml::NVML_SUCCESS;
using nvml::nvmlDevice_t;

// Far above any real node; keeps a corrupt count from allocating gigabytes.
constexpr unsigned kMaxGpus = 1024;

std::string ForGpu(absl::string_view call, int index) { return absl::StrCat(call, " (GPU ", index, ")"); }

// NVML fills a caller's buffer; never trust it to be terminated.
std::string FromBuffer(const char* data, size_t size) { return std::string(data, strnlen(data, size)); }

std::optional<PciAddress> AddressOf(const nvml::nvmlPciInfo_t& pci) {
  if (auto parsed = ParsePciAddress(FromBuffer(pci.busId, sizeof pci.busId))) return parsed;
  return ParsePciAddress(FromBuffer(pci.busIdLegacy, sizeof pci.busIdLegacy));
}

std::string FormatFabricUuid(const unsigned char (&uuid)[nvml::kFabricUuidLen]) {
  std::string out;
  for (unsigned i = 0; i < nvml::kFabricUuidLen; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    absl::StrAppendFormat(&out, "%02x", uuid[i]);
  }
  return out;
}

// The fields NVML may not know; each is left at its "unknown" value when the
// driver lacks the call or the GPU does not support it.
void ReadOptional(const NvmlApi& api, nvmlDevice_t h, topology::GpuInfo& gpu) {
  if (api.cpu_affinity != nullptr) {
    constexpr unsigned kBits = 8 * sizeof(unsigned long);
    std::vector<unsigned long> mask((topology::kMaxCpuId + 1) / kBits, 0);
    if (api.cpu_affinity(h, static_cast<unsigned>(mask.size()), mask.data()) == NVML_SUCCESS) {
      for (size_t word = 0; word < mask.size(); ++word) {
        for (unsigned bit = 0; bit < kBits; ++bit) {
          if (mask[word] & (1UL << bit)) gpu.cpu_affinity.push_back(static_cast<int>(word * kBits + bit));
        }
      }
    }
  }
  unsigned current = 0, pending = 0;
  if (api.mig_mode != nullptr && api.mig_mode(h, &current, &pending) == NVML_SUCCESS) {
    gpu.mig_enabled = current == nvml::NVML_DEVICE_MIG_ENABLE;
  }
  if (gpu.mig_enabled) gpu.mig_devices = ReadMigDevices(api, h);
  int major = 0, minor = 0;
  if (api.compute_capability != nullptr && api.compute_capability(h, &major, &minor) == NVML_SUCCESS) {
    gpu.compute_capability = major * 10 + minor;
  }
  // An idle GPU drops its link to a lower generation to save power, so the
  // current generation says little; the maximum is what the GPU and the slot
  // together can do. Lanes do not change at idle, and the current width shows
  // a GPU in a narrower slot than it could use.
  unsigned value = 0;
  for (auto* fn : {api.max_pcie_generation, api.curr_pcie_generation}) {
    if (fn != nullptr && fn(h, &value) == NVML_SUCCESS && value > 0) {
      gpu.pcie_generation = static_cast<int>(value);
      break;
    }
  }
  for (auto* fn : {api.curr_pcie_width, api.max_pcie_width}) {
    if (fn != nullptr && fn(h, &value) == NVML_SUCCESS && value > 0) {
      gpu.pcie_width = static_cast<int>(value);
      break;
    }
  }
  nvml::nvmlGpuFabricInfo_t fabric{};
  if (api.fabric_info != nullptr && api.fabric_info(h, &fabric) == NVML_SUCCESS &&
      fabric.state == nvml::NVML_GPU_FABRIC_STATE_COMPLETED && fabric.status == NVML_SUCCESS &&
      std::any_of(std::begin(fabric.clusterUuid), std::end(fabric.clusterUuid),
                  [](unsigned char b) { return b != 0; })) {
    gpu.fabric_cluster_uuid = FormatFabricUuid(fabric.clusterUuid);
    gpu.fabric_clique_id = static_cast<int>(fabric.cliqueId);
  }
}

absl::StatusOr<topology::GpuInfo> ReadGpu(const NvmlLibrary& nvml, nvmlDevice_t h, int index,
                                          std::optional<PciAddress>& address) {
  const NvmlApi& api = nvml.api();
  topology::GpuInfo gpu;
  gpu.index = index;

  std::array<char, nvml::kUuidBufferSize> uuid{};
  absl::Status s = nvml.Check(api.uuid(h, uuid.data(), uuid.size()), ForGpu("nvmlDeviceGetUUID", index));
  if (!s.ok()) return s;
  gpu.uuid = FromBuffer(uuid.data(), uuid.size());

  std::array<char, nvml::kNameBufferSize> name{};
  s = nvml.Check(api.name(h, name.data(), name.size()), ForGpu("nvmlDeviceGetName", index));
  if (!s.ok()) return s;
  gpu.model = FromBuffer(name.data(), name.size());

  nvml::nvmlMemory_t memory{};
  s = nvml.Check(api.memory_info(h, &memory), ForGpu("nvmlDeviceGetMemoryInfo", index));
  if (!s.ok()) return s;
  gpu.memory_mb = static_cast<int64_t>(memory.total / (1024 * 1024));  // MiB, as nvidia-smi shows

  nvml::nvmlPciInfo_t pci{};
  s = nvml.Check(api.pci_info(h, &pci), ForGpu("nvmlDeviceGetPciInfo_v3", index));
  if (!s.ok()) return s;
  address = AddressOf(pci);
  if (!address.has_value()) {
    return absl::InternalError(absl::StrCat(ForGpu("nvmlDeviceGetPciInfo_v3", index), ": unreadable PCI bus id"));
  }
  gpu.pci_bus_id = FormatPciAddress(*address);

  ReadOptional(api, h, gpu);
  return gpu;
}

NvLinkPeer PeerOf(nvml::nvmlIntNvLinkDeviceType_t type) {
  switch (type) {
    case nvml::NVML_NVLINK_DEVICE_TYPE_GPU: return NvLinkPeer::kGpu;
    case nvml::NVML_NVLINK_DEVICE_TYPE_SWITCH: return NvLinkPeer::kSwitch;
    case nvml::NVML_NVLINK_DEVICE_TYPE_UNKNOWN: return NvLinkPeer::kUnknown;
    default: return NvLinkPeer::kOther;
  }
}

std::vector<NvLinkEnd> ReadNvLinks(const NvmlApi& api, nvmlDevice_t h) {
  std::vector<NvLinkEnd> ends;
  if (api.nvlink_state == nullptr) return ends;
  // Links past a GPU's own count answer NOT_SUPPORTED or INVALID_ARGUMENT,
  // as do all links of a GPU without NVLink; either way, no link.
  for (unsigned link = 0; link < nvml::kNvLinkMaxLinks; ++link) {
    nvml::nvmlEnableState_t active = nvml::NVML_FEATURE_DISABLED;
    if (api.nvlink_state(h, link, &active) != NVML_SUCCESS || active != nvml::NVML_FEATURE_ENABLED) continue;
    NvLinkEnd end;
    nvml::nvmlPciInfo_t remote{};
    if (api.nvlink_remote_pci != nullptr && api.nvlink_remote_pci(h, link, &remote) == NVML_SUCCESS) {
      end.remote = AddressOf(remote);
    }
    nvml::nvmlIntNvLinkDeviceType_t type = nvml::NVML_NVLINK_DEVICE_TYPE_UNKNOWN;
    if (api.nvlink_remote_type != nullptr && api.nvlink_remote_type(h, link, &type) == NVML_SUCCESS) {
      end.peer = PeerOf(type);
    }
    ends.push_back(end);
  }
  return ends;
}

std::optional<topology::Link> PcieClass(nvml::nvmlGpuTopologyLevel_t level) {
  using topology::LinkKind;
  switch (level) {
    case nvml::NVML_TOPOLOGY_INTERNAL:  // two GPUs on one board
    case nvml::NVML_TOPOLOGY_SINGLE: return topology::Link{LinkKind::kPix, 0};
    case nvml::NVML_TOPOLOGY_MULTIPLE: return topology::Link{LinkKind::kPxb, 0};
    case nvml::NVML_TOPOLOGY_HOSTBRIDGE: return topology::Link{LinkKind::kPhb, 0};
    case nvml::NVML_TOPOLOGY_NODE: return topology::Link{LinkKind::kNode, 0};
    case nvml::NVML_TOPOLOGY_SYSTEM: return topology::Link{LinkKind::kSys, 0};
    default: return std::nullopt;
  }
}

topology::P2pStatus ReadP2p(const NvmlApi& api, nvmlDevice_t a, nvmlDevice_t b) {
  nvml::nvmlGpuP2PStatus_t status = nvml::NVML_P2P_STATUS_NOT_SUPPORTED;
  if (api.p2p_status == nullptr || api.p2p_status(a, b, nvml::NVML_P2P_CAPS_INDEX_READ, &status) != NVML_SUCCESS) {
    return topology::P2pStatus::kUnknown;
  }
  return status == nvml::NVML_P2P_STATUS_OK ? topology::P2pStatus::kOk : topology::P2pStatus::kNotSupported;
}

}  // namespace

absl::StatusOr<NvmlGpus> ReadNvmlGpus(const NvmlLibrary& nvml) {
  const NvmlApi& api = nvml.api();
  unsigned count = 0;
  absl::Status s = nvml.Check(api.device_count(&count), "nvmlDeviceGetCount_v2");
  if (!s.ok()) return s;
  if (count > kMaxGpus) {
    return absl::InternalError(absl::StrCat("nvmlDeviceGetCount_v2: implausible GPU count ", count));
  }
  const int n = static_cast<int>(count);

  NvmlGpus out;
  std::vector<nvmlDevice_t> handles(n, nullptr);
  std::vector<GpuNvLinks> nvlinks(n);
  for (int i = 0; i < n; ++i) {
    s = nvml.Check(api.handle_by_index(static_cast<unsigned>(i), &handles[i]),
                   ForGpu("nvmlDeviceGetHandleByIndex_v2", i));
    if (!s.ok()) return s;
    auto gpu = ReadGpu(nvml, handles[i], i, nvlinks[i].address);
    if (!gpu.ok()) return gpu.status();
    out.gpus.push_back(*std::move(gpu));
    nvlinks[i].links = ReadNvLinks(api, handles[i]);
    const topology::GpuInfo& g = out.gpus.back();
    if (!g.fabric_cluster_uuid.empty())
      nvlinks[i].fabric = absl::StrCat(g.fabric_cluster_uuid, "/", g.fabric_clique_id);
  }

  NvLinkMatrix matrix = BuildNvLinkMatrix(nvlinks);
  out.nvswitch = matrix.nvswitch;
  out.links.assign(static_cast<size_t>(n) * n, std::nullopt);
  out.p2p.assign(static_cast<size_t>(n) * n, topology::P2pStatus::kUnknown);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      std::optional<topology::Link>& link = out.links[static_cast<size_t>(i) * n + j];
      if (i == j) {
        link = topology::Link{topology::LinkKind::kSelf, 0};
        continue;
      }
      out.p2p[static_cast<size_t>(i) * n + j] = ReadP2p(api, handles[i], handles[j]);
      if (matrix.at(i, j) > 0) {
        link = topology::Link{topology::LinkKind::kNvLink, matrix.at(i, j)};
        continue;
      }
      nvml::nvmlGpuTopologyLevel_t level = 0;
      if (api.common_ancestor != nullptr && api.common_ancestor(handles[i], handles[j], &level) == NVML_SUCCESS) {
        link = PcieClass(level);
      }
    }
  }
  return out;
}

}  // namespace gpusched::agent
