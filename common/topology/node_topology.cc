#include "common/topology/node_topology.h"

namespace gpusched::topology {
namespace {

constexpr Link kSysLink{LinkKind::kSys, 0};
constexpr Link kSelfLink{LinkKind::kSelf, 0};

bool InRange(int i, int n) { return i >= 0 && i < n; }

}  // namespace

NodeTopology::NodeTopology(int num_gpus, int num_nics) {
  if (num_gpus < 0) num_gpus = 0;
  if (num_nics < 0) num_nics = 0;
  gpus_.resize(num_gpus);
  for (int i = 0; i < num_gpus; ++i) gpus_[i].index = i;
  nics_.resize(num_nics);
  gpu_gpu_.assign(static_cast<size_t>(num_gpus) * num_gpus, kSysLink);
  gpu_nic_.assign(static_cast<size_t>(num_gpus) * num_nics, kSysLink);
  nic_nic_.assign(static_cast<size_t>(num_nics) * num_nics, kSysLink);
  gpu_p2p_.assign(static_cast<size_t>(num_gpus) * num_gpus, P2pStatus::kUnknown);
  for (int i = 0; i < num_gpus; ++i) gpu_gpu_[i * num_gpus + i] = kSelfLink;
  for (int i = 0; i < num_nics; ++i) nic_nic_[i * num_nics + i] = kSelfLink;
}

Link NodeTopology::GpuLink(int i, int j) const {
  int n = num_gpus();
  if (!InRange(i, n) || !InRange(j, n)) return kSysLink;
  return gpu_gpu_[i * n + j];
}

Link NodeTopology::GpuNicLink(int gpu, int nic) const {
  if (!InRange(gpu, num_gpus()) || !InRange(nic, num_nics())) return kSysLink;
  return gpu_nic_[gpu * num_nics() + nic];
}

Link NodeTopology::NicLink(int a, int b) const {
  int n = num_nics();
  if (!InRange(a, n) || !InRange(b, n)) return kSysLink;
  return nic_nic_[a * n + b];
}

void NodeTopology::SetGpuLink(int i, int j, Link link) {
  int n = num_gpus();
  if (InRange(i, n) && InRange(j, n)) gpu_gpu_[i * n + j] = link;
}

void NodeTopology::SetGpuNicLink(int gpu, int nic, Link link) {
  if (InRange(gpu, num_gpus()) && InRange(nic, num_nics())) {
    gpu_nic_[gpu * num_nics() + nic] = link;
  }
}

void NodeTopology::SetNicLink(int a, int b, Link link) {
  int n = num_nics();
  if (InRange(a, n) && InRange(b, n)) nic_nic_[a * n + b] = link;
}

P2pStatus NodeTopology::GpuP2p(int i, int j) const {
  int n = num_gpus();
  if (!InRange(i, n) || !InRange(j, n) || i == j) return P2pStatus::kUnknown;
  return gpu_p2p_[i * n + j];
}

void NodeTopology::SetGpuP2p(int i, int j, P2pStatus status) {
  int n = num_gpus();
  if (InRange(i, n) && InRange(j, n) && i != j) gpu_p2p_[i * n + j] = status;
}

double NodeTopology::MeasuredGpuPairGBps(int i, int j) const {
  const int n = num_gpus();
  if (gpu_measured_.empty() || !InRange(i, n) || !InRange(j, n)) return 0.0;
  return gpu_measured_[i * n + j];
}

void NodeTopology::SetMeasuredGpuPairGBps(int i, int j, double gbps) {
  const int n = num_gpus();
  if (!InRange(i, n) || !InRange(j, n) || i == j) return;
  if (gpu_measured_.empty()) gpu_measured_.assign(static_cast<size_t>(n) * n, 0.0);
  gpu_measured_[i * n + j] = gpu_measured_[j * n + i] = gbps;
}

std::vector<int> NodeTopology::NicsClosestTo(int gpu) const {
  std::vector<int> best;
  if (!InRange(gpu, num_gpus())) return best;
  int best_rank = -1;
  for (int nic = 0; nic < num_nics(); ++nic) {
    int rank = LinkRank(GpuNicLink(gpu, nic));
    if (rank > best_rank) {
      best_rank = rank;
      best.clear();
    }
    if (rank == best_rank) best.push_back(nic);
  }
  return best;
}

std::optional<int> NodeTopology::FindNic(absl::string_view name_or_device) const {
  for (int i = 0; i < num_nics(); ++i) {
    if (nics_[i].name == name_or_device || (!nics_[i].device.empty() && nics_[i].device == name_or_device)) {
      return i;
    }
  }
  return std::nullopt;
}

bool NodeTopology::LooksLikeNvSwitch() const {
  int n = num_gpus();
  if (n < 4) return false;
  int count = -1;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      if (i == j) continue;
      Link l = GpuLink(i, j);
      if (l.kind != LinkKind::kNvLink) return false;
      if (count == -1) count = l.nvlinks;
      if (l.nvlinks != count) return false;
    }
  }
  return true;
}

}  // namespace gpusched::topology
