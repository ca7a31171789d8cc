#pragma once

#include <cstdint>
#include <deque>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "daemon/core/cluster_state.h"
#include "daemon/core/power/pool_spec.h"

namespace gpusched::core {

// Scaling on measured demand: the GPUs that jobs waited for, pass by pass,
// over a sliding window. A pool with `headroom` keeps that share of the
// window's peak free on its nodes that are on, so that a burst finds
// capacity booted and a lull does not power down what the next burst needs.
class DemandWindow {
 public:
  // The GPUs the jobs waiting for more nodes asked for at `now`.
  void Add(absl::Time now, int64_t gpus);
  // The most seen in (now - window, now].
  int64_t Peak(absl::Time now, absl::Duration window) const;
  // Forgets what is older than `keep` before now.
  void Forget(absl::Time now, absl::Duration keep);

 private:
  std::deque<std::pair<absl::Time, int64_t>> samples_;
};

// The free GPUs `pool` keeps on: headroom x the window's peak, rounded up.
int64_t HeadroomTarget(const PoolSpec& pool, const DemandWindow& demand, absl::Time now);

// The free GPUs `pool` keeps on for its target_utilization u: enough that
// the window's peak of its GPUs in use is u of its GPUs on, i.e.
// ceil(peak / u) minus what is in use now (0 when u is 0).
int64_t UtilizationTarget(const PoolSpec& pool, const DemandWindow& in_use, int64_t used_now, absl::Time now);

// GPUs in use on the pool's nodes now.
int64_t GpusInUse(const ClusterState& cluster, const PoolSpec& pool);

// The pool's GPUs free now or coming: free GPUs of its up nodes, and every
// GPU of its booting nodes that no waiting job counts on (`wanted`).
int64_t FreeOrComing(const ClusterState& cluster, const PoolSpec& pool, const std::set<std::string>& wanted);

// Powered-down nodes of `pool` to resume, in its order, so that
// FreeOrComing reaches `target`: at most `budget` (-1: no limit) and never
// past max_nodes (`on`: its nodes on or booting now).
std::vector<std::string> HeadroomResumes(const ClusterState& cluster, const PoolSpec& pool, int64_t target,
                                         int64_t free_or_coming, int budget, int on);

}  // namespace gpusched::core
