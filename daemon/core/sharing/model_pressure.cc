#include "daemon/core/sharing/model_pressure.h"

#include <bit>
#include <cstddef>
#include <cstdint>

namespace gpusched::core::sharing {
namespace {
constexpr int kModels = 64;  // bits of ShareRequest::allowed_models
}  // namespace

std::vector<double> ModelPressure(const std::vector<PackNode>& nodes, const TaskMix& mix) {
  std::vector<double> capacity(kModels, 0);
  double total_capacity = 0;
  uint64_t present = 0;
  for (const PackNode& n : nodes) {
    capacity[n.model] += static_cast<double>(n.GpuCapacityMilli());
    total_capacity += static_cast<double>(n.GpuCapacityMilli());
    present |= uint64_t{1} << n.model;
  }
  std::vector<double> limited_demand(kModels, 0);
  double total_demand = 0;
  for (size_t i = 0; i < mix.tasks.size(); ++i) {
    const ShareRequest& t = mix.tasks[i];
    const double demand = static_cast<double>(mix.counts[i] * t.total_gpu_milli());
    total_demand += demand;
    const uint64_t allowed = t.allowed_models & present;
    // A task every model serves presses on none; one no model serves is
    // rejected wherever it arrives.
    if (allowed == present || allowed == 0) continue;
    double allowed_capacity = 0;
    for (uint64_t bits = allowed; bits != 0; bits &= bits - 1) allowed_capacity += capacity[std::countr_zero(bits)];
    if (allowed_capacity <= 0) continue;
    for (uint64_t bits = allowed; bits != 0; bits &= bits - 1) {
      const int m = std::countr_zero(bits);
      limited_demand[m] += demand * capacity[m] / allowed_capacity;
    }
  }
  std::vector<double> pressure(kModels, 0);
  if (total_demand <= 0) return pressure;
  for (int m = 0; m < kModels; ++m) {
    if (capacity[m] > 0) pressure[m] = limited_demand[m] / total_demand * total_capacity / capacity[m];
  }
  return pressure;
}

}  // namespace gpusched::core::sharing
