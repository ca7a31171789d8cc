#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>

#include "daemon/core/effects.h"
#include "daemon/metrics/registry.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::metrics {

// Nodes and GPUs as the scheduler counts them, kept from the node rows the
// core writes whenever a node registers or changes state (Effects::nodes)
// and the usage it notes whenever a node gains or loses a job
// (Effects::node_usage).
//
//   gpusched_nodes{state}             up, not_responding, down, and for the
//                                     nodes of elastic pools powered_down,
//                                     powering_up, powering_down
//   gpusched_node_state{node, state}  1 for the node's state, 0 for the others
//   gpusched_gpus{state}              allocated: held by a job; free: unallocated
//                                     on an up node; down: unallocated on a node
//                                     that is not up (nothing can start there);
//                                     drained: unallocated on an up node that an
//                                     operator drained; powered_down: unallocated
//                                     on a pool node that is off or powering up
//                                     or down (by design, unlike down)
//   gpusched_gpu_part{node, gpu, job, kind}
//                                     the part of a GPU a job holds when it
//                                     does not hold it whole: kind "share" (its
//                                     share, 0.3 for 30%) or "mig" (a MIG
//                                     instance, its slices of seven); gone when
//                                     the job lets go
class NodeMetrics {
 public:
  explicit NodeMetrics(Registry& registry);

  void Update(const v1::Node& node);
  void Update(const std::string& name, const core::NodeUsage& usage);

 private:
  static constexpr int kStates = 6;  // kStateLabels
  static constexpr int kGpuStates = 5;
  enum GpuState { kAllocated = 0, kFree = 1, kDown = 2, kDrained = 3, kPoweredDown = 4 };
  struct Tracked {
    int state = -1;                          // index into kStates, -1 before the first update
    std::array<int64_t, kGpuStates> gpus{};  // by GpuState
    std::array<Gauge*, kStates> state_gauges{};
    std::map<core::NodeUsage::PartHolder, Gauge*> parts;  // milli left 0 in the key
  };

  static int StateIndex(v1::NodeState state);
  static std::array<int64_t, kGpuStates> CountGpus(const core::NodeUsage& usage);
  void UpdateParts(const std::string& name, Tracked& t, const std::vector<core::NodeUsage::PartHolder>& parts);

  Family<Gauge>& node_state_;
  Family<Gauge>& gpu_part_;
  std::array<Gauge*, kStates> nodes_;
  std::array<Gauge*, kGpuStates> gpus_;
  std::map<std::string, Tracked> tracked_;
};

}  // namespace gpusched::metrics
