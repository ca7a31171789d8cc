#include "cli/nodes_command.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "cli/errors.h"
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

// One node as ListNodes gives it; NotFound names the command that lists them.
absl::StatusOr<v1::Node> FetchNode(CommandContext& cmd, const std::string& name) {
  v1::ListNodesRequest request;
  request.set_node(name);
  auto nodes = cmd.client.ListNodes(request);
  if (!nodes.ok()) return nodes.status();
  for (const v1::Node& node : nodes->nodes()) {
    if (node.info().name() == name) return node;
  }
  return absl::NotFoundError(absl::StrCat("no node named \"", name, "\" (see gpusched nodes)"));
}

absl::StatusOr<int> Probe(const NodesOptions& options, CommandContext& cmd) {
  v1::ProbeNodeRequest request;
  request.set_node(options.probe);
  auto node = cmd.client.ProbeNode(request);
  if (!node.ok()) return node.status();
  if (!options.wait) {
    if (options.json) {
      if (absl::Status s = PrintJsonLine(cmd.out, *node); !s.ok()) return s;
      return kExitOk;
    }
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
    node = FetchNode(cmd, options.probe);
    if (!node.ok()) return node.status();
  }
  if (options.json) {
    if (absl::Status s = PrintJsonLine(cmd.out, *node); !s.ok()) return s;
  } else {
    cmd.out << RenderLinkCalibration(*node);
    cmd.out << "node " << options.probe << ": "
            << (node->drain_reason().empty() ? "takes jobs" : absl::StrCat("drained: ", node->drain_reason())) << "\n";
  }
  return IsProbeDrain(node->drain_kind()) ? kExitFailed : kExitOk;
}

// "120s", "2m", "1m30s", or a number of seconds.
absl::StatusOr<absl::Duration> ParseNotice(const std::string& text) {
  int64_t seconds = 0;
  absl::Duration d;
  if (absl::SimpleAtoi(text, &seconds)) {
    d = absl::Seconds(seconds);
  } else if (!absl::ParseDuration(text, &d)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--in: \"", text, "\" is not a duration (120s, 2m, 1m30s, or seconds)"));
  }
  if (d < absl::ZeroDuration()) return absl::InvalidArgumentError(absl::StrCat("--in: ", text, " is negative"));
  return d;
}

absl::StatusOr<int> Interrupt(const NodesOptions& options, CommandContext& cmd) {
  auto notice = ParseNotice(options.notice);
  if (!notice.ok()) return notice.status();
  v1::InterruptNodeRequest request;
  request.set_node(options.interrupt);
  request.set_notice_s(absl::ToInt64Seconds(*notice));
  request.set_reason(options.reason);
  auto node = cmd.client.InterruptNode(request);
  if (!node.ok()) return node.status();
  if (options.json) {
    if (absl::Status s = PrintJsonLine(cmd.out, *node); !s.ok()) return s;
    return kExitOk;
  }
  cmd.out << "node " << node->info().name() << ": "
          << (node->drain_reason().empty() ? node->reason() : node->drain_reason()) << "\n";
  if (node->running_jobs_size() > 0) {
    cmd.out << "its " << node->running_jobs_size()
            << " job(s) got SIGTERM with the deadline in GPUSCHED_PREEMPT_NOTICE and go back to the queue as after a "
               "node failure (submit --requeue)\n";
  }
  return kExitOk;
}

}  // namespace

absl::StatusOr<int> RunNodes(const NodesOptions& options, CommandContext& cmd) {
  if (!options.drain.empty() || !options.resume.empty()) return ChangeDrain(options, cmd);
  if (!options.probe.empty()) return Probe(options, cmd);
  if (!options.interrupt.empty()) return Interrupt(options, cmd);
  if (!options.show.empty()) {
    auto node = FetchNode(cmd, options.show);
    if (!node.ok()) return node.status();
    if (options.json) {
      if (absl::Status s = PrintJsonLine(cmd.out, *node); !s.ok()) return s;
    } else {
      cmd.out << RenderNodeDetail(*node);
    }
    return kExitOk;
  }
  auto nodes = ListAllNodes(cmd.client);
  if (!nodes.ok()) return nodes.status();
  if (options.json) {
    if (absl::Status s = PrintJsonLine(cmd.out, *nodes); !s.ok()) return s;
  } else {
    cmd.out << RenderNodeTable(nodes->nodes());
  }
  return kExitOk;
}

}  // namespace gpusched::cli
