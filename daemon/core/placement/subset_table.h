#pragma once

#include <cstdint>
#include <vector>

#include "daemon/core/placement/gpu_graph.h"

namespace gpusched::core::placement {

// The packed SubsetScore of every subset of a small set of GPUs (the free
// GPUs of one node), so that the exact search can rank each candidate gang
// and each set of GPUs a candidate would leave behind by table look-ups.
// Subsets are local masks: bit b stands for members()[b].
class SubsetTable {
 public:
  // `members`: ascending positions, at most kMaxMembers of them.
  SubsetTable(const GpuGraph& graph, std::vector<int> members);

  // 2^12 subsets keep the ring DP near 0.6 M steps and the tables in the
  // hundreds of kilobytes; above that the exact search is too slow to run
  // uncached (see kMaxExactSearchFreeGpus).
  static constexpr int kMaxMembers = 12;

  const std::vector<int>& members() const { return members_; }
  int size() const { return static_cast<int>(members_.size()); }
  uint64_t Score(uint32_t subset) const { return score_[subset]; }

  // The leftover ranking of rule 3: fills, for every subset S of at most
  // `max_size` members, the best Score of any j-member subset of S for each
  // j <= |S|. Cost 2^m * max_size^2 at worst; call once before BestOfSize.
  void ComputeBestOfSize(int max_size);
  uint64_t BestOfSize(uint32_t subset, int j) const {
    return best_of_size_[static_cast<size_t>(subset) * (size() + 1) + j];
  }

 private:
  std::vector<int> members_;
  std::vector<uint64_t> score_;
  std::vector<uint64_t> best_of_size_;  // 2^m x (m + 1)
};

}  // namespace gpusched::core::placement
