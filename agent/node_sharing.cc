#include "agent/node_sharing.h"

#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/runner/exec_path.h"
#include "agent/runner/rank_environment.h"
#include "common/share_mode_name.h"

namespace gpusched::agent {

absl::StatusOr<GpuSharing> StartGpuSharing(const AgentOptions& options, const v1::NodeInfo& node,
                                           const std::shared_ptr<spdlog::logger>& log,
                                           std::unique_ptr<MpsControlDaemon>* mps) {
  std::set<int32_t> indices;
  for (const v1::GpuInfo& gpu : node.gpus()) indices.insert(gpu.index());
  for (const auto& [index, mode] : options.gpu_share_modes) {
    if (!indices.contains(index)) {
      return absl::InvalidArgumentError(absl::StrCat("gpu_share_modes names GPU ", index, ", but ", node.name(),
                                                     " has GPUs ", absl::StrJoin(indices, ",")));
    }
  }
  for (const v1::GpuInfo& gpu : node.gpus()) {
    const bool mig = gpu.share_mode() == v1::GPU_SHARE_MODE_MIG;
    if (mig && !gpu.mig_enabled()) {
      return absl::InvalidArgumentError(absl::StrCat("GPU ", gpu.index(), " of ", node.name(),
                                                     " is set to be shared as MIG instances, but MIG mode is off "
                                                     "(nvidia-smi -i ",
                                                     gpu.index(), " -mig 1, then make instances)"));
    }
    if (!mig && gpu.mig_enabled()) {
      return absl::InvalidArgumentError(absl::StrCat("GPU ", gpu.index(), " of ", node.name(),
                                                     " is in MIG mode: it is shared as its MIG instances "
                                                     "(gpu_share_modes \"",
                                                     gpu.index(), "\" = \"mig\"), not ",
                                                     ShareModeName(gpu.share_mode())));
    }
  }
  GpuSharing sharing;
  std::vector<std::string> mps_gpus;
  for (const v1::GpuInfo& gpu : node.gpus()) {
    if (gpu.share_mode() == v1::GPU_SHARE_MODE_UNSPECIFIED || gpu.share_mode() == v1::GPU_SHARE_MODE_EXCLUSIVE)
      continue;
    sharing.modes[gpu.index()] = gpu.share_mode();
    if (gpu.share_mode() == v1::GPU_SHARE_MODE_MPS) {
      mps_gpus.push_back(gpu.uuid().empty() ? std::to_string(gpu.index()) : gpu.uuid());
    }
  }
  if (mps_gpus.empty()) return sharing;

  const std::map<std::string, std::string> env = InheritedAgentEnvironment();
  auto path = env.find("PATH");
  auto program = ResolveExecutable(options.mps_control_program, path == env.end() ? kFallbackPath : path->second);
  const std::string dir = options.mps_dir.empty() ? absl::StrCat(options.log_dir, "/mps") : options.mps_dir;
  MpsControlOptions mps_options;
  // Not found: kept as given, so that Ready() says what could not be run.
  mps_options.program = program.ok() ? *program : options.mps_control_program;
  mps_options.pipe_dir = absl::StrCat(dir, "/pipe");
  mps_options.log_dir = absl::StrCat(dir, "/log");
  mps_options.gpus = mps_gpus;
  mps_options.env = env;
  *mps = std::make_unique<MpsControlDaemon>(std::move(mps_options), log);
  if (absl::Status s = (*mps)->Start(); !s.ok()) return s;
  if (absl::Status ready = (*mps)->Ready(); !ready.ok()) {
    log->error("GPUs {} are shared through MPS, but {}; jobs with a share of them are refused until it runs",
               absl::StrJoin(mps_gpus, ","), std::string(ready.message()));
  }
  MpsControlDaemon* daemon = mps->get();
  sharing.mps_pipe_dir = daemon->pipe_dir();
  sharing.mps_log_dir = daemon->log_dir();
  sharing.mps_ready = [daemon] { return daemon->Ready(); };
  return sharing;
}

}  // namespace gpusched::agent
