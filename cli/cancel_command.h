#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/command_context.h"

namespace gpusched::cli {

struct CancelOptions {
  std::vector<std::string> jobs;
  bool json = false;  // each job as the daemon answered, a JSON line each
};

// Cancels, holds or releases each job in turn (cli/job_action.h): "Cancelled
// job N" (or, with --json, the job) on stdout, or the daemon's message on
// stderr.
absl::StatusOr<int> RunCancel(const CancelOptions& options, CommandContext& cmd);
// A held job stays pending until it is released; only pending jobs can be held.
absl::StatusOr<int> RunHold(const CancelOptions& options, CommandContext& cmd);
absl::StatusOr<int> RunRelease(const CancelOptions& options, CommandContext& cmd);

}  // namespace gpusched::cli
