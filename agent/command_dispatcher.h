#pragma once

#include <string>
#include <vector>

#include "agent/link_calibrator.h"
#include "agent/runner/interactive_sessions.h"
#include "agent/runner/job_runner.h"
#include "agent/session_handler.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::agent {

// Turns the daemon's messages into JobRunner and LinkCalibrator calls and
// describes the node for each registration. Holds no state of its own beyond the node description.
class CommandDispatcher final : public SessionHandler {
 public:
  // `calibrator` may be null (no link calibration: a ProbeLinks is ignored);
  // so may `sessions` (interactive sessions end at once, saying so).
  CommandDispatcher(v1::NodeInfo node, JobRunner* runner, LinkCalibrator* calibrator = nullptr,
                    InteractiveSessions* sessions = nullptr);

  v1::RegisterNode MakeRegistration() override;
  std::vector<v1::AgentMessage> OnRegistered(const v1::RegisterAck& ack) override;
  void OnMessage(const v1::DaemonMessage& message) override;
  void OnLeaseRenewed(absl::Duration lease) override;
  void OnLeaseExpired(absl::Duration silent) override;

 private:
  const v1::NodeInfo node_;
  JobRunner* const runner_;
  LinkCalibrator* const calibrator_;
  InteractiveSessions* const sessions_;
  const std::string instance_;  // RegisterNode.agent_instance, for this process's life
};

}  // namespace gpusched::agent
