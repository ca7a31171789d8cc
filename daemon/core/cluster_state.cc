#include "daemon/core/cluster_state.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/convert/topology_proto.h"
#include "common/share_mode_name.h"
#include "common/topology/link_bandwidth.h"
#include "daemon/core/placement/gpu_graph.h"

namespace gpusched::core {
namespace {

// Unique in the process, not just in one cluster: placement caches keyed by
// node name must not mistake another cluster's node for this one.
uint64_t NextGeneration() {
  static std::atomic<uint64_t> generations{0};
  return ++generations;
}

}  // namespace

ClusterState::ClusterState(const ClusterState& other)
    : nodes_(other.nodes_),
      shareable_gpus_(other.shareable_gpus_),
      topology_epoch_(other.topology_epoch_),
      fit_epoch_(other.fit_epoch_),
      network_names_(other.network_names_),
      network_ids_(other.network_ids_),
      gpu_kinds_(other.gpu_kinds_),
      gpu_kind_ids_(other.gpu_kind_ids_),
      gpu_graphs_(other.gpu_graphs_) {
  IndexNames();
  Reindex();
}

ClusterState& ClusterState::operator=(const ClusterState& other) {
  if (this == &other) return *this;
  nodes_ = other.nodes_;
  network_names_ = other.network_names_;
  network_ids_ = other.network_ids_;
  gpu_kinds_ = other.gpu_kinds_;
  gpu_kind_ids_ = other.gpu_kind_ids_;
  gpu_graphs_ = other.gpu_graphs_;
  topology_epoch_ = other.topology_epoch_;
  fit_epoch_ = other.fit_epoch_;
  shareable_gpus_ = other.shareable_gpus_;
  IndexNames();
  Reindex();
  return *this;
}

template <typename ChangeFn>
void ClusterState::Change(NodeSlot& slot, ChangeFn&& change) {
  change(slot);
  slot.free_mask = slot.CountFree();
  index_.Refresh(slot);
}

template <typename ChangeFn>
bool ClusterState::Change(const std::string& name, ChangeFn&& change) {
  NodeSlot* slot = SlotNamed(name);
  if (slot == nullptr) return false;
  Change(*slot, std::forward<ChangeFn>(change));
  return true;
}

void ClusterState::Reindex() { index_.Rebuild(nodes_); }

void ClusterState::IndexNames() {
  by_name_.clear();
  by_name_.reserve(nodes_.size());
  for (auto& [name, slot] : nodes_) by_name_.emplace(name, &slot);
}

NodeSlot* ClusterState::SlotNamed(absl::string_view name) {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

const NodeSlot* ClusterState::SlotNamed(absl::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

void ClusterState::UpsertNode(const v1::NodeInfo& info) {
  auto [named, is_new] = nodes_.try_emplace(info.name());
  NodeSlot& slot = named->second;
  if (is_new) by_name_.emplace(named->first, &slot);
  std::vector<uint64_t> owners(info.gpus_size(), 0);
  std::vector<GpuShares> shares(info.gpus_size());
  // Carry over holders of GPUs that the node still has (matched by index).
  for (int i = 0; i < info.gpus_size(); ++i) {
    int old = slot.PositionOf(info.gpus(i).index());
    if (old >= 0 && old < static_cast<int>(slot.gpu_owner.size())) {
      owners[i] = slot.gpu_owner[old];
      shares[i] = std::move(slot.gpu_shares[old]);
    }
  }
  slot.gpu_shares = std::move(shares);
  shareable_gpus_ -= std::popcount(slot.shareable_mask);
  slot.shareable_mask = 0;
  slot.mps_mask = 0;
  slot.mig_mask = 0;
  slot.runs_containers = !info.containers().runtime().empty();
  std::vector<std::vector<uint64_t>> mig_owner(info.gpus_size());
  for (int i = 0; i < info.gpus_size(); ++i) {
    const v1::GpuInfo& gpu = info.gpus(i);
    const uint64_t bit = i < 64 ? uint64_t{1} << i : 0;
    if (gpu.share_mode() == v1::GPU_SHARE_MODE_TIMESLICE || gpu.share_mode() == v1::GPU_SHARE_MODE_MPS) {
      slot.shareable_mask |= bit;
    }
    if (gpu.share_mode() == v1::GPU_SHARE_MODE_MPS) slot.mps_mask |= bit;
    if (gpu.share_mode() != v1::GPU_SHARE_MODE_MIG) {
      if (owners[i] == kMigGpuOwner) owners[i] = 0;
      continue;
    }
    // Holders carry over by instance UUID: a GPU partitioned anew keeps
    // only the instances that are still there.
    owners[i] = kMigGpuOwner;
    slot.mig_mask |= bit;
    const int old = slot.PositionOf(gpu.index());
    for (const v1::MigInstance& mig : gpu.mig_instances()) {
      uint64_t holder = 0;
      if (old >= 0 && old < static_cast<int>(slot.mig_owner.size())) {
        const v1::GpuInfo& before = slot.info.gpus(old);
        for (int k = 0; k < before.mig_instances_size() && k < static_cast<int>(slot.mig_owner[old].size()); ++k) {
          if (before.mig_instances(k).uuid() == mig.uuid()) holder = slot.mig_owner[old][k];
        }
      }
      mig_owner[i].push_back(holder);
    }
  }
  slot.mig_owner = std::move(mig_owner);
  shareable_gpus_ += std::popcount(slot.shareable_mask);
  slot.info = info;
  auto topo = convert::TopologyFromProto(info);
  slot.topology = topo.ok() ? *std::move(topo) : topology::NodeTopology(info.gpus_size(), 0);
  slot.gpu_owner = std::move(owners);
  slot.free_mask = slot.CountFree();
  slot.gpu_count = info.gpus_size();
  slot.cpus_total = info.cpus();
  slot.mem_total_mb = info.memory_mb();
  slot.gpus = GpuKind::Of(info);
  slot.gpu_kind = InternGpuKind(slot.gpus);
  slot.pair_gbps = topology::PlacementGpuPairMatrixGBps(slot.topology);
  const topology::NetworkLocation& net = slot.topology.network();
  slot.network_ids = {InternNetworkName(kNvlinkDomainTier, net.nvlink_domain), InternNetworkName(kLeafTier, net.leaf),
                      InternNetworkName(kSpineTier, net.spine)};
  slot.generation = NextGeneration();
  auto [graph, inserted] = gpu_graphs_.try_emplace(placement::GpuGraph::FromTopology(slot.topology).Fingerprint());
  if (inserted) graph->second = slot.generation;
  slot.gpu_graph = graph->second;
  topology_epoch_ = slot.generation;
  fit_epoch_ = slot.generation;
  if (is_new) {
    index_.Insert(nodes_, named);
  } else {
    index_.Refresh(slot);
  }
}

int ClusterState::InternGpuKind(GpuKind kind) {
  auto [it, inserted] = gpu_kind_ids_.emplace(kind, static_cast<int>(gpu_kinds_.size()));
  if (inserted) gpu_kinds_.push_back(std::move(kind));
  return it->second;
}

int ClusterState::InternNetworkName(NetworkTier tier, const std::string& name) {
  if (name.empty()) return -1;
  auto [it, inserted] = network_ids_[tier].emplace(name, static_cast<int>(network_names_[tier].size()));
  if (inserted) network_names_[tier].push_back(name);
  return it->second;
}

const std::string& ClusterState::NetworkName(NetworkTier tier, int id) const {
  static const std::string* const kUnknown = new std::string();
  if (id < 0 || id >= static_cast<int>(network_names_[tier].size())) return *kUnknown;
  return network_names_[tier][id];
}

void ClusterState::SetState(const std::string& name, v1::NodeState state, const std::string& reason) {
  Change(name, [&](NodeSlot& slot) {
    slot.state = state;
    slot.reason = state == v1::NODE_STATE_UP ? "" : reason;
  });
}

bool ClusterState::SetDrain(const std::string& name, const std::string& reason, v1::DrainKind kind) {
  return Change(name, [&](NodeSlot& slot) {
    slot.drain_reason = reason;
    slot.drain_kind = reason.empty() ? v1::DRAIN_KIND_NONE : kind;
  });
}

void ClusterState::SetUnconfirmedKills(const std::string& name, std::set<uint64_t> jobs) {
  Change(name, [&](NodeSlot& slot) { slot.unconfirmed_kills = std::move(jobs); });
}

void ClusterState::AddUnconfirmedKill(const std::string& name, uint64_t job_id) {
  Change(name, [&](NodeSlot& slot) { slot.unconfirmed_kills.insert(job_id); });
}

bool ClusterState::ConfirmKilled(const std::string& name, uint64_t job_id) {
  NodeSlot* found = SlotNamed(name);
  if (found == nullptr || !found->unconfirmed_kills.contains(job_id)) return false;
  Change(*found, [&](NodeSlot& slot) { slot.unconfirmed_kills.erase(job_id); });
  return true;
}

bool ClusterState::SetAccess(const std::string& name, uint64_t queue_mask, bool spot) {
  fit_epoch_ = NextGeneration();
  return Change(name, [&](NodeSlot& slot) {
    slot.queue_mask = queue_mask;
    slot.spot = spot;
  });
}

int ClusterState::LargestNodeGpus() const {
  int largest = 0;
  for (const NodeScan& n : scan()) largest = std::max(largest, n.gpu_count);
  return largest;
}

uint64_t ClusterState::CompetingQueues(uint64_t queue_bit) const {
  uint64_t competing = 0;
  for (const NodeScan& n : scan()) {
    if ((n.queue_mask & queue_bit) != 0) competing |= n.queue_mask;
  }
  return competing;
}

const NodeSlot* ClusterState::Find(const std::string& name) const { return SlotNamed(name); }

namespace {

// The MIG instance is there, by index and UUID (a GPU partitioned anew has
// other instances), and free or already the job's.
absl::Status CheckMigFree(const NodeSlot& slot, uint64_t job_id, const std::string& node, const v1::MigSlice& mig) {
  const int pos = slot.PositionOf(mig.gpu_index());
  if (pos < 0) return absl::FailedPreconditionError(absl::StrCat(node, " has no GPU ", mig.gpu_index()));
  const int k = slot.MigPosition(pos, mig.mig_index());
  if (k < 0 || k >= static_cast<int>(slot.mig_owner[pos].size()) ||
      slot.info.gpus(pos).mig_instances(k).uuid() != mig.uuid()) {
    return absl::FailedPreconditionError(
        absl::StrCat("GPU ", mig.gpu_index(), " of ", node, " has no MIG instance ", mig.mig_index(), " ", mig.uuid()));
  }
  const uint64_t owner = slot.mig_owner[pos][k];
  if (owner != 0 && owner != job_id) {
    return absl::FailedPreconditionError(absl::StrCat("MIG instance ", mig.mig_index(), " of GPU ", mig.gpu_index(),
                                                      " of ", node, " is held by job ", owner));
  }
  return absl::OkStatus();
}

absl::Status CheckShareFits(const NodeSlot& slot, int pos, uint64_t job_id, const v1::NodeAllocation& part) {
  const int32_t index = slot.info.gpus(pos).index();
  if (!slot.Shareable(pos)) {
    return absl::FailedPreconditionError(absl::StrCat("GPU ", index, " of ", part.node(), " is not shared"));
  }
  if (slot.gpu_owner[pos] == kSharedGpuOwner && slot.gpu_shares[pos].jobs.contains(job_id)) return absl::OkStatus();
  const v1::GpuShareMode mode = slot.ShareMode(pos);
  // UNSPECIFIED: a share placed before the field existed, when only
  // time-slicing did.
  if (part.gpu_share_mode() != v1::GPU_SHARE_MODE_UNSPECIFIED && part.gpu_share_mode() != mode) {
    return absl::FailedPreconditionError(absl::StrCat("GPU ", index, " of ", part.node(), " is shared by ",
                                                      ShareModeName(mode), ", not ",
                                                      ShareModeName(part.gpu_share_mode())));
  }
  if (mode == v1::GPU_SHARE_MODE_MPS && slot.gpu_owner[pos] == kSharedGpuOwner &&
      slot.gpu_shares[pos].mps_user != part.mps_user()) {
    return absl::FailedPreconditionError(absl::StrCat("GPU ", index, " of ", part.node(), " serves user ",
                                                      slot.gpu_shares[pos].mps_user, " through MPS, not ",
                                                      part.mps_user()));
  }
  if (slot.FreeShareMilli(pos) < part.gpu_share_milli() || slot.FreeShareMemMb(pos) < part.gpu_mem_limit_mb()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "GPU ", index, " of ", part.node(), " has ", slot.FreeShareMilli(pos) / 10, "% and ", slot.FreeShareMemMb(pos),
        " MB free, not ", part.gpu_share_milli() / 10, "% and ", part.gpu_mem_limit_mb(), " MB"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ClusterState::Allocate(uint64_t job_id, const v1::Allocation& allocation) {
  for (const v1::NodeAllocation& part : allocation.nodes()) {
    const NodeSlot* slot = Find(part.node());
    if (slot == nullptr) return absl::FailedPreconditionError(absl::StrCat("node ", part.node(), " is unknown"));
    for (const v1::MigSlice& mig : part.mig_slices()) {
      if (absl::Status s = CheckMigFree(*slot, job_id, part.node(), mig); !s.ok()) return s;
    }
    for (int32_t index : part.gpu_indices()) {
      int pos = slot->PositionOf(index);
      if (pos < 0) return absl::FailedPreconditionError(absl::StrCat(part.node(), " has no GPU ", index));
      if (part.gpu_share_milli() > 0) {
        if (absl::Status s = CheckShareFits(*slot, pos, job_id, part); !s.ok()) return s;
        continue;
      }
      if (slot->gpu_owner[pos] == kMigGpuOwner) {
        return absl::FailedPreconditionError(absl::StrCat("GPU ", index, " of ", part.node(), " is in MIG mode"));
      }
      if (slot->gpu_owner[pos] == kSharedGpuOwner) {
        return absl::FailedPreconditionError(absl::StrCat("GPU ", index, " of ", part.node(), " is shared by ",
                                                          slot->gpu_shares[pos].jobs.size(), " jobs"));
      }
      if (slot->gpu_owner[pos] != 0 && slot->gpu_owner[pos] != job_id) {
        return absl::FailedPreconditionError(
            absl::StrCat("GPU ", index, " of ", part.node(), " is held by job ", slot->gpu_owner[pos]));
      }
    }
  }
  for (const v1::NodeAllocation& part : allocation.nodes()) {
    Change(*SlotNamed(part.node()), [&](NodeSlot& slot) {  // every part's node was found above
      for (const v1::MigSlice& mig : part.mig_slices()) {
        const int pos = slot.PositionOf(mig.gpu_index());
        slot.mig_owner[pos][slot.MigPosition(pos, mig.mig_index())] = job_id;
      }
      for (int32_t index : part.gpu_indices()) {
        const int pos = slot.PositionOf(index);
        if (part.gpu_share_milli() == 0) {
          slot.gpu_owner[pos] = job_id;
          continue;
        }
        GpuShares& shares = slot.gpu_shares[pos];
        if (shares.jobs.empty() && slot.ShareMode(pos) == v1::GPU_SHARE_MODE_MPS) shares.mps_user = part.mps_user();
        if (shares.jobs.emplace(job_id, part.gpu_share_milli()).second) {
          shares.milli_used += part.gpu_share_milli();
          shares.mem_used_mb += part.gpu_mem_limit_mb();
        }
        slot.gpu_owner[pos] = kSharedGpuOwner;
      }
      slot.cpus_used += part.cpus();
      slot.mem_used_mb += part.mem_mb();
      slot.jobs.insert(job_id);
    });
  }
  return absl::OkStatus();
}

void ClusterState::Release(uint64_t job_id, const v1::Allocation& allocation) {
  for (const v1::NodeAllocation& part : allocation.nodes()) {
    NodeSlot* found = SlotNamed(part.node());
    if (found == nullptr || !found->jobs.contains(job_id)) continue;
    Change(*found, [&](NodeSlot& slot) {
      slot.jobs.erase(job_id);
      for (const v1::MigSlice& mig : part.mig_slices()) {
        const int pos = slot.PositionOf(mig.gpu_index());
        const int k = slot.MigPosition(pos, mig.mig_index());
        if (k >= 0 && k < static_cast<int>(slot.mig_owner[pos].size()) && slot.mig_owner[pos][k] == job_id) {
          slot.mig_owner[pos][k] = 0;
        }
      }
      for (int32_t index : part.gpu_indices()) {
        int pos = slot.PositionOf(index);
        if (pos < 0) continue;
        if (slot.gpu_owner[pos] == job_id) slot.gpu_owner[pos] = 0;
        GpuShares& shares = slot.gpu_shares[pos];
        if (slot.gpu_owner[pos] != kSharedGpuOwner || shares.jobs.erase(job_id) == 0) continue;
        shares.milli_used = std::max(0, shares.milli_used - part.gpu_share_milli());
        shares.mem_used_mb = std::max<int64_t>(0, shares.mem_used_mb - part.gpu_mem_limit_mb());
        if (shares.jobs.empty()) {
          shares = GpuShares{};
          slot.gpu_owner[pos] = 0;
        }
      }
      slot.cpus_used = std::max<int64_t>(0, slot.cpus_used - part.cpus());
      slot.mem_used_mb = std::max<int64_t>(0, slot.mem_used_mb - part.mem_mb());
    });
  }
}

}  // namespace gpusched::core
