#include "daemon/core/placement/gpu_chooser.h"

#include <bit>

namespace gpusched::core::placement {

GpuChooser::TopologyId GpuChooser::Intern(const topology::NodeTopology& topo) {
  GpuGraph graph = GpuGraph::FromTopology(topo);
  auto [it, inserted] = by_fingerprint_.emplace(graph.Fingerprint(), static_cast<int>(topologies_.size()));
  if (inserted) {
    auto entry = std::make_unique<Topology>();
    const int n = graph.size();
    if (n <= kMaxDenseGpus) entry->dense.resize((size_t{1} << n) * (n + 1));
    entry->graph = std::move(graph);
    topologies_.push_back(std::move(entry));
  }
  return TopologyId{it->second};
}

std::shared_ptr<const GpuChoice>* GpuChooser::Slot(Topology& topology, uint64_t free_mask, int k) {
  const int n = topology.graph.size();
  if (n <= kMaxDenseGpus) return &topology.dense[free_mask * (n + 1) + k];
  if (topology.sparse.size() >= kMaxSparseChoices) topology.sparse.clear();
  return &topology.sparse[{free_mask, k}];
}

std::shared_ptr<const GpuChoice> GpuChooser::Choose(TopologyId id, uint64_t free_mask, int k) {
  if (id.index < 0 || id.index >= static_cast<int>(topologies_.size())) return nullptr;
  Topology& topology = *topologies_[id.index];
  free_mask &= topology.graph.all_gpus_mask();
  if (k <= 0 || k > std::popcount(free_mask)) return nullptr;
  std::shared_ptr<const GpuChoice>* slot = Slot(topology, free_mask, k);
  if (*slot) {
    ++hits_;
    return *slot;
  }
  ++misses_;
  // Never nullopt here: k was checked against the free GPUs above.
  *slot = std::make_shared<const GpuChoice>(*ChooseGpusOnGraph(topology.graph, free_mask, k));
  return *slot;
}

std::shared_ptr<const GpuChoice> GpuChooser::Choose(const topology::NodeTopology& topo, uint64_t free_mask, int k) {
  return Choose(Intern(topo), free_mask, k);
}

const GpuGraph* GpuChooser::graph(TopologyId id) const {
  if (id.index < 0 || id.index >= static_cast<int>(topologies_.size())) return nullptr;
  return &topologies_[id.index]->graph;
}

}  // namespace gpusched::core::placement
