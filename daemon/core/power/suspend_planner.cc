#include "daemon/core/power/suspend_planner.h"

#include <algorithm>
#include <utility>

#include "daemon/core/power/boot_planner.h"
#include "daemon/core/power/headroom.h"

namespace gpusched::core {

std::map<int, std::vector<std::string>> PlanSuspends(const SuspendInputs& in) {
  std::map<int, std::vector<std::string>> out;
  for (int p = 0; p < static_cast<int>(in.pools.size()); ++p) {
    const PoolSpec& pool = in.pools[p];
    if (!pool.may_suspend()) continue;
    std::vector<std::pair<absl::Time, std::string>> idle;
    for (const std::string& name : pool.nodes) {
      const NodeSlot* slot = in.cluster.Find(name);
      if (slot == nullptr || slot->state != v1::NODE_STATE_UP || !slot->jobs.empty() ||
          !slot->unconfirmed_kills.empty() || in.wanted.contains(name)) {
        continue;
      }
      auto since = in.idle_since.find(name);
      if (since == in.idle_since.end() || in.now - since->second < pool.idle_before_suspend) continue;
      idle.emplace_back(since->second, name);
    }
    std::sort(idle.begin(), idle.end());
    int spare = NodesOn(in.cluster, pool) - pool.min_nodes;
    int budget = p < static_cast<int>(in.suspend_budget.size()) ? in.suspend_budget[p] : -1;
    const int64_t keep = p < static_cast<int>(in.keep_free_gpus.size()) ? in.keep_free_gpus[p] : 0;
    int64_t free = keep > 0 ? FreeOrComing(in.cluster, pool, in.wanted) : 0;
    for (auto& [since, name] : idle) {
      if (spare <= 0 || budget == 0) break;
      const int64_t gpus = in.cluster.Find(name)->gpu_count;
      if (keep > 0 && free - gpus < keep) break;
      free -= gpus;
      out[p].push_back(std::move(name));
      --spare;
      if (budget > 0) --budget;
    }
  }
  return out;
}

}  // namespace gpusched::core
