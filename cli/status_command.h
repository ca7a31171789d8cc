#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/command_context.h"
#include "gpusched/v1/scheduler.pb.h"

namespace gpusched::cli {

struct StatusOptions {
  std::optional<std::string> job;
  bool all = false;
  std::vector<std::string> states;
  std::optional<std::string> user;
  std::optional<std::string> queue;
  bool json = false;
};

// The list query: the given --state values, else every state with --all, else
// the jobs that are not over yet (PENDING, STARTING, RUNNING).
absl::StatusOr<v1::ListJobsRequest> BuildListJobsRequest(const StatusOptions& options);

// With a job id: the detailed view (or the Job as JSON). Without: the job
// table (or {"jobs":[...]}, the ListJobsResponse shape), every page of it.
absl::StatusOr<int> RunStatus(const StatusOptions& options, CommandContext& cmd);

}  // namespace gpusched::cli
