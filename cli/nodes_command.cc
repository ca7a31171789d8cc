#include "cli/nodes_command.h"

#include <algorithm>

#include "cli/errors.h"
#include "absl/strings/str_cat.h"
#include "cli/json_output.h"
#include "cli/node_detail.h"
#include "cli/node_table.h"
#include "common/probe_drains.h"

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


absl::StatusOr<int> Probe(const NodesOptions& options, CommandContext& cmd) {
  v1::ProbeNodeRequest request;
  request.set_node(options.probe);
  auto node = cmd.client.ProbeNode(request);
  if (!node.ok()) return node.status();
  if (!options.wait) {
    if (options.json) return PrintJsonLine(cmd.out, *node).ok() ? kExitOk : kExitFailed;
    cmd.out << "node " << options.probe << ": link calibration asked for; it takes no new job until the figures "
            << "are in (gpusched nodes show " << options.probe << ")\n";
    return kExitOk;
  }
  // Done when a calibration newer than the one the node had is in (an
  // operator's drain hides whether it is still measuring).
  const std::string before = node->info().probe().time().SerializeAsString();
  const absl::Time deadline = cmd.local.now() + options.wait_timeout;
  while (!node->info().has_probe() || node->info().probe().time().SerializeAsString() == before) {
    if (cmd.local.now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat("node ", options.probe, ": no link calibration after ",
                                                      absl::FormatDuration(options.wait_timeout)));
    }
    cmd.local.sleep(absl::Milliseconds(500));
    auto nodes = cmd.client.ListNodes();
    if (!nodes.ok()) return nodes.status();
    auto it = std::find_if(nodes->nodes().begin(), nodes->nodes().end(),
                           [&](const v1::Node& n) { return n.info().name() == options.probe; });
    if (it == nodes->nodes().end()) return absl::NotFoundError(absl::StrCat("node ", options.probe, " is gone"));
    *node = *it;
  }
  if (options.json) {
    if (absl::Status s = PrintJsonLine(cmd.out, *node); !s.ok()) return s;
  } else {
    cmd.out << RenderLinkCalibration(*node);
    cmd.out << "node " << options.probe << ": "
            << (node->drain_reason().empty() ? "takes jobs" : absl::StrCat("drained: ", node->drain_reason()))
            << "\n";
  }
  return IsProbeDrain(node->drain_reason()) ? kExitFailed : kExitOk;
}

}  // namespace

absl::StatusOr<int> RunNodes(const NodesOptions& options, CommandContext& cmd) {
  if (!options.drain.empty() || !options.resume.empty()) return ChangeDrain(options, cmd);
  if (!options.probe.empty()) return Probe(options, cmd);
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
