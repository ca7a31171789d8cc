#pragma once

#include <memory>

#include "daemon/core/policy/placement_policy.h"

namespace gpusched::core::policy {

// The NCCL-aware policy, gpusched's default. For a gang it picks, in order:
//  1. fewest nodes: one node when any can hold the gang;
//  2. the lowest common network tier: one NVLink domain, else one leaf
//     switch, else one spine, else anywhere (tiers from the nodes' labels or
//     the daemon's topology file);
//  3. within that: the highest estimated ring bandwidth (on each node, the
//     GPU subset and ring order placement::ChooseGpus picks: NVLinked sets
//     first, then NIC/CPU closeness, then what keeps islands whole);
//  4. best fit: the node or switch group left with the fewest free GPUs, so
//     idle nodes, whole NVLink islands and whole leaf groups stay free for
//     large gangs; then name order.
// The first-fit answer is always among the candidates, so this policy never
// estimates worse than first-fit for the same state and request.
//
// TOPOLOGY_MODE_ANY takes the first-fit answer. TOPOLOGY_MODE_STRICT takes
// a placement only when it reaches the bandwidth the same request would get
// on the idle cluster, and otherwise says what it waits for.
std::unique_ptr<PlacementPolicy> MakeTopologyPolicy();

}  // namespace gpusched::core::policy
