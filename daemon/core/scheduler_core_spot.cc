// SchedulerCore's spot interruptions: a node the cloud takes back after a
// short notice. Its jobs are told, stopped in time and requeued; the node
// powers down at the deadline, and the pool boots what the jobs still need.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/display_text.h"
#include "common/job_states.h"
#include "daemon/core/scheduler_core.h"

namespace gpusched::core {
namespace {

// SIGKILL comes this much before the deadline (a tenth of the notice, at
// most 5 s), so that the exits are reported while the node is still there.
absl::Duration KillMargin(absl::Duration notice) { return std::min(notice / 10, absl::Seconds(5)); }

}  // namespace

absl::StatusOr<v1::Node> SchedulerCore::InterruptNode(const std::string& node, absl::Duration notice,
                                                      const std::string& reason, Effects& fx) {
  if (notice < absl::ZeroDuration() || notice > kMaxInterruptNotice) {
    return absl::InvalidArgumentError(absl::StrCat("notice_s: ", absl::ToInt64Seconds(notice), " is outside 0 to ",
                                                   absl::ToInt64Seconds(kMaxInterruptNotice)));
  }
  if (absl::Status s = CheckDisplayText("reason", reason, kMaxReasonBytes / 2); !s.ok()) return s;
  const NodeSlot* slot = cluster_.Find(node);
  if (slot == nullptr) return absl::NotFoundError(absl::StrCat("no node ", node));
  if (slot->state == v1::NODE_STATE_POWERED_DOWN || slot->state == v1::NODE_STATE_POWERING_DOWN) {
    return absl::FailedPreconditionError(
        absl::StrCat("node ", node, " is ", NodeStateName(slot->state), ": there is nothing to take back"));
  }
  const absl::Time now = clock_.Now();
  absl::Time at = now + notice;
  if (auto earlier = reclaim_at_.find(node); earlier != reclaim_at_.end()) at = std::min(at, earlier->second);
  const std::string why = absl::StrCat("spot interruption", reason.empty() ? "" : absl::StrCat(" (", reason, ")"),
                                       ": taken back at ", UtcTime(at), " UTC");
  if (slot->state == v1::NODE_STATE_POWERING_UP) {
    // Its boot is lost with it: the jobs that waited for it are placed again.
    SetPowerState(node, v1::NODE_STATE_POWERED_DOWN, why, fx);
    return NodeView(*cluster_.Find(node));
  }
  reclaim_at_[node] = at;
  cluster_.SetDrain(node, why, v1::DRAIN_KIND_SPOT_INTERRUPTION);
  WriteNode(node, fx);
  const StopNotice stop{std::max(at - now - KillMargin(at - now), absl::Milliseconds(1)), at};
  const std::vector<uint64_t> here(slot->jobs.begin(), slot->jobs.end());
  for (uint64_t id : here) {
    ActiveJob* found = jobs_.Find(id);
    if (found == nullptr || !jobs_.IsPlaced(id)) continue;
    ActiveJob& a = *found;
    // One stopping already keeps its end state; the deadline ends what is left of it.
    if (a.job.stopping_as() != v1::JOB_STATE_UNSPECIFIED) continue;
    a.job.set_stop_cause(v1::STOP_CAUSE_SPOT_INTERRUPTION);
    BeginStop(a, v1::JOB_STATE_PREEMPTED, absl::StrCat("spot interruption of ", node, " (", why, ")"), fx, stop);
  }
  return NodeView(*cluster_.Find(node));
}

void SchedulerCore::CheckReclaims(absl::Time now, Effects& fx) {
  std::vector<std::string> due;
  for (const auto& [name, at] : reclaim_at_) {
    if (now >= at) due.push_back(name);
  }
  for (const std::string& name : due) {
    const absl::Time at = reclaim_at_.at(name);
    reclaim_at_.erase(name);
    FailJobsOn(name, absl::StrCat("node ", name, " was taken back (spot interruption)"), fx);
    const std::string why = absl::StrCat("taken back by its spot interruption at ", UtcTime(at), " UTC");
    auto p = pool_of_.find(name);
    if (p == pool_of_.end()) {
      // A node of no elastic pool: drained until an operator resumes it.
      WriteNode(name, fx);
      continue;
    }
    // The name is a slot its pool may fill again with a new machine; an
    // operator's drain since then stays.
    const NodeSlot* slot = cluster_.Find(name);
    if (slot->drain_kind == v1::DRAIN_KIND_SPOT_INTERRUPTION) cluster_.SetDrain(name, "", v1::DRAIN_KIND_NONE);
    if (slot->state == v1::NODE_STATE_POWERED_DOWN || slot->state == v1::NODE_STATE_POWERING_DOWN) {
      // Idle since its jobs left, it was suspended already.
      WriteNode(name, fx);
    } else if (options_.pools[p->second].may_suspend()) {
      RequestSuspend(
          p->second, {name}, [&](const std::string&) { return absl::StrCat("powering down: ", why); }, fx);
    } else {
      SetPowerState(name, v1::NODE_STATE_POWERED_DOWN, why, fx);
      liveness_.Forget(name);
    }
  }
}

}  // namespace gpusched::core
