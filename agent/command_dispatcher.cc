#include "agent/command_dispatcher.h"

#include <random>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/io/logging/logging.h"

namespace gpusched::agent {

namespace {

// 64 random bits: unguessable enough that a second agent under this node's
// name cannot pass for this one. The daemon never shows it.
std::string NewInstanceToken() {
  std::random_device random;
  return absl::StrCat(absl::Hex(random(), absl::kZeroPad8), absl::Hex(random(), absl::kZeroPad8));
}

}  // namespace

CommandDispatcher::CommandDispatcher(v1::NodeInfo node, JobRunner* runner, LinkCalibrator* calibrator,
                                     InteractiveSessions* sessions)
    : node_(std::move(node)),
      runner_(runner),
      calibrator_(calibrator),
      sessions_(sessions),
      instance_(NewInstanceToken()) {}

v1::RegisterNode CommandDispatcher::MakeRegistration() {
  v1::RegisterNode registration;
  *registration.mutable_node() = node_;
  registration.set_agent_instance(instance_);
  if (calibrator_ != nullptr) {
    LinkCalibrator::State calibration = calibrator_->state();
    if (calibration.last) *registration.mutable_node()->mutable_probe() = *std::move(calibration.last);
    registration.set_probe_pending(calibration.running);
  }
  std::set<uint64_t> running;
  for (const JobRunner::RunningJob& job : runner_->RunningJobs()) {
    registration.add_running_job_ids(job.id);
    registration.add_running_job_attempts(job.attempt);
    running.insert(job.id);
  }
  // Jobs that ended while the daemon could not hear are listed too: they are
  // still this node's to report (the reports follow the ack). Left out, the
  // daemon would take their processes for lost, and requeue and run them
  // again although they finished.
  for (const v1::JobUpdate& report : runner_->RecentReports()) {
    if (running.contains(report.job_id())) continue;
    registration.add_running_job_ids(report.job_id());
    registration.add_running_job_attempts(report.attempt());
  }
  return registration;
}

std::vector<v1::AgentMessage> CommandDispatcher::OnRegistered(const v1::RegisterAck& ack) {
  // Each is answered, even one not running here: the daemon gives the node
  // no job until it has heard that every one of them is gone.
  for (uint64_t id : ack.kill_job_ids()) {
    runner_->Kill(id, absl::ZeroDuration(), "the daemon no longer considers it running on this node");
  }
  // No report is acknowledged, so every recent one goes again; the daemon
  // ignores those it already has.
  std::vector<v1::AgentMessage> resend;
  // A job adopted from an agent that died before its STARTED went out would
  // otherwise never count as started (nor be held to its time limit); the
  // daemon ignores a STARTED it has.
  for (v1::JobUpdate& started : runner_->StartedReports()) {
    *resend.emplace_back().mutable_job_update() = std::move(started);
  }
  for (v1::JobUpdate& report : runner_->RecentReports()) {
    *resend.emplace_back().mutable_job_update() = std::move(report);
  }
  // A calibration that ended between the registration and now went nowhere;
  // the daemon ignores one it already has.
  if (calibrator_ != nullptr) {
    if (auto last = calibrator_->state().last) *resend.emplace_back().mutable_probe_result() = *std::move(last);
  }
  return resend;
}

void CommandDispatcher::OnMessage(const v1::DaemonMessage& message) {
  switch (message.kind_case()) {
    case v1::DaemonMessage::kLaunch: runner_->Launch(message.launch()); return;
    case v1::DaemonMessage::kProbe:
      // One under way already answers this request too.
      if (calibrator_ != nullptr) calibrator_->Start();
      return;
    case v1::DaemonMessage::kSessionInput:
      if (sessions_ != nullptr) sessions_->Handle(message.session_input());
      return;
    case v1::DaemonMessage::kKill: {
      const v1::KillJob& kill = message.kill();
      std::optional<absl::Time> notice;
      if (kill.notice_deadline_unix_ms() > 0) notice = absl::FromUnixMillis(kill.notice_deadline_unix_ms());
      runner_->Kill(kill.job_id(), absl::Milliseconds(kill.grace_ms()), kill.reason(), kill.attempt(), notice);
      return;
    }
    default:
      GetLogger(absl::StrCat("agent/", node_.name()))
          ->warn("ignoring a message this agent does not know: {}", message.ShortDebugString());
  }
}

void CommandDispatcher::OnLeaseRenewed(absl::Duration lease) { runner_->RenewLeases(lease); }

void CommandDispatcher::OnLeaseExpired(absl::Duration silent) {
  const std::string reason =
      absl::StrCat("fenced: no word from the daemon for ", absl::FormatDuration(absl::Trunc(silent, absl::Seconds(1))),
                   ", and it gives this node's jobs up");
  const int hit = runner_->Fence(reason);
  if (hit > 0) GetLogger("agent")->error("lease expired: killed {} job(s) ({})", hit, reason);
}

}  // namespace gpusched::agent
