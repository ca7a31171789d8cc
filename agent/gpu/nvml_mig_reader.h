#pragma once

#include <vector>

#include "agent/gpu/nvml_library.h"
#include "common/topology/node_topology.h"

namespace gpusched::agent {

// The MIG devices of a GPU in MIG mode, by index. A device that cannot say
// its UUID is left out (no job could be pointed at it); one without a name
// NVML can give gets its profile from its slices and memory ("3g.40gb").
// Empty when the driver lacks the MIG calls.
std::vector<topology::MigDevice> ReadMigDevices(const NvmlApi& api, nvml::nvmlDevice_t gpu);

// "3g.40gb" out of a MIG device's name, "NVIDIA A100-SXM4-80GB MIG 3g.40gb";
// "" when the name has no " MIG " part.
std::string MigProfileFromName(const std::string& name);

}  // namespace gpusched::agent
