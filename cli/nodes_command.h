#pragma once

#include <string>

#include "absl/status/statusor.h"

#include "cli/command_context.h"

namespace gpusched::cli {

struct NodesOptions {
  bool json = false;
  std::string show;  // `nodes show NODE`: that node in detail
  std::string drain;   // `nodes drain NODE --reason TEXT`
  std::string resume;  // `nodes resume NODE`
  std::string reason;
};

// The node table, or the ListNodesResponse as JSON; with `show`, one node in
// detail (or its Node message as JSON), exit 1 when there is no such node.
// With `drain` or `resume`, changes the node and prints one line (or the Node
// as JSON).
absl::StatusOr<int> RunNodes(const NodesOptions& options, CommandContext& cmd);

}  // namespace gpusched::cli
