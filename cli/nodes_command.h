#pragma once

#include "absl/status/statusor.h"

#include "cli/command_context.h"

namespace gpusched::cli {

struct NodesOptions {
  bool json = false;
};

// The node table, or the ListNodesResponse as JSON.
absl::StatusOr<int> RunNodes(const NodesOptions& options, CommandContext& cmd);

}  // namespace gpusched::cli
