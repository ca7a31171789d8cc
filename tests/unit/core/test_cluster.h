#pragma once

// Hand-built clusters and specs for core tests.

#include <string>

#include "daemon/core/cluster_state.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::core::testing {

inline v1::NodeInfo MakeNode(const std::string& name, int gpus, int64_t cpus = 64, int64_t mem_mb = 512000) {
  v1::NodeInfo info;
  info.set_name(name);
  info.set_address("10.0.0." + std::to_string(name.size()));
  info.set_cpus(cpus);
  info.set_memory_mb(mem_mb);
  for (int i = 0; i < gpus; ++i) {
    v1::GpuInfo* gpu = info.add_gpus();
    gpu->set_index(i);
    gpu->set_uuid("GPU-" + name + "-" + std::to_string(i));
    gpu->set_model("NVIDIA H100 80GB HBM3");
    gpu->set_memory_mb(81559);
  }
  return info;
}

inline v1::JobSpec GpuJob(int64_t gpus, int64_t nodes = 0, int64_t gpus_per_node = 0) {
  v1::JobSpec spec;
  spec.add_argv("/bin/true");
  spec.mutable_resources()->set_gpus(gpus);
  spec.mutable_resources()->set_nodes(nodes);
  spec.mutable_resources()->set_gpus_per_node(gpus_per_node);
  return spec;
}

}  // namespace gpusched::core::testing
