#pragma once

#include <optional>
#include <string>
#include <vector>

#include "agent/gpu/pci_address.h"

namespace gpusched::agent {

// What NVML says is at the far end of one active NVLink.
enum class NvLinkPeer { kGpu, kSwitch, kOther, kUnknown };

struct NvLinkEnd {
  NvLinkPeer peer = NvLinkPeer::kUnknown;
  // The far end's PCI address; nullopt when NVML gave none that parses (some
  // NVSwitch generations report no usable address).
  std::optional<PciAddress> remote;
};

// One GPU's active NVLinks, as read from NVML.
struct GpuNvLinks {
  std::optional<PciAddress> address;
  std::vector<NvLinkEnd> links;
  // Which multi-node NVLink partition the GPU belongs to ("<cluster>/<clique>")
  // or empty when the driver reports none; GPUs in different partitions share
  // switches but cannot talk through them.
  std::string fabric;
};

// How many NVLinks join each pair of GPUs, and whether they go through NVSwitch.
struct NvLinkMatrix {
  int num_gpus = 0;
  std::vector<int> links;  // row-major num_gpus x num_gpus; 0 on the diagonal
  bool nvswitch = false;   // some GPU has an active link to a switch

  int at(int i, int j) const { return links[static_cast<size_t>(i) * num_gpus + j]; }
};

// Point-to-point links count towards the pair whose address is at the far
// end (a link of unknown type counts too when its far end is a GPU of this
// node, which is how drivers without nvmlDeviceGetNvLinkRemoteDeviceType look).
// Through NVSwitch every GPU reaches every other GPU on the same switches with
// all of its switch links, so such a pair gets the smaller of the two GPUs'
// switch-link counts: NV18 on HGX H100, and symmetric even when one GPU has a
// link down. Two GPUs are on the same switches when their switch addresses
// overlap, or either GPU's switches have no address, and their fabric
// partitions agree.
NvLinkMatrix BuildNvLinkMatrix(const std::vector<GpuNvLinks>& gpus);

}  // namespace gpusched::agent
