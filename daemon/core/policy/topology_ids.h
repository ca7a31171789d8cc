#pragma once

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "daemon/core/cluster_state.h"
#include "daemon/core/placement/gpu_chooser.h"

namespace gpusched::core::policy {

// Each node's topology as the GpuChooser knows it (its TopologyId), kept
// between passes. Placement asks for it on every candidate node of every
// gang, and interning a topology builds and fingerprints its GPU graph:
// this builds each kind of node once (NodeSlot::gpu_graph), and looks a
// node up by its place in the scan, checked by its generation.
class TopologyIds {
 public:
  // Ids are the chooser's, which must outlive this.
  explicit TopologyIds(placement::GpuChooser& chooser) : chooser_(chooser) {}

  // The id of the node's topology as registered now. A node that
  // re-registered (a new generation), a node that moved in the scan, or a
  // node of another cluster at the same place is never answered from the
  // cache entry of another.
  placement::GpuChooser::TopologyId Of(const NodeSlot& slot);
  // Interns every node of `cluster`, once per topology epoch: the chooser
  // then knows every kind of node the cluster has (GpuChooser::num_topologies).
  void InternAll(const ClusterState& cluster);

 private:
  struct Cached {
    uint64_t generation = 0;  // NodeSlot::generation; 0 is never issued
    placement::GpuChooser::TopologyId id;
  };
  placement::GpuChooser& chooser_;
  std::vector<Cached> by_scan_index_;                                              // by NodeSlot::scan_index
  absl::flat_hash_map<uint64_t, placement::GpuChooser::TopologyId> by_gpu_graph_;  // by NodeSlot::gpu_graph
  uint64_t interned_epoch_ = 0;
  const ClusterState* interned_cluster_ = nullptr;
};

}  // namespace gpusched::core::policy
