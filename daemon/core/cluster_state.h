#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "daemon/core/node_slot.h"
#include "daemon/core/placement_index.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::core {

class ClusterState {
 public:
  ClusterState() = default;
  // scan() points into the node map: a copy points into its own.
  ClusterState(const ClusterState& other);
  ClusterState& operator=(const ClusterState& other);
  ClusterState(ClusterState&&) = default;  // map nodes move with their addresses
  ClusterState& operator=(ClusterState&&) = default;

  // A node (re)registered: keeps the allocations it already had. `info` was
  // checked by ValidateNodeInfo; a topology that still fails to convert is
  // kept as GPUs without known links.
  void UpsertNode(const v1::NodeInfo& info);
  void SetState(const std::string& name, v1::NodeState state, const std::string& reason);
  // Drains the node (non-empty reason) or resumes it (empty); false when unknown.
  // An empty reason lifts the drain (its kind becomes NONE).
  bool SetDrain(const std::string& name, const std::string& reason, v1::DrainKind kind);
  // The jobs the node's agent was told to kill as it registered, replacing
  // any earlier set; and one of them reported gone (false when it was not
  // awaited).
  void SetUnconfirmedKills(const std::string& name, std::set<uint64_t> jobs);
  bool ConfirmKilled(const std::string& name, uint64_t job_id);
  // One more job to hear gone before the node takes work (an earlier
  // attempt the agent said is still stopping).
  void AddUnconfirmedKill(const std::string& name, uint64_t job_id);
  // Which queues may use the node (NodeSlot::queue_mask) and whether it is
  // spot capacity (NodeSlot::spot); false when unknown.
  bool SetAccess(const std::string& name, uint64_t queue_mask, bool spot);

  const NodeSlot* Find(const std::string& name) const;
  const std::map<std::string, NodeSlot>& nodes() const { return nodes_; }
  // Changes whenever a node (re)registers: caches of node topologies key on it.
  uint64_t topology_epoch() const { return topology_epoch_; }
  // Changes whenever what some node could ever hold may have changed: a
  // registration, or a change of which queues may use it. Answers about
  // what could ever fit (EverFitsCache) key on it.
  uint64_t fit_epoch() const { return fit_epoch_; }
  // Every node's NodeScan, in name order (the order of nodes()).
  const std::vector<NodeScan>& scan() const { return index_.scan(); }
  // Every GPU a share could go to now (PlacementIndex::shares()).
  const std::set<ShareableGpu>& share_index() const { return index_.shares(); }
  // Whether any GPU of the cluster may be shared at all (up or not).
  bool any_shareable_gpu() const { return shareable_gpus_ > 0; }
  // The most GPUs one node has: a gang needing more spans nodes.
  int LargestNodeGpus() const;
  // The queues (as queue_mask bits) that share a node with the queue of
  // `queue_bit`: whose jobs compete with its jobs for nodes.
  uint64_t CompetingQueues(uint64_t queue_bit) const;
  // The name behind an interned network id of `tier` ("" when unknown).
  const std::string& NetworkName(NetworkTier tier, int id) const;
  int NetworkIdCount(NetworkTier tier) const { return static_cast<int>(network_names_[tier].size()); }
  // Every GPU kind a node has registered with, by NodeSlot::gpu_kind. Kinds
  // are never forgotten: a cluster has a few, bounded by its hardware.
  const std::vector<GpuKind>& gpu_kinds() const { return gpu_kinds_; }

  // All-or-nothing: either every part of the allocation is free and taken by
  // `job_id`, or nothing changes and the error says which part was not free.
  absl::Status Allocate(uint64_t job_id, const v1::Allocation& allocation);
  // Frees what `job_id` holds under `allocation`; parts it does not hold are skipped.
  void Release(uint64_t job_id, const v1::Allocation& allocation);

 private:
  int InternNetworkName(NetworkTier tier, const std::string& name);
  int InternGpuKind(GpuKind kind);
  // Every change to a slot after its registration goes through here: the
  // slot's free_mask and its index entries follow the change, so that no
  // mutator can leave them behind. Templates, defined in the .cc (its only
  // user): placement's trial allocations make this the hottest call of a
  // pass, and the change inlines. By name: false when the node is unknown.
  template <typename ChangeFn>
  void Change(NodeSlot& slot, ChangeFn&& change);
  template <typename ChangeFn>
  bool Change(const std::string& name, ChangeFn&& change);
  // The index afresh from every slot (a node added, or the state copied).
  void Reindex();

  // The slot of a node, by name, without walking the ordered map: trial
  // allocations and releases look nodes up by name thousands of times a pass.
  // Points into nodes_ (whose nodes never move); rebuilt when it is copied.
  NodeSlot* SlotNamed(absl::string_view name);
  const NodeSlot* SlotNamed(absl::string_view name) const;
  void IndexNames();

  std::map<std::string, NodeSlot> nodes_;                      // ordered by name: deterministic passes
  absl::flat_hash_map<absl::string_view, NodeSlot*> by_name_;  // keys view nodes_'s
  PlacementIndex index_;                                       // derived from nodes_
  int64_t shareable_gpus_ = 0;
  uint64_t topology_epoch_ = 0;
  uint64_t fit_epoch_ = 0;
  std::array<std::vector<std::string>, 3> network_names_;
  std::array<std::map<std::string, int>, 3> network_ids_;
  std::vector<GpuKind> gpu_kinds_;
  std::map<GpuKind, int> gpu_kind_ids_;
  // Fingerprint -> NodeSlot::gpu_graph. Like GpuChooser's own table it keeps
  // every graph seen: a calibration that changes a node's measured figures
  // adds one, a few per node over the daemon's life.
  std::map<std::string, uint64_t> gpu_graphs_;
};

}  // namespace gpusched::core
