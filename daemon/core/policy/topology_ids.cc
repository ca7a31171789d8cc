#include "daemon/core/policy/topology_ids.h"

namespace gpusched::core::policy {

placement::GpuChooser::TopologyId TopologyIds::Of(const NodeSlot& slot) {
  if (by_scan_index_.size() <= slot.scan_index) by_scan_index_.resize(slot.scan_index + 1);
  Cached& cached = by_scan_index_[slot.scan_index];
  // Generations are unique in the process, so this also tells apart a node
  // of another cluster (a copy the planner tries a preemption on) kept here.
  if (cached.generation != slot.generation) {
    auto [known, inserted] = by_gpu_graph_.try_emplace(slot.gpu_graph);
    if (inserted) known->second = chooser_.Intern(slot.topology);
    cached = {slot.generation, known->second};
  }
  return cached.id;
}

void TopologyIds::InternAll(const ClusterState& cluster) {
  if (interned_epoch_ == cluster.topology_epoch() && interned_cluster_ == &cluster) return;
  for (const NodeScan& n : cluster.scan()) Of(*n.slot);
  interned_epoch_ = cluster.topology_epoch();
  interned_cluster_ = &cluster;
}

}  // namespace gpusched::core::policy
