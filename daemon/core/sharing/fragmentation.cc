#include "daemon/core/sharing/fragmentation.h"

#include "absl/container/flat_hash_map.h"

namespace gpusched::core::sharing {

TaskMix TaskMix::Of(const std::vector<ShareRequest>& requests) {
  TaskMix mix;
  absl::flat_hash_map<ShareRequest, size_t> index;
  for (const ShareRequest& r : requests) {
    auto [it, inserted] = index.emplace(r, mix.tasks.size());
    if (inserted) {
      mix.tasks.push_back(r);
      mix.counts.push_back(0);
    }
    ++mix.counts[it->second];
  }
  mix.total = static_cast<int64_t>(requests.size());
  return mix;
}

int64_t Fragment(const PackNode& node, const ShareRequest& task) {
  const int64_t free = node.FreeGpuMilli();
  if (task.num_gpus == 0 || !Fits(node, task)) return free;
  int64_t unusable = 0;
  for (int g : node.gpu_free_milli) {
    if (g < task.gpu_milli) unusable += g;
  }
  return unusable;
}

int64_t FragmentSum(const PackNode& node, const TaskMix& mix) {
  int64_t sum = 0;
  for (size_t i = 0; i < mix.tasks.size(); ++i) sum += mix.counts[i] * Fragment(node, mix.tasks[i]);
  return sum;
}

double ExpectedFragment(const PackNode& node, const TaskMix& mix) {
  if (mix.total == 0) return 0;
  return static_cast<double>(FragmentSum(node, mix)) / static_cast<double>(mix.total);
}

}  // namespace gpusched::core::sharing
