#pragma once

// Small cluster specs for the simulator's tests, on embedded fixtures.

#include <string>

namespace gpusched::sim::testing {

// PCIe-only 4-GPU node type (all GPU pairs NODE, no NICs in the fixture).
inline std::string L40sType() {
  return "[[node_type]]\n"
         "name = \"l40s\"\n"
         "topology = \"aws-g6e.12xlarge-4xL40S.txt\"\n"
         "gpu_model = \"NVIDIA L40S\"\n"
         "gpu_memory_mb = 46068\n"
         "cpus = 48\n"
         "memory_mb = 393216\n";
}

// `nodes` 4-GPU nodes n1..n<nodes> under one leaf switch.
inline std::string TinySpec(int nodes) {
  const std::string list = "n[1-" + std::to_string(nodes) + "]";
  return "name = \"tiny\"\n" + L40sType() + "[[nodes]]\nnames = \"" + list + "\"\ntype = \"l40s\"\n" +
         "[[switch]]\nname = \"leaf1\"\nnodes = \"" + list + "\"\n";
}

}  // namespace gpusched::sim::testing
