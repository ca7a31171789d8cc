#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "common/topology/node_topology.h"
#include "daemon/core/placement/gpu_choice.h"
#include "daemon/core/placement/gpu_graph.h"

namespace gpusched::core::placement {

// ChooseGpus, memoized per (topology fingerprint, free mask, k). The nodes of
// a cluster come in a few hardware kinds, so thousands of nodes share a few
// interned topologies and, after warm-up, a choice is a table look-up.
// Not thread-safe: like the rest of the core it belongs to the scheduler
// thread.
class GpuChooser {
 public:
  // One distinct GpuGraph (see GpuGraph::Fingerprint) interned here. Callers
  // keep it per node so that cached look-ups skip rebuilding the graph.
  struct TopologyId {
    int index = -1;
    friend bool operator==(TopologyId, TopologyId) = default;
  };

  // Nodes whose graphs have equal fingerprints get the same id. Costs one
  // GpuGraph build and fingerprint; call it when a node registers.
  TopologyId Intern(const topology::NodeTopology& topo);

  // The same answer ChooseGpus gives for the interned topology; nullptr
  // where ChooseGpus gives nullopt, or for an id this chooser did not issue.
  // Shared so that a choice outlives any later eviction from the cache.
  std::shared_ptr<const GpuChoice> Choose(TopologyId id, uint64_t free_mask, int k);
  // Interns first; prefer keeping the id.
  std::shared_ptr<const GpuChoice> Choose(const topology::NodeTopology& topo, uint64_t free_mask, int k);

  const GpuGraph* graph(TopologyId id) const;
  size_t num_topologies() const { return topologies_.size(); }
  uint64_t cache_hits() const { return hits_; }
  uint64_t cache_misses() const { return misses_; }

  // Nodes of up to this many GPUs cache in a flat table of 2^n * (n + 1)
  // slots, indexed directly by (mask, k): about 180 KB at 10 GPUs.
  static constexpr int kMaxDenseGpus = 10;
  // Larger nodes cache in a hash map, emptied whenever it reaches this many
  // choices so that a 64-GPU node cannot grow the cache without bound.
  static constexpr size_t kMaxSparseChoices = size_t{1} << 16;

 private:
  struct Topology {
    GpuGraph graph;
    std::vector<std::shared_ptr<const GpuChoice>> dense;
    absl::flat_hash_map<std::pair<uint64_t, int>, std::shared_ptr<const GpuChoice>> sparse;
  };

  std::shared_ptr<const GpuChoice>* Slot(Topology& topology, uint64_t free_mask, int k);

  absl::flat_hash_map<std::string, int> by_fingerprint_;
  std::vector<std::unique_ptr<Topology>> topologies_;
  uint64_t hits_ = 0;
  uint64_t misses_ = 0;
};

}  // namespace gpusched::core::placement
