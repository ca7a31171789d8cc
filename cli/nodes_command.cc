#include "cli/nodes_command.h"

#include "cli/errors.h"
#include "cli/json_output.h"
#include "cli/node_table.h"

namespace gpusched::cli {

absl::StatusOr<int> RunNodes(const NodesOptions& options, CommandContext& cmd) {
  auto nodes = cmd.client.ListNodes();
  if (!nodes.ok()) return nodes.status();
  if (options.json) {
    if (absl::Status s = PrintJsonLine(cmd.out, *nodes); !s.ok()) return s;
  } else {
    cmd.out << RenderNodeTable(nodes->nodes());
  }
  return kExitOk;
}

}  // namespace gpusched::cli
