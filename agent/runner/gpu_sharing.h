#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/topology/node_topology.h"
#include "gpusched/v1/agent.pb.h"

namespace gpusched::agent {

// How this node shares its GPUs, as a launch needs to know it.
struct GpuSharing {
  // By GPU index; a GPU not listed is exclusive.
  std::map<int32_t, v1::GpuShareMode> modes;
  // Where the agent's MPS control daemon listens (MpsControlDaemon).
  std::string mps_pipe_dir;
  std::string mps_log_dir;
  // OK while that daemon runs; null: this node has no MPS GPUs.
  std::function<absl::Status()> mps_ready;

  v1::GpuShareMode ModeOf(int32_t index) const;
};

// The environment a job with a share of its GPUs gets on top of the usual
// one, or why it may not start here: the node does not share those GPUs the
// way the daemon placed the job (another daemon's idea of this node), or its
// MPS control daemon is not running, so the limits could not be enforced.
//
// Every shared job gets GPUSCHED_GPU_SHARE_PERCENT, _MEM_LIMIT_MB, _SHARING
// (timeslice or mps) and GPUSCHED_GPU_LIMITS_ENFORCED (1 under MPS). Under
// MPS also CUDA's: the daemon's pipe and log directories, the share as
// CUDA_MPS_ACTIVE_THREAD_PERCENTAGE (whole percent, rounded down, at least
// 1), the memory limit on every device as CUDA_MPS_PINNED_DEVICE_MEM_LIMIT,
// and CUDA_VISIBLE_DEVICES by UUID where the topology has them, which is how
// MPS clients name devices unambiguously.
absl::StatusOr<std::map<std::string, std::string>> GpuShareEnvironment(const v1::LaunchJob& launch,
                                                                       const GpuSharing& sharing,
                                                                       const topology::NodeTopology* topology,
                                                                       const std::string& node_name);

// A MIG job's variables (GPUSCHED_GPU_SHARING=mig, _LIMITS_ENFORCED=1 and
// GPUSCHED_MIG_PROFILE), once each of its instances is on this node: a GPU
// the node shares as MIG instances, with that instance's UUID. Its
// CUDA_VISIBLE_DEVICES are per rank (RankEnvironment).
absl::StatusOr<std::map<std::string, std::string>> MigEnvironment(const v1::LaunchJob& launch,
                                                                  const GpuSharing& sharing,
                                                                  const topology::NodeTopology* topology,
                                                                  const std::string& node_name);

}  // namespace gpusched::agent
