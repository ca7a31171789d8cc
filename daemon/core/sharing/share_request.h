#pragma once

#include <cstdint>

namespace gpusched::core::sharing {

// A GPU's capacity in shares: 1000 thousandths = the whole GPU, its memory
// and its compute time together (the unit of the Alibaba trace's gpu_milli).
inline constexpr int kWholeGpuMilli = 1000;

// What one task asks of one node: CPU, memory, and num_gpus distinct GPUs
// with gpu_milli of each. gpu_milli == kWholeGpuMilli is a whole GPU, which
// only a GPU nobody shares can give; below it the task shares a GPU.
struct ShareRequest {
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int num_gpus = 0;
  int gpu_milli = 0;  // per GPU; 0 when num_gpus == 0
  // Bit m set: GPU model m (an index the caller assigns) may serve the task.
  uint64_t allowed_models = ~uint64_t{0};

  bool whole_gpus() const { return gpu_milli >= kWholeGpuMilli; }
  int64_t total_gpu_milli() const { return int64_t{num_gpus} * gpu_milli; }

  friend bool operator==(const ShareRequest& a, const ShareRequest& b) {
    return a.cpu_milli == b.cpu_milli && a.memory_mib == b.memory_mib && a.num_gpus == b.num_gpus &&
           a.gpu_milli == b.gpu_milli && a.allowed_models == b.allowed_models;
  }
  template <typename H>
  friend H AbslHashValue(H h, const ShareRequest& r) {
    return H::combine(std::move(h), r.cpu_milli, r.memory_mib, r.num_gpus, r.gpu_milli, r.allowed_models);
  }
};

}  // namespace gpusched::core::sharing
