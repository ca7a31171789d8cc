#pragma once

#include "absl/status/statusor.h"

#include "gpusched/v1/types.pb.h"

namespace gpusched::agent {

// Where a node's GPUs come from: NVML on real hardware, fixtures and fakes in
// tests and `gpuschedd dev`. Discover() fills what the source knows (at least
// the GPUs); the agent adds name, address, labels and whatever stays unset.
class TopologySource {
 public:
  virtual ~TopologySource() = default;
  virtual absl::StatusOr<v1::NodeInfo> Discover() = 0;
};

}  // namespace gpusched::agent
