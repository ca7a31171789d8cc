#include "daemon/core/power/headroom.h"

#include <algorithm>
#include <cmath>

#include "common/job_states.h"

namespace gpusched::core {

void DemandWindow::Add(absl::Time now, int64_t gpus) {
  // Only the peak matters: a sample no larger than a later one never is.
  while (!samples_.empty() && samples_.back().second <= gpus) samples_.pop_back();
  samples_.emplace_back(now, gpus);
}

int64_t DemandWindow::Peak(absl::Time now, absl::Duration window) const {
  int64_t peak = 0;
  for (auto it = samples_.rbegin(); it != samples_.rend() && now - it->first < window; ++it) {
    peak = std::max(peak, it->second);
  }
  return peak;
}

void DemandWindow::Forget(absl::Time now, absl::Duration keep) {
  while (!samples_.empty() && now - samples_.front().first >= keep) samples_.pop_front();
}

int64_t HeadroomTarget(const PoolSpec& pool, const DemandWindow& demand, absl::Time now) {
  if (pool.headroom <= 0 || !pool.elastic()) return 0;
  return static_cast<int64_t>(std::ceil(pool.headroom * static_cast<double>(demand.Peak(now, pool.demand_window))));
}

int64_t UtilizationTarget(const PoolSpec& pool, const DemandWindow& in_use, int64_t used_now, absl::Time now) {
  if (pool.target_utilization <= 0 || !pool.elastic()) return 0;
  const int64_t peak = std::max(in_use.Peak(now, pool.demand_window), used_now);
  const auto wanted_on = static_cast<int64_t>(std::ceil(static_cast<double>(peak) / pool.target_utilization - 1e-9));
  return std::max<int64_t>(0, wanted_on - used_now);
}

int64_t GpusInUse(const ClusterState& cluster, const PoolSpec& pool) {
  int64_t used = 0;
  for (const std::string& name : pool.nodes) {
    const NodeSlot* slot = cluster.Find(name);
    if (slot != nullptr && !IsPowerState(slot->state)) used += slot->gpu_count - slot->FreeGpus();
  }
  return used;
}

int64_t FreeOrComing(const ClusterState& cluster, const PoolSpec& pool, const std::set<std::string>& wanted) {
  int64_t free = 0;
  for (const std::string& name : pool.nodes) {
    const NodeSlot* slot = cluster.Find(name);
    if (slot == nullptr) continue;
    if (slot->accepts_jobs()) free += slot->FreeGpus();
    if (slot->state == v1::NODE_STATE_POWERING_UP && !wanted.contains(name)) free += slot->gpu_count;
  }
  return free;
}

std::vector<std::string> HeadroomResumes(const ClusterState& cluster, const PoolSpec& pool, int64_t target,
                                         int64_t free_or_coming, int budget, int on) {
  std::vector<std::string> out;
  for (const std::string& name : pool.nodes) {
    if (free_or_coming >= target || budget == 0 || on >= pool.max_nodes) break;
    const NodeSlot* slot = cluster.Find(name);
    if (slot == nullptr || slot->state != v1::NODE_STATE_POWERED_DOWN) continue;
    out.push_back(name);
    free_or_coming += slot->gpu_count;
    ++on;
    if (budget > 0) --budget;
  }
  return out;
}

}  // namespace gpusched::core
