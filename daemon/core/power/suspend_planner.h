#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "daemon/core/cluster_state.h"
#include "daemon/core/power/pool_spec.h"

namespace gpusched::core {

struct SuspendInputs {
  const ClusterState& cluster;
  const std::vector<PoolSpec>& pools;
  // When each pool node that is up was last seen with no job (absent: it
  // has one, or is not up).
  const std::map<std::string, absl::Time>& idle_since;
  absl::Time now;
  // Per pool: how many nodes it may suspend now under suspends_per_minute (-1: no limit).
  std::vector<int> suspend_budget;
  // Nodes a boot plan counts on this pass: never suspended under it.
  const std::set<std::string>& wanted;
  // Per pool: the free GPUs its headroom keeps on (power/headroom.h); empty: none.
  std::vector<int64_t> keep_free_gpus = {};
};

// Per pool index, the nodes to power down now: up, without a job or a kill
// still awaited, idle for the pool's idle_before_suspend, and only while the
// pool keeps min_nodes on and the free GPUs of its headroom, and within its
// rate. Longest idle first. Pure.
std::map<int, std::vector<std::string>> PlanSuspends(const SuspendInputs& in);

}  // namespace gpusched::core
