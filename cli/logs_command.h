#pragma once

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "cli/command_context.h"

namespace gpusched::cli {

struct LogsOptions {
  std::string job;
  std::optional<std::string> rank;  // default 0
  bool follow = false;
};

// Prints one rank's log file. With --follow it keeps printing what is
// appended, polling GetJob every half second, until the job is over and the
// file is drained.
absl::StatusOr<int> RunLogs(const LogsOptions& options, CommandContext& cmd);

}  // namespace gpusched::cli
