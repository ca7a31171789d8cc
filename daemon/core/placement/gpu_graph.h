#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/topology/link_kind.h"
#include "common/topology/node_topology.h"

namespace gpusched::core::placement {

// free_mask has one bit per GPU, so GPUs at positions >= 64 can never be
// offered and the graph leaves them out.
inline constexpr int kMaxPlaceableGpus = 64;

// Bandwidths ranked as small integers so that the subset searches compare
// integers, not doubles: level 0 is a GPU to itself, level L > 0 the L-th
// smallest distinct estimated bandwidth between two GPUs of this node.
using BandwidthLevel = uint16_t;

// The GPUs of one node reduced to what GPU choice depends on, and nothing
// else: equal fingerprints mean equal answers, which is what lets thousands
// of identical nodes share one cache (GpuChooser).
class GpuGraph {
 public:
  // Pair bandwidth is the lower of EstimatedGpuPairBandwidthGBps(i, j) and
  // (j, i): each direction with its own link and its sender's generation, so
  // that an asymmetric matrix or a mixed-generation pair never looks better
  // than its slower side; times MeasuredShortfall, where the probe measured
  // the pair slower than its class on this node. The pair's link is
  // the worse of the two by LinkRank. A self link off the diagonal counts as
  // SYS for the same reason.
  static GpuGraph FromTopology(const topology::NodeTopology& topo);

  int size() const { return size_; }
  uint64_t all_gpus_mask() const { return size_ >= 64 ? ~uint64_t{0} : (uint64_t{1} << size_) - 1; }

  BandwidthLevel Level(int i, int j) const { return levels_[i * size_ + j]; }
  double LevelGBps(BandwidthLevel level) const { return level_gbps_[level]; }
  const topology::Link& GpuLink(int i, int j) const { return links_[i * size_ + j]; }

  // The best link from GPU i to any NIC; nullopt when the node lists no NICs.
  const std::optional<topology::Link>& BestNicLink(int i) const { return best_nic_[i]; }
  // LinkRank of BestNicLink, or 0 without NICs so that NIC-less nodes tie.
  int NicRank(int i) const { return nic_rank_[i]; }

  // The CPU locality domain of GPU i, numbered densely from 0 in order of
  // first appearance: GPUs share a domain when they share a known NUMA node;
  // where the NUMA node is unknown (DGX-1's topo -m has no NUMA column), when
  // they share the same CPU affinity list; GPUs with neither known share one
  // "unknown" domain.
  int Domain(int i) const { return domain_[i]; }
  uint64_t DomainBit(int i) const { return uint64_t{1} << domain_[i]; }

  // Every input above as bytes; see the class comment.
  std::string Fingerprint() const;

 private:
  int size_ = 0;
  std::vector<BandwidthLevel> levels_;  // size_ x size_, row-major
  std::vector<double> level_gbps_;      // level -> GB/s; [0] = 0 for self
  std::vector<topology::Link> links_;   // size_ x size_, symmetric
  std::vector<std::optional<topology::Link>> best_nic_;
  std::vector<int> nic_rank_;
  std::vector<int> domain_;
};

}  // namespace gpusched::core::placement
