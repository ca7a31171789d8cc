#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "daemon/core/node_slot.h"

namespace gpusched::core {

// One GPU a share could go to now (PlacementIndex::shares()): on a node
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

// A node as placement scans see it: the few fields they test on every node,
// contiguous in PlacementIndex::scan() so that a pass over thousands of nodes
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

// What placement reads of every node, laid out for its scans: one NodeScan
// per node in name order, and every GPU a share could go to, cheapest
// first. Derived from the NodeSlots alone: Rebuild makes it from them,
// Refresh brings one node's entries up to date after its slot changed, and
// the two always agree (a test holds them to it).
//
// The share entries follow lazily: Refresh only notes the node, and
// shares() brings the noted nodes' entries up to date, touching only those
// that changed. A pass allocates and releases GPUs in its what-ifs
// (reservations, preemptions) far more often than it places shares, and
// most of those changes are undone before anyone looks.
class PlacementIndex {
 public:
  // Indexes every node afresh, numbering them in map order
  // (NodeSlot::scan_index): a node was added, or the slots were copied.
  void Rebuild(std::map<std::string, NodeSlot>& nodes);
  // A node new to `nodes` (`added`, already in the map) gets its place:
  // the nodes after it in name order move up one. Linear in the nodes, with
  // none of Rebuild's per-node work, so that registering n nodes one by one
  // does not cost n rebuilds.
  void Insert(std::map<std::string, NodeSlot>& nodes, std::map<std::string, NodeSlot>::iterator added);
  // The node's entries again, after its slot changed; its place is kept.
  void Refresh(const NodeSlot& slot);

  // Every node's NodeScan, in name order.
  const std::vector<NodeScan>& scan() const { return scan_; }
  // Every GPU a share could go to now, by free share, then node and position
  // order: best fit for a share of one GPU is the first entry from its size
  // up whose node suits the job.
  const std::set<ShareableGpu>& shares() const;

 private:
  // The entries of the node at `scan_index` as its slot reads now, in
  // position order.
  std::vector<ShareableGpu> EntriesOf(size_t scan_index) const;

  std::vector<NodeScan> scan_;
  // Derived on demand from scan_ (shares() is const for its readers).
  mutable std::set<ShareableGpu> shares_;
  mutable std::vector<std::vector<ShareableGpu>> share_entries_;  // by scan index: what shares_ holds of it
  mutable std::vector<size_t> stale_;                             // scan indices whose entries may be out of date
  mutable std::vector<bool> is_stale_;                            // by scan index
};

}  // namespace gpusched::core
