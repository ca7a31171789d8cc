#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <vector>

#include "daemon/core/cluster_state.h"
#include "daemon/core/gang_request.h"

namespace gpusched::core::policy {

// Whether the request may use the node at all: a node of its queue, for a
// job in a container one whose agent runs containers, and for a job that
// shuns spot capacity one that is not spot.
inline bool MayUse(uint64_t queue_mask, bool runs_containers, bool spot, const GangRequest& req) {
  return (queue_mask & req.queue_bit) != 0 && (runs_containers || !req.in_container) && !(spot && req.no_spot);
}
inline bool QueueMayUse(const NodeSlot& slot, const GangRequest& req) {
  return MayUse(slot.queue_mask, slot.runs_containers, slot.spot, req);
}
inline bool QueueMayUse(const NodeScan& n, const GangRequest& req) {
  return MayUse(n.queue_mask, n.runs_containers, n.spot, req);
}

// GPUs of a node of `kind` that the request's model and memory constraints
// allow, as a position mask.
uint64_t EligibleOfKind(const GpuKind& kind, const GangRequest& req);

// GPUs of `slot` that the request may use at all (its queue's nodes, model
// and memory constraints), as a position mask.
uint64_t EligibleGpus(const NodeSlot& slot, const GangRequest& req);

// EligibleOfKind for every GPU kind of a cluster, worked out once per
// request: a scan of thousands of nodes then matches no model string.
class EligibleByKind {
 public:
  EligibleByKind(const ClusterState& cluster, const GangRequest& req);
  // The node's eligible GPUs by its scan entry (queues aside).
  uint64_t Of(const NodeScan& n) const { return masks_[n.gpu_kind]; }

 private:
  std::vector<uint64_t> masks_;  // by NodeSlot::gpu_kind
};

// How many of the GPUs in `mask` a node with `cpus` CPUs and `mem_mb` MB of
// host memory to spare can give, each bringing the request's share along.
inline int64_t UsableOf(uint64_t mask, int64_t cpus, int64_t mem_mb, const GangRequest& req) {
  int64_t usable = std::popcount(mask);
  if (req.cpus_per_gpu > 0) usable = std::min(usable, cpus / req.cpus_per_gpu);
  if (req.mem_per_gpu_mb > 0) usable = std::min(usable, mem_mb / req.mem_per_gpu_mb);
  return std::max<int64_t>(usable, 0);
}

// How many GPUs of the request's kind the node can give now, counting the
// CPUs and host memory each one brings along. With `idle`, as if the node
// ran nothing (what strict placement and never-fits checks ask).
int64_t UsableGpus(const NodeSlot& slot, const GangRequest& req, bool idle = false);

// The free eligible GPUs (or all eligible when idle).
uint64_t CandidateMask(const NodeSlot& slot, const GangRequest& req, bool idle = false);

// An up node that can give GPUs of the request's kind now (or when idle),
// with what it offers the request, worked out once:
// a search weighs each node several times (alone, in each switch group).
struct GpuCandidate {
  const NodeSlot* slot = nullptr;
  uint64_t mask = 0;   // CandidateMask
  int64_t usable = 0;  // UsableGpus
  // The slot's, copied from its scan entry: searches group and compare
  // thousands of candidates per placement without reading a slot.
  uint64_t generation = 0;
  std::array<int, 3> network_ids{-1, -1, -1};

  GpuCandidate() = default;
  GpuCandidate(const NodeScan& n, uint64_t candidate_mask, int64_t usable_gpus)
      : slot(n.slot), mask(candidate_mask), usable(usable_gpus), generation(n.generation), network_ids(n.network_ids) {}
};
// The nodes that can give at least `min_usable` (at least one), in name order.
std::vector<GpuCandidate> ScoreGpuCandidates(const ClusterState& cluster, const GangRequest& req, bool idle = false,
                                             int64_t min_usable = 1);
// Into `out` (cleared first): a policy that keeps the vector between calls
// does not allocate thousands of entries afresh on every placement.
void ScoreGpuCandidates(const ClusterState& cluster, const GangRequest& req, bool idle, int64_t min_usable,
                        std::vector<GpuCandidate>& out);
// The same for one node: false when it is not a candidate. `eligible` is
// for req and the node's cluster. Inline: a search calls it on thousands of
// nodes per placement.
inline bool ScoreGpuCandidate(const NodeScan& n, const GangRequest& req, const EligibleByKind& eligible, bool idle,
                              int64_t min_usable, GpuCandidate& out) {
  min_usable = std::max<int64_t>(min_usable, 1);
  if (!n.up || n.gpu_count == 0 || !QueueMayUse(n, req)) return false;
  if (!idle && std::popcount(n.free_mask) < min_usable) return false;  // the common case on a busy cluster
  // From the scan entry alone, but for an idle node's totals.
  // MIG GPUs are never free as a whole, idle or not.
  const uint64_t mask = idle ? eligible.Of(n) & ~n.slot->mig_mask : n.free_mask & eligible.Of(n);
  const int64_t usable = idle ? UsableOf(mask, n.slot->cpus_total, n.slot->mem_total_mb, req)
                              : UsableOf(mask, n.free_cpus, n.free_mem_mb, req);
  if (usable < min_usable) return false;
  out = GpuCandidate(n, mask, usable);
  return true;
}

// Whether a CPU-only request fits on the node now.
bool CpuJobFits(const NodeSlot& slot, const GangRequest& req);

// One node's part of a gang: the GPUs at `positions` (in ring order), with
// the CPUs and memory the request sizes for them.
v1::NodeAllocation MakePart(const NodeSlot& slot, const GangRequest& req, const std::vector<int>& positions,
                            int node_rank);

// The lowest `count` positions set in `mask`.
std::vector<int> LowestPositions(uint64_t mask, int64_t count);

}  // namespace gpusched::core::policy
