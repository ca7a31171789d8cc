#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

#include "agent/runner/process_spawner.h"
#include "gpusched/v1/agent.pb.h"

namespace gpusched::agent {

// What the node contributes to every launch.
struct LaunchContext {
  std::string node_name;
  std::string log_dir;
  std::string advertise_address;
  std::map<std::string, std::string> agent_env;  // see RankEnvContext::agent_env
};

struct LaunchPlan {
  std::string job_log_dir;
  std::vector<ProcessSpec> processes;  // in local rank order
};

// <log_dir>/job-<id>
std::string JobLogDir(const std::string& log_dir, uint64_t job_id);

// Turns a LaunchJob into ready-to-spawn processes: resolves the user, the
// command (PATH lookup, or the script written to <job log dir>/script), the
// workdir and each rank's environment and log file. Creates the job's log
// directory. Errors are worded for the person who submitted the job.
absl::StatusOr<LaunchPlan> PrepareLaunch(const v1::LaunchJob& launch, const LaunchContext& context);

}  // namespace gpusched::agent
