#include "agent/runner/rank_environment.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/runner/preempt_notice.h"

namespace gpusched::agent {
namespace {

constexpr const char* kInherited[] = {"PATH", "LANG", "TZ"};

bool PerNode(const v1::LaunchJob& launch) { return launch.spec().launch_mode() == v1::LAUNCH_MODE_PER_NODE; }

}  // namespace

int LocalProcessCount(const v1::LaunchJob& launch) {
  if (PerNode(launch)) return 1;
  return std::max({1, launch.gpu_indices_size(), launch.mig_slices_size()});
}

std::map<std::string, std::string> RankEnvironment(const v1::LaunchJob& launch, int local_index,
                                                   const RankEnvContext& context) {
  std::map<std::string, std::string> env;
  for (const char* name : kInherited) {
    auto it = context.agent_env.find(name);
    if (it != context.agent_env.end()) env[name] = it->second;
  }
  // A job without PATH could not find even `sh`; daemons are often started with none.
  if (!env.contains("PATH")) env["PATH"] = kFallbackPath;
  env["HOME"] = context.home;
  env["USER"] = context.user;
  env["LOGNAME"] = context.user;
  env["SHELL"] = context.shell.empty() ? "/bin/sh" : context.shell;
  // CUDA numbers GPUs fastest first unless told otherwise; the indices in
  // CUDA_VISIBLE_DEVICES are NVML's, which follow the PCI bus. The two agree
  // only on nodes whose GPUs are all alike.
  env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";

  for (const auto& [key, value] : context.node_suggestions) env[key] = value;
  for (const auto& [key, value] : launch.spec().env()) env[key] = value;

  const bool per_node = PerNode(launch);
  const int gpus_here = std::max(launch.gpu_indices_size(), launch.mig_slices_size());
  const int local_rank = per_node ? 0 : local_index;
  const int local_world_size = std::max(1, gpus_here);
  // Defensive defaults so that a launch from an older or sloppy daemon still
  // describes a consistent single-node world rather than WORLD_SIZE=0.
  const int world_size = launch.world_size() > 0 ? launch.world_size() : LocalProcessCount(launch);
  const int nnodes = launch.nnodes() > 0 ? launch.nnodes() : 1;

  // "" rather than unset: an unset CUDA_VISIBLE_DEVICES shows every GPU of the node.
  env["CUDA_VISIBLE_DEVICES"] = absl::StrJoin(launch.gpu_indices(), ",");
  if (launch.mig_slices_size() > 0) {
    // CUDA drives one MIG instance per process: each rank gets its own; a
    // per-node process gets them all, in order.
    std::vector<std::string> uuids;
    for (const v1::MigSlice& mig : launch.mig_slices()) uuids.push_back(mig.uuid());
    env["CUDA_VISIBLE_DEVICES"] =
        per_node || local_index >= launch.mig_slices_size() ? absl::StrJoin(uuids, ",") : uuids[local_index];
  }
  env["WORLD_SIZE"] = std::to_string(world_size);
  env["RANK"] = std::to_string(launch.rank_offset() + local_rank);
  env["LOCAL_RANK"] = std::to_string(local_rank);
  env["LOCAL_WORLD_SIZE"] = std::to_string(local_world_size);
  env["NODE_RANK"] = std::to_string(launch.node_rank());
  env["NNODES"] = std::to_string(nnodes);
  env["MASTER_ADDR"] = launch.master_addr().empty() ? context.advertise_address : launch.master_addr();
  // No port from the daemon: leave whatever spec.env chose rather than invent one
  // that could collide with another job's rendezvous on this node.
  if (launch.master_port() > 0) env["MASTER_PORT"] = std::to_string(launch.master_port());
  for (const auto& [key, value] : context.share_env) env[key] = value;
  env["GPUSCHED_JOB_ID"] = std::to_string(launch.job_id());
  env["GPUSCHED_JOB_NAME"] = launch.spec().name();
  // How often it was requeued (preempted, or a node failed): a training
  // script resumes from its last checkpoint when this is not 0.
  env["GPUSCHED_RESTART_COUNT"] = std::to_string(launch.attempt());
  if (launch.has_array()) {
    // What a task of a sweep shards its work by; SLURM_ARRAY_* too, since
    // scripts written for Slurm arrays read those.
    const std::string array_id = std::to_string(launch.array().array_id());
    const std::string index = std::to_string(launch.array().index());
    const std::string count = std::to_string(launch.array().count());
    env["GPUSCHED_ARRAY_JOB_ID"] = env["SLURM_ARRAY_JOB_ID"] = array_id;
    env["GPUSCHED_ARRAY_TASK_ID"] = env["SLURM_ARRAY_TASK_ID"] = index;
    env["GPUSCHED_ARRAY_TASK_COUNT"] = env["SLURM_ARRAY_TASK_COUNT"] = count;
  }
  env["GPUSCHED_NODE"] = context.node_name;
  env["GPUSCHED_LOG_DIR"] = context.job_log_dir;
  env[kPreemptNoticeEnv] = PreemptNoticePath(context.job_log_dir);
  return env;
}

std::map<std::string, std::string> InheritedAgentEnvironment() {
  std::map<std::string, std::string> env;
  for (const char* name : kInherited) {
    if (const char* value = std::getenv(name)) env[name] = value;
  }
  return env;
}

std::string EnvpValue(const std::vector<std::string>& envp, absl::string_view key) {
  for (const std::string& entry : envp) {
    if (entry.size() > key.size() && entry[key.size()] == '=' && absl::StartsWith(entry, key)) {
      return entry.substr(key.size() + 1);
    }
  }
  return "";
}

}  // namespace gpusched::agent
