#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "gpusched/v1/agent.pb.h"

namespace gpusched::agent {

// Everything about the node and the job's user that a rank's environment needs,
// passed in so that RankEnvironment stays a pure function.
struct RankEnvContext {
  std::map<std::string, std::string> agent_env;  // only PATH, LANG and TZ are passed on
  std::string user;                              // the job's user: USER, LOGNAME
  std::string home;
  std::string shell;
  std::string node_name;
  std::string advertise_address;  // MASTER_ADDR when the launch names none
  std::string job_log_dir;
  // What the node suggests (NCCL NIC hints, NCCL_TOPO_FILE): applied before
  // spec.env, so the job's own value wins.
  std::map<std::string, std::string> node_suggestions;
  // A GPU share's variables (GpuShareEnvironment), which win over the rest,
  // CUDA_VISIBLE_DEVICES included.
  std::map<std::string, std::string> share_env;
};

// How many processes this node starts for the job: one per allocated GPU (at
// least one, for CPU-only jobs) in per-GPU mode, exactly one in per-node mode.
int LocalProcessCount(const v1::LaunchJob& launch);

// The environment of local process `local_index` (0-based) of the job: a small
// clean base, then the node's suggestions, then spec.env, then the
// scheduler's variables, which always win. CUDA_VISIBLE_DEVICES keeps the
// order of launch.gpu_indices, the daemon's ring order: local rank i drives
// CUDA device i, so consecutive ranks sit on well-connected GPUs.
std::map<std::string, std::string> RankEnvironment(const v1::LaunchJob& launch, int local_index,
                                                   const RankEnvContext& context);

// The PATH a process the agent starts gets when the agent has none: a job
// without PATH could not find even `sh`, and daemons are often started so.
inline constexpr char kFallbackPath[] = "/usr/local/bin:/usr/bin:/bin";

// PATH, LANG and TZ of this process, for RankEnvContext::agent_env.
std::map<std::string, std::string> InheritedAgentEnvironment();

// The value of `key` in a prepared environment ("KEY=value" entries, as in
// ProcessSpec::env); "" when it is not set.
std::string EnvpValue(const std::vector<std::string>& envp, absl::string_view key);

}  // namespace gpusched::agent
