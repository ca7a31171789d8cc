#pragma once

#include <cstdint>
#include <vector>

#include "daemon/core/sharing/share_request.h"

namespace gpusched::core::sharing {

// One node as the share packer sees it: what is still free of its CPU, its
// memory and each of its GPUs (in thousandths of that GPU).
struct PackNode {
  int model = 0;  // bit position in ShareRequest::allowed_models
  int64_t cpu_capacity_milli = 0;
  int64_t cpu_free_milli = 0;
  int64_t memory_free_mib = 0;
  std::vector<int> gpu_free_milli;  // one entry per GPU, 0..kWholeGpuMilli
  // Free GPUs that no share may take (the daemon's exclusive GPUs, beside
  // its shared ones): only whole-GPU tasks fill them, with the node's CPU
  // and memory. Not in gpu_free_milli.
  int unshared_free_gpus = 0;

  int64_t FreeGpuMilli() const;
  int64_t GpuCapacityMilli() const { return int64_t{kWholeGpuMilli} * static_cast<int64_t>(gpu_free_milli.size()); }
};

// Whether the node can host the task now: CPU, memory, model, and num_gpus
// distinct GPUs each with gpu_milli free (fully free ones for whole GPUs).
bool Fits(const PackNode& node, const ShareRequest& task);

// The distinct ways the node can host the task, each a list of GPU
// positions, told apart by what they leave behind: two GPUs with the same
// free share are one choice (the lower position stands for both), and
// whole-GPU tasks take the lowest fully free GPUs. A fractional task on
// several GPUs takes the tightest ones that fit. Empty when !Fits; one empty
// list for a CPU-only task that fits.
std::vector<std::vector<int>> DistinctGpuChoices(const PackNode& node, const ShareRequest& task);

// Takes the task's CPU, memory and gpu_milli of each listed GPU.
void Take(PackNode& node, const ShareRequest& task, const std::vector<int>& gpus);

}  // namespace gpusched::core::sharing
