#pragma once

#include <optional>

#include "common/topology/node_topology.h"

namespace gpusched::agent {

// Position in topo.gpus() of the GPU whose CUDA/NVML index is `gpu_index`.
// The daemon names GPUs by index; the topology's matrices are by position,
// and the two only coincide when every GPU was discovered.
std::optional<int> GpuPosition(const topology::NodeTopology& topo, int gpu_index);

}  // namespace gpusched::agent
