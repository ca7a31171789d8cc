#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "daemon/core/cluster_state.h"
#include "daemon/core/gang_request.h"
#include "daemon/core/policy/placement_policy.h"

namespace gpusched::core {

// A running gang that a waiting job of a higher tier may evict.
struct PreemptionCandidate {
  uint64_t job_id = 0;
  const v1::Allocation* allocation = nullptr;
  // What evicting it throws away: its GPUs times how long it has run (the
  // work since its last checkpoint, at worst).
  double gpu_seconds_lost = 0;
  int64_t tier = 0;
};

struct PreemptionPlan {
  std::vector<uint64_t> victims;  // whole gangs, cheapest first
  v1::Allocation allocation;      // where the job goes once they are gone
  double gpu_seconds_lost = 0;
};

// Which gangs to evict so that `request` can be placed well, losing little
// work. Two orders of the candidates are tried: by work lost (lower tier
// first on a tie), and grouped by node, the nodes it would free most GPUs of
// first. For each, the shortest prefix whose release lets `policy` place the
// job (freeing more never makes a placement impossible), then every victim
// the placement can do without is spared, most expensive first. The plan
// whose placement spans fewer nodes with a faster ring wins, then the one
// losing less work (for a TOPOLOGY_MODE_ANY job only the work). The policy
// places the job on the freed cluster as it would on any other, so a strict
// job still gets an ideal placement. nullopt when evicting every candidate is
// not enough. `cluster` is changed while searching and left as it was.
// With PreemptionOrder::kLeastUtilizedNodes (best-fit's compaction) only
// one order is tried: the candidates grouped by node, the least utilized
// nodes first.
std::optional<PreemptionPlan> PlanPreemption(ClusterState& cluster, PlacementPolicy& policy, const GangRequest& request,
                                             std::vector<PreemptionCandidate> candidates);

}  // namespace gpusched::core
