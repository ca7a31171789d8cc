#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/topology/node_topology.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::core {

// Accounting for one node: who holds each GPU, how many CPUs and how much
// memory are spoken for. Decides nothing.
struct NodeSlot {
  v1::NodeInfo info;
  topology::NodeTopology topology;  // info's GPUs, NICs and links as the model
  v1::NodeState state = v1::NODE_STATE_DOWN;
  std::string reason;              // why it is not up
  std::vector<uint64_t> gpu_owner;  // by position in info.gpus; 0 = free
  int64_t cpus_used = 0;
  int64_t mem_used_mb = 0;
  std::set<uint64_t> jobs;         // every job with a part here, GPU or CPU-only
  // The node's NVLink domain, leaf and spine (topology.network()) as small
  // ids (ClusterState interns them), -1 when unknown: placement groups
  // thousands of nodes by switch without hashing names. Index: NetworkTier.
  std::array<int, 3> network_ids{-1, -1, -1};
  // New on every UpsertNode, unique in the process: lets placement caches
  // keyed by node notice a new topology.
  uint64_t generation = 0;

  bool up() const { return state == v1::NODE_STATE_UP; }
  int64_t FreeGpus() const;
  int64_t FreeCpus() const { return info.cpus() - cpus_used; }
  int64_t FreeMemMb() const { return info.memory_mb() - mem_used_mb; }
  // Indices (GpuInfo.index) of free GPUs, in position order.
  std::vector<int32_t> FreeGpuIndices() const;
  // Position of GPU index `index` in info.gpus, or -1.
  int PositionOf(int32_t index) const;
  // Bit p set when the GPU at position p is free (positions >= 64 are left out).
  uint64_t FreeMask() const;
};

// The network tiers above a node, nearest first.
enum NetworkTier { kNvlinkDomainTier = 0, kLeafTier = 1, kSpineTier = 2 };

class ClusterState {
 public:
  // A node (re)registered: keeps the allocations it already had. `info` was
  // checked by ValidateNodeInfo; a topology that still fails to convert is
  // kept as GPUs without known links.
  void UpsertNode(const v1::NodeInfo& info);
  void SetState(const std::string& name, v1::NodeState state, const std::string& reason);

  const NodeSlot* Find(const std::string& name) const;
  const std::map<std::string, NodeSlot>& nodes() const { return nodes_; }
  // The name behind an interned network id of `tier` ("" when unknown).
  const std::string& NetworkName(NetworkTier tier, int id) const;
  int NetworkIdCount(NetworkTier tier) const { return static_cast<int>(network_names_[tier].size()); }

  // All-or-nothing: either every part of the allocation is free and taken by
  // `job_id`, or nothing changes and the error says which part was not free.
  absl::Status Allocate(uint64_t job_id, const v1::Allocation& allocation);
  // Frees what `job_id` holds under `allocation`; parts it does not hold are skipped.
  void Release(uint64_t job_id, const v1::Allocation& allocation);

 private:
  int InternNetworkName(NetworkTier tier, const std::string& name);

  std::map<std::string, NodeSlot> nodes_;  // ordered by name: deterministic passes
  std::array<std::vector<std::string>, 3> network_names_;
  std::array<std::map<std::string, int>, 3> network_ids_;
};

}  // namespace gpusched::core
