#include "daemon/core/sharing/pack_node.h"

#include <algorithm>
#include <numeric>

namespace gpusched::core::sharing {
namespace {

bool HostsApartFromGpus(const PackNode& node, const ShareRequest& task) {
  return node.cpu_free_milli >= task.cpu_milli && node.memory_free_mib >= task.memory_mib &&
         (task.num_gpus == 0 || (task.allowed_models >> node.model) & 1);
}

int GpusWithAtLeast(const PackNode& node, int milli) {
  return static_cast<int>(std::count_if(node.gpu_free_milli.begin(), node.gpu_free_milli.end(),
                                        [milli](int free) { return free >= milli; }));
}

}  // namespace

int64_t PackNode::FreeGpuMilli() const {
  return std::accumulate(gpu_free_milli.begin(), gpu_free_milli.end(), int64_t{0});
}

bool Fits(const PackNode& node, const ShareRequest& task) {
  if (!HostsApartFromGpus(node, task)) return false;
  return task.num_gpus == 0 || GpusWithAtLeast(node, task.gpu_milli) >= task.num_gpus;
}

std::vector<std::vector<int>> DistinctGpuChoices(const PackNode& node, const ShareRequest& task) {
  std::vector<std::vector<int>> choices;
  if (!Fits(node, task)) return choices;
  const int n = static_cast<int>(node.gpu_free_milli.size());
  if (task.num_gpus == 0) {
    choices.emplace_back();
  } else if (task.whole_gpus() || task.num_gpus > 1) {
    // Positions that fit, tightest first (for whole GPUs all are equal, so
    // this is position order).
    std::vector<int> fitting;
    for (int g = 0; g < n; ++g) {
      if (node.gpu_free_milli[g] >= task.gpu_milli) fitting.push_back(g);
    }
    std::stable_sort(fitting.begin(), fitting.end(),
                     [&](int a, int b) { return node.gpu_free_milli[a] < node.gpu_free_milli[b]; });
    fitting.resize(task.num_gpus);
    std::sort(fitting.begin(), fitting.end());
    choices.push_back(std::move(fitting));
  } else {
    std::vector<int> seen_free;
    for (int g = 0; g < n; ++g) {
      const int free = node.gpu_free_milli[g];
      if (free < task.gpu_milli) continue;
      if (std::find(seen_free.begin(), seen_free.end(), free) != seen_free.end()) continue;
      seen_free.push_back(free);
      choices.push_back({g});
    }
  }
  return choices;
}

void Take(PackNode& node, const ShareRequest& task, const std::vector<int>& gpus) {
  node.cpu_free_milli -= task.cpu_milli;
  node.memory_free_mib -= task.memory_mib;
  for (int g : gpus) node.gpu_free_milli[g] -= task.gpu_milli;
}

}  // namespace gpusched::core::sharing
