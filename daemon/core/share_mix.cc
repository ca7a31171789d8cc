#include "daemon/core/share_mix.h"

#include <algorithm>

namespace gpusched::core {

sharing::TaskMix ShareMixOf(const std::vector<GangRequest>& requests) {
  std::vector<sharing::ShareRequest> tasks;
  tasks.reserve(requests.size());
  for (const GangRequest& r : requests) {
    if (r.wants_mig()) continue;
    const int64_t per_node = r.gpus_per_node > 0 ? r.gpus_per_node : r.total_gpus;
    sharing::ShareRequest task;
    task.cpu_milli = r.CpusFor(per_node) * 1000;
    task.memory_mib = r.MemFor(per_node);
    task.num_gpus = static_cast<int>(std::min<int64_t>(per_node, 64));
    task.gpu_milli = per_node == 0 ? 0 : r.shares_gpus() ? r.gpu_share_milli : sharing::kWholeGpuMilli;
    tasks.push_back(task);
  }
  return sharing::TaskMix::Of(tasks);
}

}  // namespace gpusched::core
