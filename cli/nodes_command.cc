#include "cli/nodes_command.h"

#include "cli/errors.h"
#include "absl/strings/str_cat.h"
#include "cli/json_output.h"
#include "cli/node_detail.h"
#include "cli/node_table.h"

namespace gpusched::cli {

namespace {

absl::StatusOr<int> ChangeDrain(const NodesOptions& options, CommandContext& cmd) {
  absl::StatusOr<v1::Node> node;
  if (!options.drain.empty()) {
    v1::DrainNodeRequest request;
    request.set_node(options.drain);
    request.set_reason(options.reason);
    node = cmd.client.DrainNode(request);
  } else {
    v1::ResumeNodeRequest request;
    request.set_node(options.resume);
    node = cmd.client.ResumeNode(request);
  }
  if (!node.ok()) return node.status();
  if (options.json) {
    if (absl::Status s = PrintJsonLine(cmd.out, *node); !s.ok()) return s;
  } else if (!node->drain_reason().empty()) {
    cmd.out << "node " << node->info().name() << " drained: " << node->drain_reason()
            << " (its running jobs finish; `gpusched nodes resume " << node->info().name() << "` undoes it)\n";
  } else {
    cmd.out << "node " << node->info().name() << " resumed: new jobs may go there\n";
  }
  return kExitOk;
}

}  // namespace

absl::StatusOr<int> RunNodes(const NodesOptions& options, CommandContext& cmd) {
  if (!options.drain.empty() || !options.resume.empty()) return ChangeDrain(options, cmd);
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
