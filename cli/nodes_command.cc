#include "cli/nodes_command.h"

#include "cli/errors.h"
#include "absl/strings/str_cat.h"
#include "cli/json_output.h"
#include "cli/node_detail.h"
#include "cli/node_table.h"

namespace gpusched::cli {

absl::StatusOr<int> RunNodes(const NodesOptions& options, CommandContext& cmd) {
  auto nodes = cmd.client.ListNodes();
  if (!nodes.ok()) return nodes.status();
  if (!options.show.empty()) {
    for (const v1::Node& node : nodes->nodes()) {
      if (node.info().name() != options.show) continue;
      if (options.json) {
        if (absl::Status s = PrintJsonLine(cmd.out, node); !s.ok()) return s;
      } else {
        cmd.out << RenderNodeDetail(node);
      }
      return kExitOk;
    }
    return absl::NotFoundError(absl::StrCat("no node named \"", options.show, "\" (see gpusched nodes)"));
  }
  if (options.json) {
    if (absl::Status s = PrintJsonLine(cmd.out, *nodes); !s.ok()) return s;
  } else {
    cmd.out << RenderNodeTable(nodes->nodes());
  }
  return kExitOk;
}

}  // namespace gpusched::cli
