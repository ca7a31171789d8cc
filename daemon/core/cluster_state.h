#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/topology/node_topology.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::core {

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

// One GPU a share could go to now (ClusterState::share_index()): on a node
// that accepts jobs, shareable, not held whole, with free_milli > 0. Ordered
// by what taking it costs: the tightest fit first; among equals the GPU on
// the node with the fewest whole GPUs free, then the one whose free NVLink
// and PCIe peers a gang would miss least, so that shares leave idle nodes
// and NVLink islands whole.
struct ShareableGpu {
  int free_milli = 0;
  int node_free_gpus = 0;  // whole GPUs free on its node
  int64_t peer_gbps = 0;   // NodeSlot::FreePeerGbps
  size_t scan_index = 0;   // its node's NodeSlot::scan_index
  int position = 0;
  auto operator<=>(const ShareableGpu&) const = default;
};

// Accounting for one node: who holds each GPU, how many CPUs and how much
// memory are spoken for. Decides nothing.
struct NodeSlot {
  // What placement scans read on every node come first, in one cache line;
  // ClusterState keeps them in step with gpu_owner and info.
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
  size_t scan_index = 0;  // its entry in ClusterState::scan()
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
  int PositionOf(int32_t index) const;
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
  // Recomputes free_mask from gpu_owner.
  void RecountFree();
};

// A node as placement scans see it: the few fields they test on every node,
// contiguous in ClusterState::scan() so that a pass over thousands of nodes
// does not chase one pointer per node.
struct NodeScan {
  const NodeSlot* slot = nullptr;
  uint64_t free_mask = 0;
  int64_t free_cpus = 0;
  int64_t free_mem_mb = 0;
  int gpu_count = 0;
  int gpu_kind = 0;              // NodeSlot::gpu_kind
  bool up = false;               // NodeSlot::accepts_jobs()
  bool runs_containers = false;  // NodeSlot::runs_containers
  bool spot = false;             // NodeSlot::spot
  uint64_t queue_mask = ~uint64_t{0};
  uint64_t generation = 0;                     // NodeSlot::generation
  std::array<int, 3> network_ids{-1, -1, -1};  // NodeSlot::network_ids
};

// The network tiers above a node, nearest first.
enum NetworkTier { kNvlinkDomainTier = 0, kLeafTier = 1, kSpineTier = 2 };

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
  // Every node's NodeScan, in name order (the order of nodes()).
  const std::vector<NodeScan>& scan() const { return scan_; }
  // Every GPU a share could go to now, by free share, then node and position
  // order: best fit for a share of one GPU is the first entry from its size
  // up whose node suits the job.
  const std::set<ShareableGpu>& share_index() const { return share_index_; }
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
  void Refresh(const NodeSlot& slot);
  void RebuildScan();

  std::map<std::string, NodeSlot> nodes_;  // ordered by name: deterministic passes
  std::vector<NodeScan> scan_;
  std::set<ShareableGpu> share_index_;
  std::vector<std::vector<ShareableGpu>> share_entries_;  // by scan index: what share_index_ holds of it
  int64_t shareable_gpus_ = 0;
  uint64_t topology_epoch_ = 0;
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
