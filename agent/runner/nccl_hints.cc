#include "agent/runner/nccl_hints.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/runner/gpu_lookup.h"

namespace gpusched::agent {
namespace {

constexpr absl::string_view kRdmaPrefixes[] = {
    "mlx4_", "mlx5_", "ib",    "roce", "hfi1_",  "qib",    "efa_",       "bnxt_re", "irdma", "i40iw",
    "qedr",  "erdma", "mana_", "hns_", "cxgb4_", "ocrdma", "vmw_pvrdma", "rxe",     "siw",   "ionic",
};

void AddUnique(std::vector<int>& to, const std::vector<int>& from) {
  for (int nic : from) {
    if (std::find(to.begin(), to.end(), nic) == to.end()) to.push_back(nic);
  }
}

}  // namespace

std::vector<int> NicsNearGpus(const topology::NodeTopology& topo, const std::vector<int>& gpu_indices) {
  std::vector<int> near;
  std::vector<int> far;  // NICs that are closest to some GPU, but only across the CPU interconnect
  for (int index : gpu_indices) {
    std::optional<int> gpu = GpuPosition(topo, index);
    if (!gpu) continue;
    std::vector<int> closest;
    for (int nic : topo.NicsClosestTo(*gpu)) {
      if (!topo.nics()[nic].device.empty()) closest.push_back(nic);
    }
    if (closest.empty()) continue;
    const bool sys_only = topo.GpuNicLink(*gpu, closest.front()).kind == topology::LinkKind::kSys;
    AddUnique(sys_only ? far : near, closest);
  }
  return near.empty() ? far : near;
}

bool IsRdmaDevice(absl::string_view device) {
  return std::any_of(std::begin(kRdmaPrefixes), std::end(kRdmaPrefixes),
                     [device](absl::string_view prefix) { return absl::StartsWith(device, prefix); });
}

std::map<std::string, std::string> NcclNetworkEnv(const topology::NodeTopology& topo,
                                                  const std::vector<int>& gpu_indices) {
  std::vector<std::string> rdma;
  std::vector<std::string> netdevs;
  for (int nic : NicsNearGpus(topo, gpu_indices)) {
    const std::string& device = topo.nics()[nic].device;
    (IsRdmaDevice(device) ? rdma : netdevs).push_back(device);
  }
  // With RDMA at hand the Ethernet ports are left alone: NCCL_SOCKET_IFNAME
  // also picks NCCL's bootstrap interface, which the node's default route
  // serves better than a GPU-side data port.
  if (!rdma.empty()) return {{"NCCL_IB_HCA", absl::StrCat("=", absl::StrJoin(rdma, ","))}};
  if (!netdevs.empty()) return {{"NCCL_SOCKET_IFNAME", absl::StrCat("=", absl::StrJoin(netdevs, ","))}};
  return {};
}

}  // namespace gpusched::agent
