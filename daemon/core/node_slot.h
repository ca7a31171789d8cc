#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/topology/node_topology.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::core {

// The network tiers above a node, nearest first.
enum NetworkTier { kNvlinkDomainTier = 0, kLeafTier = 1, kSpineTier = 2 };

// A node's GPUs as GPU model and memory constraints see them. ClusterState
// numbers the distinct ones (gpu_kinds()), so that a placement scan matches
// a constraint once per kind rather than once per node.
struct GpuKind {
  // The GPUs grouped by model (lower case), positions as a mask: a model is
  // matched once, not once per GPU. Usually a single entry.
  struct ModelGpus {
    std::string model_lower;
    uint64_t mask = 0;  // positions < 64
    auto operator<=>(const ModelGpus&) const = default;
  };
  int gpu_count = 0;
  std::vector<ModelGpus> by_model;
  std::vector<int64_t> memory_mb;  // by position < 64
  auto operator<=>(const GpuKind&) const = default;

  static GpuKind Of(const v1::NodeInfo& info);
};

// What the jobs that share one GPU (GangRequest::gpu_share_milli) hold of it.
struct GpuShares {
  int milli_used = 0;  // thousandths of the GPU
  int64_t mem_used_mb = 0;
  std::map<uint64_t, int> jobs;  // job id -> its thousandths
  // On an MPS GPU: the user its holders run as (NodeAllocation.mps_user).
  std::string mps_user;
};

// NodeSlot::gpu_owner of a GPU that jobs share: busy for whole-GPU jobs, its
// holders in NodeSlot::gpu_shares.
inline constexpr uint64_t kSharedGpuOwner = ~uint64_t{0};
// NodeSlot::gpu_owner of a GPU in MIG mode: never free as a whole; its
// instances' holders in NodeSlot::mig_owner.
inline constexpr uint64_t kMigGpuOwner = ~uint64_t{0} - 1;

// One node as the scheduler accounts for it. Decides nothing, and only
// ClusterState changes it; everything else sees it const. Its fields are of
// three kinds:
//  - the accounting: state and drain, who holds each GPU, MIG instance and
//    share, the CPUs and memory spoken for, the jobs with a part here;
//  - facts of what the node registered (info), set once per registration by
//    ClusterState::UpsertNode: the topology model, GPU kind, pair bandwidths,
//    network ids, share-mode masks, generation;
//  - free_mask, recomputed from gpu_owner by ClusterState after every change,
//    and scan_index, the node's place in the PlacementIndex
//    (placement_index.h) that ClusterState rebuilds from the slots.
struct NodeSlot {
  // What placement reads on every node come first, in one cache line.
  v1::NodeState state = v1::NODE_STATE_DOWN;
  uint64_t free_mask = 0;    // bit p set when the GPU at position p is free (p < 64)
  int gpu_count = 0;         // info.gpus_size()
  int64_t cpus_total = 0;    // info.cpus()
  int64_t mem_total_mb = 0;  // info.memory_mb()
  int64_t cpus_used = 0;
  int64_t mem_used_mb = 0;

