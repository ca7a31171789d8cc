#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cli/command_context.h"

namespace gpusched::cli {

struct NodesOptions {
  bool json = false;
  std::string show;       // `nodes show NODE`: that node in detail
  std::string drain;      // `nodes drain NODE --reason TEXT`
  std::string resume;     // `nodes resume NODE`
  std::string probe;      // `nodes probe NODE [--wait]`
  std::string interrupt;  // `nodes interrupt NODE --in 120s [--reason TEXT]`
  std::string notice = "120s";
  bool wait = false;
  absl::Duration wait_timeout = absl::Minutes(15);
  std::string reason;
};

// The node table, or the ListNodesResponse as JSON; with `show`, one node in
// detail (or its Node message as JSON), exit 1 when there is no such node.
// With `drain` or `resume`, changes the node and prints one line (or the Node
// as JSON). With `probe`, has its agent calibrate its links; with `wait`, polls
// until the figures are in and prints them (exit 1 if the node was drained for
// them, 2 on timeout). With `interrupt`, tells the daemon the node is taken
// back after `notice` (a spot interruption) and prints what becomes of it.
absl::StatusOr<int> RunNodes(const NodesOptions& options, CommandContext& cmd);

}  // namespace gpusched::cli
