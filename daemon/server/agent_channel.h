#pragma once

#include <string>

#include "gpusched/v1/agent.pb.h"

namespace gpusched::server {

// The daemon's end of one agent's connection (AgentLink in DESIGN.md): the
// gRPC stream in the daemon, something else in the simulator.
class AgentChannel {
 public:
  virtual ~AgentChannel() = default;
  // Queues a message; never blocks. Dropped if the connection is gone.
  virtual void Send(const v1::DaemonMessage& message) = 0;
  // Ends the connection, telling the agent why; it connects and registers
  // again. Nothing if it is gone already.
  virtual void Close(const std::string& why) = 0;
};

}  // namespace gpusched::server
