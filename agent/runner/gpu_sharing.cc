#include "agent/runner/gpu_sharing.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/runner/gpu_lookup.h"
#include "common/share_mode_name.h"

namespace gpusched::agent {

v1::GpuShareMode GpuSharing::ModeOf(int32_t index) const {
  auto it = modes.find(index);
  return it == modes.end() ? v1::GPU_SHARE_MODE_EXCLUSIVE : it->second;
}

absl::StatusOr<std::map<std::string, std::string>> GpuShareEnvironment(const v1::LaunchJob& launch,
                                                                       const GpuSharing& sharing,
                                                                       const topology::NodeTopology* topology,
                                                                       const std::string& node_name) {
  std::map<std::string, std::string> env;
  if (launch.mig_slices_size() > 0) return MigEnvironment(launch, sharing, topology, node_name);
  if (launch.gpu_share_milli() <= 0) return env;
  // A daemon from before the field existed shared only by time-slicing.
  const v1::GpuShareMode placed = launch.gpu_share_mode() == v1::GPU_SHARE_MODE_UNSPECIFIED
                                      ? v1::GPU_SHARE_MODE_TIMESLICE
                                      : launch.gpu_share_mode();
  for (int32_t index : launch.gpu_indices()) {
    const v1::GpuShareMode here = sharing.ModeOf(index);
    if (here == placed) continue;
    if (here == v1::GPU_SHARE_MODE_EXCLUSIVE) {
      return absl::FailedPreconditionError(absl::StrCat("the job asks for ", launch.gpu_share_milli() / 10.0,
                                                        "% of GPU ", index, ", but ", node_name,
                                                        " does not share it (gpu_share_mode = exclusive)"));
    }
    return absl::FailedPreconditionError(absl::StrCat("the job was placed on GPU ", index, " of ", node_name,
                                                      " shared by ", ShareModeName(placed),
                                                      ", but the node shares "
                                                      "it by ",
                                                      ShareModeName(here), " (gpu_share_mode)"));
  }
  env["GPUSCHED_GPU_SHARE_PERCENT"] = absl::StrCat(launch.gpu_share_milli() / 10.0);
  env["GPUSCHED_GPU_MEM_LIMIT_MB"] = std::to_string(launch.gpu_mem_limit_mb());
  env["GPUSCHED_GPU_SHARING"] = std::string(ShareModeName(placed));
  if (placed != v1::GPU_SHARE_MODE_MPS) {
    // Time-slicing: the scheduler kept the shares and memory within each
    // GPU; nothing on the GPU holds a job to them.
    env["GPUSCHED_GPU_LIMITS_ENFORCED"] = "0";
    return env;
  }
  if (!sharing.mps_ready) {
    return absl::FailedPreconditionError(absl::StrCat(node_name, " runs no MPS control daemon"));
  }
  if (absl::Status ready = sharing.mps_ready(); !ready.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the job's GPU limits cannot be enforced on ", node_name, ": ", ready.message()));
  }
  env["GPUSCHED_GPU_LIMITS_ENFORCED"] = "1";
  env["CUDA_MPS_PIPE_DIRECTORY"] = sharing.mps_pipe_dir;
  env["CUDA_MPS_LOG_DIRECTORY"] = sharing.mps_log_dir;
  env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] = std::to_string(std::max(1, launch.gpu_share_milli() / 10));
  std::vector<std::string> limits, devices;
  for (int i = 0; i < launch.gpu_indices_size(); ++i) {
    // Devices as the job's CUDA numbers them: in CUDA_VISIBLE_DEVICES order.
    limits.push_back(absl::StrCat(i, "=", launch.gpu_mem_limit_mb(), "M"));
    const int32_t index = launch.gpu_indices(i);
    std::optional<int> position = topology == nullptr ? std::nullopt : GpuPosition(*topology, index);
    const std::string uuid = position ? topology->gpus()[*position].uuid : "";
    devices.push_back(uuid.empty() ? std::to_string(index) : uuid);
  }
  env["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"] = absl::StrJoin(limits, ",");
  env["CUDA_VISIBLE_DEVICES"] = absl::StrJoin(devices, ",");
  return env;
}

absl::StatusOr<std::map<std::string, std::string>> MigEnvironment(const v1::LaunchJob& launch,
                                                                  const GpuSharing& sharing,
                                                                  const topology::NodeTopology* topology,
                                                                  const std::string& node_name) {
  std::vector<std::string> profiles;
  for (const v1::MigSlice& mig : launch.mig_slices()) {
    if (sharing.ModeOf(mig.gpu_index()) != v1::GPU_SHARE_MODE_MIG) {
      return absl::FailedPreconditionError(absl::StrCat("the job was placed on a MIG instance of GPU ", mig.gpu_index(),
                                                        ", but ", node_name,
                                                        " does not share that GPU as MIG "
                                                        "instances"));
    }
    std::optional<int> position = topology == nullptr ? std::nullopt : GpuPosition(*topology, mig.gpu_index());
    const auto* devices = position ? &topology->gpus()[*position].mig_devices : nullptr;
    const bool here = devices != nullptr && std::any_of(devices->begin(), devices->end(),
                                                        [&](const auto& d) { return d.uuid == mig.uuid(); });
    if (!here) {
      return absl::FailedPreconditionError(absl::StrCat("MIG instance ", mig.uuid(), " is not on GPU ", mig.gpu_index(),
                                                        " of ", node_name, " (was the GPU partitioned anew?)"));
    }
    profiles.push_back(mig.profile());
  }
  return std::map<std::string, std::string>{{"GPUSCHED_GPU_SHARING", "mig"},
                                            {"GPUSCHED_GPU_LIMITS_ENFORCED", "1"},
                                            {"GPUSCHED_MIG_PROFILE", absl::StrJoin(profiles, ",")}};
}

}  // namespace gpusched::agent
