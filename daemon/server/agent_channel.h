#pragma once

#include <memory>
#include <string>

#include "gpusched/v1/agent.pb.h"

namespace gpusched::server {

// The daemon's end of one agent's connection (AgentLink in DESIGN.md): the
// gRPC stream (AgentStream), or a test's recording fake. The simulator has
// no daemon and drives the core with its own simulated agents instead.
class AgentChannel {
 public:
  virtual ~AgentChannel() = default;
  // Queues a message; never blocks. Dropped if the connection is gone.
  virtual void Send(const v1::DaemonMessage& message) = 0;
  // Ends the connection, telling the agent why; it connects and registers
  // again. Nothing if it is gone already.
  virtual void Close(const std::string& why) = 0;
  // False once the connection has ended, or is ending (its agent hung up or
  // was told to go), even if gRPC has not let go of it yet.
  virtual bool open() const = 0;
};

// A registered node's connection, and which agent holds it: a second
// registration for the node is told apart from a reconnect by `instance`.
struct ConnectedAgent {
  std::shared_ptr<AgentChannel> channel;
  std::string peer;      // the gRPC peer: "ipv4:10.0.0.7:41234"
  std::string instance;  // RegisterNode.agent_instance
};

}  // namespace gpusched::server
