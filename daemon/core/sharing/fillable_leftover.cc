#include "daemon/core/sharing/fillable_leftover.h"

#include <algorithm>

namespace gpusched::core::sharing {

std::vector<int> FillableLeftovers(const TaskMix& mix) {
  std::vector<int64_t> count_by_size(kWholeGpuMilli, 0);
  int64_t fractional = 0;
  for (size_t i = 0; i < mix.tasks.size(); ++i) {
    const ShareRequest& t = mix.tasks[i];
    if (t.num_gpus != 1 || t.whole_gpus() || t.gpu_milli <= 0) continue;
    count_by_size[t.gpu_milli] += mix.counts[i];
    fractional += mix.counts[i];
  }
  std::vector<int> sizes;
  for (int size = 1; size < kWholeGpuMilli; ++size) {
    if (count_by_size[size] > 0 &&
        static_cast<double>(count_by_size[size]) >= kFillSizeShare * static_cast<double>(fractional)) {
      sizes.push_back(size);
    }
  }
  std::vector<int> leftover(kWholeGpuMilli + 1, 0);
  for (int h = 0; h < kWholeGpuMilli; ++h) {
    leftover[h] = h;
    for (int size : sizes) {
      if (size <= h) leftover[h] = std::min(leftover[h], leftover[h - size]);
    }
  }
  leftover[kWholeGpuMilli] = 0;
  return leftover;
}

}  // namespace gpusched::core::sharing
