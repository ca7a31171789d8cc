#pragma once

#include <algorithm>

#include "gpusched/v1/types.pb.h"

namespace gpusched {

// How many of a gang's ranks a node's part holds: one per GPU or per MIG
// instance, one on a node without either. The daemon numbers the ranks by
// it (LaunchJob.rank_offset) and the CLI finds a rank's node by it.
inline int RanksOn(const v1::NodeAllocation& part) {
  return std::max({1, part.gpu_indices_size(), part.mig_slices_size()});
}

}  // namespace gpusched
