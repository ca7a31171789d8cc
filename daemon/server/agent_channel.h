#pragma once

#include "gpusched/v1/agent.pb.h"

namespace gpusched::server {

// The daemon's end of one agent's connection (AgentLink in DESIGN.md): the
// gRPC stream in the daemon, something else in the simulator.
class AgentChannel {
 public:
  virtual ~AgentChannel() = default;
  // Queues a message; never blocks. Dropped if the connection is gone.
  virtual void Send(const v1::DaemonMessage& message) = 0;
};

}  // namespace gpusched::server
