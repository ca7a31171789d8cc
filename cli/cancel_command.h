#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

#include "cli/command_context.h"

namespace gpusched::cli {

struct CancelOptions {
  std::vector<std::string> jobs;
};

// Cancels each job in turn: "Cancelled job N" on stdout, or the daemon's
// message on stderr; returns 1 if any of them failed. Every id is checked
// before the first is cancelled, and an unreachable daemon stops at once.
absl::StatusOr<int> RunCancel(const CancelOptions& options, CommandContext& cmd);

}  // namespace gpusched::cli
