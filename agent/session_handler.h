#pragma once

#include <vector>

#include "absl/time/time.h"
#include "gpusched/v1/agent.pb.h"

namespace gpusched::agent {

// What DaemonSession asks of the rest of the agent. All calls but
// OnLeaseExpired come from the session's reader thread, one at a time.
class SessionHandler {
 public:
  virtual ~SessionHandler() = default;
  // The RegisterNode to open each connection with.
  virtual v1::RegisterNode MakeRegistration() = 0;
  // The daemon accepted the node. Returns what to send right after the ack.
  virtual std::vector<v1::AgentMessage> OnRegistered(const v1::RegisterAck& ack) = 0;
  // A LaunchJob or KillJob.
  virtual void OnMessage(const v1::DaemonMessage& message) = 0;
  // The lease runs on: a registration or heartbeat was acknowledged, and
  // without another the node fences itself `lease` from now.
  virtual void OnLeaseRenewed(absl::Duration lease) = 0;
  // No heartbeat was acknowledged for the lease the daemon gave
  // (RegisterAck.fence_after_ms): the daemon is giving this node's jobs up, so
  // they must stop here before they start elsewhere. From the sender thread.
  virtual void OnLeaseExpired(absl::Duration silent) = 0;
};

}  // namespace gpusched::agent
