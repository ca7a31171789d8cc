#include "agent/runner/gpu_lookup.h"

namespace gpusched::agent {

std::optional<int> GpuPosition(const topology::NodeTopology& topo, int gpu_index) {
  for (int i = 0; i < topo.num_gpus(); ++i) {
    if (topo.gpus()[i].index == gpu_index) return i;
  }
  return std::nullopt;
}

}  // namespace gpusched::agent