  v1::NodeInfo info;
  topology::NodeTopology topology;  // info's GPUs, NICs and links as the model
  std::string reason;               // why it is not up
  std::string drain_reason;         // non-empty: drained, by drain_kind
  v1::DrainKind drain_kind = v1::DRAIN_KIND_NONE;
  std::vector<uint64_t> gpu_owner;    // by position in info.gpus; 0 = free, kSharedGpuOwner = shared
  std::vector<GpuShares> gpu_shares;  // by position; holders only where gpu_owner is kSharedGpuOwner
  uint64_t shareable_mask = 0;        // bit p: the operator lets jobs share the GPU at position p (< 64)
  uint64_t mps_mask = 0;              // the part of shareable_mask shared through MPS
  uint64_t mig_mask = 0;              // GPUs in MIG mode (GpuShareMode MIG), never in shareable_mask
  // By position, then by the GPU's mig_instances order: the job holding each
  // MIG instance, 0 = free.
  std::vector<std::vector<uint64_t>> mig_owner;
  std::set<uint64_t> jobs;  // every job with a part here, GPU or CPU-only
  // Killed at registration (RegisterAck.kill_job_ids), not yet reported
  // gone: the node takes no new job until it is empty.
  std::set<uint64_t> unconfirmed_kills;
  // What GPU model and memory constraints are matched against; its index
  // among ClusterState::gpu_kinds() is gpu_kind.
  GpuKind gpus;
  int gpu_kind = 0;
  // PlacementGpuPairMatrixGBps: every pair of positions, row-major:
  // ring estimates read it on every candidate gang, and the figure depends
  // on the GPU model's generation, which is a string match.
  std::vector<double> pair_gbps;
  // The node's NVLink domain, leaf and spine (topology.network()) as small
  // ids (ClusterState interns them), -1 when unknown: placement groups
  // thousands of nodes by switch without hashing names. Index: NetworkTier.
  std::array<int, 3> network_ids{-1, -1, -1};
  size_t scan_index = 0;  // its entry in PlacementIndex::scan()
  // Bit q set when queue q (QueuePolicy::NodeMask) may put jobs here.
  uint64_t queue_mask = ~uint64_t{0};
  // Its agent runs jobs in containers (NodeInfo.containers.runtime).
  bool runs_containers = false;
  // In a spot pool: the cloud may take it back, so no_spot jobs never go there.
  bool spot = false;
  // New on every UpsertNode, unique in the process: lets placement caches
  // keyed by node notice a new topology.
  uint64_t generation = 0;
  // Equal for the nodes of one ClusterState (and its copies) whose GPU
  // graphs (placement::GpuGraph::Fingerprint) are equal, unique in the
  // process otherwise: placement interns each kind of node once, not once
  // per node, and without building its graph again.
  uint64_t gpu_graph = 0;

  // Whether new jobs may go there: up, not drained, and no job of an earlier
  // life of its agent still dying there.
  bool accepts_jobs() const { return state == v1::NODE_STATE_UP && drain_reason.empty() && unconfirmed_kills.empty(); }
  int64_t FreeGpus() const;
  int64_t FreeCpus() const { return cpus_total - cpus_used; }
  int64_t FreeMemMb() const { return mem_total_mb - mem_used_mb; }
  // Indices (GpuInfo.index) of free GPUs, in position order.
  std::vector<int32_t> FreeGpuIndices() const;
  // Position of GPU index `index` in info.gpus, or -1.
  int PositionOf(int32_t index) const {
    // Agents number their GPUs 0..n-1 in order, so the index is almost
    // always the position.
    if (index >= 0 && index < info.gpus_size() && info.gpus(index).index() == index) return index;
    for (int i = 0; i < info.gpus_size(); ++i) {
      if (info.gpus(i).index() == index) return i;
    }
    return -1;
  }
  // Whether the operator lets jobs share the GPU at `pos` (GpuInfo.share_mode).
  bool Shareable(int pos) const;
  // How the GPU at `pos` is shared: EXCLUSIVE, TIMESLICE or MPS.
  v1::GpuShareMode ShareMode(int pos) const;
  // The positions shared the way `how` says (UNSPECIFIED: any way).
  uint64_t SharedMask(v1::GpuShareMode how) const;
  // The thousandths of the GPU at `pos` a job with a share can still get: 0
  // when it is not shareable or a whole-GPU job holds it.
  int FreeShareMilli(int pos) const;
  // Position in info.gpus(pos).mig_instances() of the instance with MIG
  // device index `mig_index`, or -1.
  int MigPosition(int pos, int32_t mig_index) const;
  // The bandwidth (GB/s, rounded) between the GPU at `pos` and the other
  // whole free GPUs of the node: what a gang here would lose with it.
  int64_t FreePeerGbps(int pos) const;
  // GPU memory (MB) not yet held by the jobs sharing the GPU at `pos`.
  int64_t FreeShareMemMb(int pos) const;
  // The bandwidth placement counts between the GPUs at positions a and b
  // (GB/s: estimated, or measured by the NCCL probe);
  // 0 for a position the node does not have.
  double PairGbps(int a, int b) const {
    const int n = topology.num_gpus();
    return a < 0 || b < 0 || a >= n || b >= n ? 0 : pair_gbps[static_cast<size_t>(a) * n + b];
  }
  // Bit p set when the GPU at position p is free (positions >= 64 are left out).
  uint64_t FreeMask() const { return free_mask; }
  // gpu_owner as a mask of free positions: what free_mask must be.
  uint64_t CountFree() const {
    uint64_t mask = 0;
    for (size_t p = 0; p < gpu_owner.size() && p < 64; ++p) {
      if (gpu_owner[p] == 0) mask |= uint64_t{1} << p;
    }
    return mask;
  }
};

}  // namespace gpusched::core
