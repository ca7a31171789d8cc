#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "daemon/core/cluster_state.h"
#include "daemon/core/gang_request.h"
#include "daemon/core/pass_plan.h"
#include "daemon/core/policy/placement_policy.h"
#include "daemon/core/power/pool_spec.h"

namespace gpusched::core {

// Which powered-down nodes to resume so that jobs the running nodes cannot
// take can start. Pure: a what-if placement on a copy of the cluster in
// which booting nodes count as up and powered-down ones are added pool by
// pool (reserved, then spot, then on-demand, cheaper first), so that a job
// gets exactly the nodes its gang needs, all of them at once, from the
// cheapest pools that can hold it.

struct BootWaiter {
  uint64_t job_id = 0;
  GangRequest request;
};

// One gang that waits for nodes to boot (job_id 0: nodes resumed to keep a
// pool at its min_nodes).
struct GangBoot {
  uint64_t job_id = 0;
  std::vector<std::string> waits_for;  // every node of its placement not up yet
  std::vector<std::string> to_resume;  // the part of waits_for this plan resumes
};

struct BootInputs {
  const ClusterState& cluster;
  PlacementPolicy& policy;
  const std::vector<PoolSpec>& pools;
  const std::map<std::string, int>& pool_of;  // node -> index in pools
  // Per pool: how many nodes it may resume now under resumes_per_minute
  // (-1: no limit); and whether it resumed none in the last minute (a gang
  // larger than the rate may then go, whole and alone).
  std::vector<int> resume_budget;
  std::vector<bool> resumed_none_lately;
  // How many waiters the plan tries, so that a pass stays bounded.
  size_t max_waiters = 32;
  // The pass's reservations (null: none). Their free GPUs are no room for
  // the waiters ranked after their owners, which the pass kept off them: a
  // job behind a reservation boots a node of its own, as if they were taken.
  const std::vector<PlannedReservation>* reservations = nullptr;
};

struct BootPlan {
  std::vector<GangBoot> gangs;
  // Jobs that would fit on nodes their pools may not resume (max_nodes, the
  // rate), and why: their wait reason.
  std::vector<std::pair<uint64_t, std::string>> refused;
};

// `waiting`: the jobs a pass left waiting that more nodes would help, in
// the order the pass ranked them.
BootPlan PlanBoots(const BootInputs& in, const std::vector<BootWaiter>& waiting);

// The pool's nodes that are on or coming (neither powered down nor DOWN).
int NodesOn(const ClusterState& cluster, const PoolSpec& pool);

}  // namespace gpusched::core
