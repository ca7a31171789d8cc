#pragma once

#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/gpu/nvml_library.h"
#include "common/topology/node_topology.h"

namespace gpusched::agent {

// What NVML alone says about a node's GPUs.
struct NvmlGpus {
  // index, uuid, pci_bus_id, model, memory_mb always; the rest where the
  // driver answers. numa_node stays -1: NVML's NUMA id is the GPU's own
  // memory node on coherent systems, not the node it is attached to, so the
  // caller takes it from hwloc.
  std::vector<topology::GpuInfo> gpus;
  // Row-major num_gpus x num_gpus: NV<n>, or the PCIe class NVML reports;
  // nullopt where NVML could not tell (the caller may ask hwloc). The
  // diagonal is self.
  std::vector<std::optional<topology::Link>> links;
  std::vector<topology::P2pStatus> p2p;  // row-major, kUnknown on the diagonal
  bool nvswitch = false;

  int num_gpus() const { return static_cast<int>(gpus.size()); }
  const std::optional<topology::Link>& link(int i, int j) const {
    return links[static_cast<size_t>(i) * gpus.size() + j];
  }
  topology::P2pStatus p2p_status(int i, int j) const { return p2p[static_cast<size_t>(i) * gpus.size() + j]; }
};

// Queries every GPU. Fails, naming the call and the GPU, when a required
// query fails (count, handle, UUID, name, memory, PCI info): a GPU that cannot
// say what it is must not be offered to jobs. Optional queries that fail or
// are missing from the driver leave their fields unknown.
absl::StatusOr<NvmlGpus> ReadNvmlGpus(const NvmlLibrary& nvml);

}  // namespace gpusched::agent
