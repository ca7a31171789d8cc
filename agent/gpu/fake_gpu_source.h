#pragma once

#include <cstdint>
#include <string>

#include "agent/gpu/topology_source.h"

namespace gpusched::agent {

// N identical GPUs that exist only on paper, so that an agent can run GPU jobs
// on a machine without any (the processes see CUDA_VISIBLE_DEVICES all the same).
// Nothing is known about how they are wired, so every pair reads as SYS.
class FakeGpuSource final : public TopologySource {
 public:
  FakeGpuSource(std::string node_name, int count, std::string model, int64_t memory_mb);
  absl::StatusOr<topology::NodeTopology> Discover() override;

 private:
  std::string node_name_;
  int count_;
  std::string model_;
  int64_t memory_mb_;
};

}  // namespace gpusched::agent
