#include "daemon/core/sharing/node_waste.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace gpusched::core::sharing {
namespace {

// Per size: how many of the mix's tasks ask for it and their CPU and memory
// summed. Index kWholeGpuMilli holds whole GPUs, counted per GPU.
struct SizeTotals {
  std::vector<double> count = std::vector<double>(kWholeGpuMilli + 1, 0);
  std::vector<double> cpu_milli = std::vector<double>(kWholeGpuMilli + 1, 0);
  std::vector<double> memory_mib = std::vector<double>(kWholeGpuMilli + 1, 0);
  double fractional = 0;  // one-GPU shares
};

SizeTotals TotalsOf(const TaskMix& mix) {
  SizeTotals totals;
  for (size_t i = 0; i < mix.tasks.size(); ++i) {
    const ShareRequest& t = mix.tasks[i];
    const auto n = static_cast<double>(mix.counts[i]);
    int size = 0;
    if (t.num_gpus >= 1 && t.whole_gpus()) {
      size = kWholeGpuMilli;
      totals.count[size] += n * t.num_gpus;
    } else if (t.num_gpus == 1 && t.gpu_milli > 0) {
      size = t.gpu_milli;
      totals.count[size] += n;
      totals.fractional += n;
    } else {
      continue;
    }
    totals.cpu_milli[size] += n * static_cast<double>(t.cpu_milli);
    totals.memory_mib[size] += n * static_cast<double>(t.memory_mib);
  }
  return totals;
}

}  // namespace

NodeWaste::NodeWaste(const TaskMix& mix) : fill_(kWholeGpuMilli + 1) {
  const SizeTotals totals = TotalsOf(mix);
  std::vector<int> fillers;
  for (int size = 1; size < kWholeGpuMilli; ++size) {
    if (totals.count[size] > 0 && totals.count[size] >= kFillSizeShare * totals.fractional) fillers.push_back(size);
  }
  for (int h = 0; h <= kWholeGpuMilli; ++h) {
    Fill& best = fill_[h];
    best.leftover = h;
    for (int size : fillers) {
      if (size > h) continue;
      const Fill& rest = fill_[h - size];
      const double cpu = rest.cpu_milli + totals.cpu_milli[size] / totals.count[size];
      if (rest.leftover < best.leftover || (rest.leftover == best.leftover && cpu < best.cpu_milli)) {
        best = {rest.leftover, cpu, rest.memory_mib + totals.memory_mib[size] / totals.count[size]};
      }
    }
  }
  // A whole free GPU goes to a whole-GPU task when the mix has them, and is
  // filled by shares like any other when it has none.
  const double whole = totals.count[kWholeGpuMilli];
  if (whole > 0) {
    whole_gpu_task_ = Fill{0, totals.cpu_milli[kWholeGpuMilli] / whole, totals.memory_mib[kWholeGpuMilli] / whole};
    fill_[kWholeGpuMilli] = *whole_gpu_task_;
  }
}

int64_t NodeWaste::Growth(double before, double after) { return std::llround(after - before); }

double NodeWaste::Of(const PackNode& node) const {
  double unfillable = 0, fillable = 0, cpu_needed = 0, memory_needed = 0;
  for (int free : node.gpu_free_milli) {
    const Fill& f = fill_[free];
    unfillable += f.leftover;
    fillable += free - f.leftover;
    cpu_needed += f.cpu_milli;
    memory_needed += f.memory_mib;
  }
  // GPUs no share may take are filled by whole-GPU tasks alone, which need
  // the node's CPU and memory as much as the shares' fillers do.
  if (whole_gpu_task_) {
    const auto gpus = static_cast<double>(node.unshared_free_gpus);
    fillable += gpus * kWholeGpuMilli;
    cpu_needed += gpus * whole_gpu_task_->cpu_milli;
    memory_needed += gpus * whole_gpu_task_->memory_mib;
  }
  // The share of the fillable GPU share that the scarcer of CPU and memory
  // leaves unfed.
  double unfed = 0;
  if (cpu_needed > 0) unfed = std::max(unfed, 1 - static_cast<double>(node.cpu_free_milli) / cpu_needed);
  if (memory_needed > 0) unfed = std::max(unfed, 1 - static_cast<double>(node.memory_free_mib) / memory_needed);
  // Capped: a node the daemon sees with more taken than it has feeds none.
  unfed = std::min(unfed, 1.0);
  return unfillable + kStrandedWeight * fillable * unfed;
}

}  // namespace gpusched::core::sharing
