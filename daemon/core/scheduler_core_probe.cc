// SchedulerCore: the NCCL probe's link calibrations and what they decide.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/job_states.h"
#include "daemon/core/scheduler_core.h"
#include "google/protobuf/util/message_differencer.h"

namespace gpusched::core {

absl::StatusOr<v1::Node> SchedulerCore::ProbeNode(const std::string& node, Effects& fx) {
  const NodeSlot* slot = cluster_.Find(node);
  if (slot == nullptr) return absl::NotFoundError(absl::StrCat("no node ", node));
  if (slot->state != v1::NODE_STATE_UP) {
    return absl::FailedPreconditionError(absl::StrCat("node ", node, " is ", NodeStateName(slot->state),
                                                      slot->reason.empty() ? "" : ": ", slot->reason,
                                                      "; only an up node's agent can measure its links"));
  }
  if (!slot->jobs.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("node ", node, " runs job(s) ", absl::StrJoin(slot->jobs, ", "),
                     ": their traffic would skew the figures; drain it, wait for them to end, then probe"));
  }
  v1::DaemonMessage msg;
  msg.mutable_probe()->set_reason("asked by an operator (gpusched nodes probe)");
  fx.agent_commands.push_back({node, std::move(msg)});
  SetProbeDrain(node, v1::DRAIN_KIND_LINK_PROBE,
                absl::StrCat(kProbeDrainPrefix, "measuring links (gpusched nodes probe)"), fx);
  return NodeView(*cluster_.Find(node));
}

void SchedulerCore::NodeProbed(const std::string& node, const v1::NodeProbe& probe, Effects& fx) {
  const NodeSlot* slot = cluster_.Find(node);
  if (slot == nullptr || Judged(*slot, probe)) return;
  v1::NodeInfo info = slot->info;
  *info.mutable_probe() = probe;
  // Re-registered with its measurements: placement counts by them from now on.
  UpsertNode(info);
  JudgeCalibration(node, fx);
  WriteNode(node, fx);  // the figures, whether or not the drain changed
}

bool SchedulerCore::Judged(const NodeSlot& slot, const v1::NodeProbe& probe) {
  return slot.info.has_probe() && google::protobuf::util::MessageDifferencer::Equals(slot.info.probe(), probe);
}

void SchedulerCore::JudgeCalibration(const std::string& node, Effects& fx) {
  const NodeSlot* slot = cluster_.Find(node);
  const std::string failure = CalibrationFailure(slot->topology, slot->info.probe(), options_.probe.drain_below);
  SetProbeDrain(node, v1::DRAIN_KIND_LINK_PROBE, failure.empty() ? "" : absl::StrCat(kProbeDrainPrefix, failure), fx);
}

void SchedulerCore::SetProbeDrain(const std::string& node, v1::DrainKind kind, const std::string& reason, Effects& fx) {
  const NodeSlot* slot = cluster_.Find(node);
  if (slot == nullptr) return;
  // Someone else's drain (an operator's, a spot interruption's) outlives any measurement.
  if (slot->drain_kind != v1::DRAIN_KIND_NONE && !IsProbeDrain(slot->drain_kind)) return;
  if (reason == slot->drain_reason && (reason.empty() || kind == slot->drain_kind)) return;
  cluster_.SetDrain(node, reason, kind);
  WriteNode(node, fx);
}

}  // namespace gpusched::core
