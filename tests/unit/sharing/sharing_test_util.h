#pragma once

// Nodes and tasks small enough to reason about by hand, for the sharing tests.

#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

#include "daemon/core/sharing/fragmentation.h"
#include "daemon/core/sharing/pack_node.h"
#include "daemon/core/sharing/share_request.h"

namespace gpusched::core::sharing::testing {

// A node of 64 cores and 64 GiB with these GPUs free (thousandths each).
inline PackNode Node(std::vector<int> gpu_free, int64_t cpu_free = 32000, int model = 0) {
  PackNode n;
  n.model = model;
  n.cpu_capacity_milli = 64000;
  n.cpu_free_milli = cpu_free;
  n.memory_free_mib = 65536;
  n.gpu_free_milli = std::move(gpu_free);
  return n;
}

// A task of `num_gpus` GPUs at `gpu_milli` each, one core and 1 GiB unless told.
inline ShareRequest Task(int num_gpus, int gpu_milli, int64_t cpu = 1000) {
  ShareRequest r;
  r.cpu_milli = cpu;
  r.memory_mib = 1024;
  r.num_gpus = num_gpus;
  r.gpu_milli = gpu_milli;
  return r;
}

// The mix of `n` copies of each task.
inline TaskMix MixOf(std::initializer_list<std::pair<ShareRequest, int>> counts) {
  std::vector<ShareRequest> requests;
  for (const auto& [task, n] : counts) requests.insert(requests.end(), n, task);
  return TaskMix::Of(requests);
}

}  // namespace gpusched::core::sharing::testing
