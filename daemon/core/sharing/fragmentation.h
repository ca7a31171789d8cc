#pragma once

#include <cstdint>
#include <vector>

#include "daemon/core/sharing/pack_node.h"
#include "daemon/core/sharing/share_request.h"

namespace gpusched::core::sharing {

// The tasks a cluster expects, each with how often it occurs. The
// fragmentation measures below are expectations over this mix.
struct TaskMix {
  std::vector<ShareRequest> tasks;
  std::vector<int64_t> counts;
  int64_t total = 0;

  // Each distinct request once, weighted by how often it occurs.
  static TaskMix Of(const std::vector<ShareRequest>& requests);
};

// FGD's fragment of a node for one task (Weng et al., USENIX ATC '23), in
// GPU thousandths: the free GPU share the task could not use. All of the
// node's free share when the task cannot run there at all (CPU, memory,
// model or too few fitting GPUs) or asks for no GPU; otherwise the free
// share of each GPU with less free than the task asks per GPU.
int64_t Fragment(const PackNode& node, const ShareRequest& task);

// The fragment expected for the next task drawn from the mix, times
// mix.total: exact, so that equal expectations compare equal.
int64_t FragmentSum(const PackNode& node, const TaskMix& mix);

// The fragment expected for the next task drawn from the mix.
double ExpectedFragment(const PackNode& node, const TaskMix& mix);

}  // namespace gpusched::core::sharing
