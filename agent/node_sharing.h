#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "agent/agent.h"
#include "agent/runner/gpu_sharing.h"
#include "agent/runner/mps_control_daemon.h"
#include "gpusched/v1/types.pb.h"
#include "spdlog/logger.h"

namespace gpusched::agent {

// How the node's GPUs are shared, from the modes DescribeNode gave them.
// With MPS GPUs, starts the MPS control daemon for them into `*mps` (its
// failure to start is not an error here: launches under MPS are refused
// while it does not run, and it is retried). InvalidArgument when
// gpu_share_modes names a GPU the node does not have.
absl::StatusOr<GpuSharing> StartGpuSharing(const AgentOptions& options, const v1::NodeInfo& node,
                                           const std::shared_ptr<spdlog::logger>& log,
                                           std::unique_ptr<MpsControlDaemon>* mps);

}  // namespace gpusched::agent
