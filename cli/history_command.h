#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/command_context.h"

namespace gpusched::cli {

struct HistoryOptions {
  std::optional<std::string> user;
  std::optional<std::string> queue;
  std::vector<std::string> states;   // terminal states only; default all of them
  std::optional<std::string> since;  // ended within this long, Slurm time notation
  int limit = 50;                    // the most recently ended; 0 = all
  bool json = false;
};

// `gpusched history`: finished jobs from the daemon's store, oldest end
// first, with what each cost (cli/history.h).
absl::StatusOr<int> RunHistory(const HistoryOptions& options, CommandContext& cmd);

}  // namespace gpusched::cli
