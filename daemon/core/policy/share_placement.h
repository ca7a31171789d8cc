#pragma once

#include "daemon/core/cluster_state.h"
#include "daemon/core/gang_request.h"
#include "daemon/core/policy/placement_policy.h"
#include "daemon/core/policy/share_packing.h"

namespace gpusched::core::policy {

// Where a job with a share of each of its GPUs goes (request.shares_gpus()):
// one up node of its queue with the CPUs and memory for it and
// request.total_gpus distinct GPUs that their node shares, each within the
// model and memory constraints and with the share and the GPU memory limit
// still free (a GPU a whole-GPU job holds is never one of them). Among those:
// best fit, so that the fewest GPUs are opened to sharing. On each node the
// GPUs left with the least share free after the job (already shared ones
// before fresh ones), then those whose free peers a gang would miss least
// (NodeSlot::FreePeerGbps); across nodes the smallest such leftover, then
// the node whose GPUs are most shared already, then the node with the fewest
// whole GPUs free (an idle node stays whole for gangs), then the least peer
// bandwidth taken, then node name order. A share of one
// GPU is read off ClusterState::share_index() in that order, without a scan
// of the nodes. Every placement policy places shares this way
// (PlacementPolicy::Place).
//
// With spread packing, the reverse: on each node the GPUs with the most
// share free, across nodes the most share left, then the node with the most
// whole GPUs free, then the most peer bandwidth left; a share of one GPU is
// read off the share index from the top.
//
// With FGD packing, every node's choice (the tightest GPUs of each sharing
// mechanism, and for a share of one GPU each distinct free share that fits)
// is weighed by how much it grows the node's fragmentation expected over
// weighing.mix (sharing::FragmentSum over the node's shared GPUs), the
// least growth first, best fit among equals. It reads every node: slower
// than best fit's index on large clusters.
PlacementResult PlaceShares(const ClusterState& cluster, const GangRequest& request,
                            const ShareWeighing& weighing = {});

// The GPU memory (MB) the request holds on a GPU with `gpu_memory_mb`: its
// explicit limit, else its share of the GPU's memory.
int64_t ShareMemMb(const GangRequest& request, int64_t gpu_memory_mb);

}  // namespace gpusched::core::policy
