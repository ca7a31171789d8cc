#pragma once

// A small cluster for the core's fuzz targets: two 8-GPU nodes and one
// 4-GPU node, registered as agents would register them.
#include <string>

#include "common/clock.h"
#include "daemon/core/node_validator.h"
#include "daemon/core/scheduler_core.h"
#include "google/protobuf/stubs/logging.h"
#include "tests/fuzz/fuzz_target.h"

namespace gpusched::fuzz {

// Protobuf logs every string field with invalid UTF-8 it parses; fuzzed
// bytes are full of them, and the noise would bury a real report.
inline void QuietProtobufLogs() {
  static const bool quiet = [] {
    google::protobuf::SetLogHandler(nullptr);
    return true;
  }();
  (void)quiet;
}

inline v1::NodeInfo FuzzNode(const std::string& name, int gpus) {
  v1::NodeInfo info;
  info.set_name(name);
  info.set_address(name + ".example");
  info.set_cpus(64);
  info.set_memory_mb(512000);
  for (int i = 0; i < gpus; ++i) {
    v1::GpuInfo* gpu = info.add_gpus();
    gpu->set_index(i);
    gpu->set_uuid("GPU-" + name + "-" + std::to_string(i));
    gpu->set_model(gpus == 8 ? "NVIDIA H100 80GB HBM3" : "NVIDIA L40S");
    gpu->set_memory_mb(gpus == 8 ? 81559 : 46068);
  }
  return info;
}

inline void Register(core::SchedulerCore& core, const v1::NodeInfo& node, core::Effects& fx) {
  FUZZ_CHECK(core::ValidateNodeInfo(node).ok());
  v1::RegisterNode registration;
  *registration.mutable_node() = node;
  v1::RegisterAck ack;
  core.AgentRegistered(registration, fx, ack);
}

inline void RegisterSmallCluster(core::SchedulerCore& core, core::Effects& fx) {
  Register(core, FuzzNode("a", 8), fx);
  Register(core, FuzzNode("b", 8), fx);
  Register(core, FuzzNode("c", 4), fx);
}

}  // namespace gpusched::fuzz
