#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gpusched/v1/agent.pb.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::core {

struct AgentCommand {
  std::string node;
  v1::DaemonMessage message;
};

// What the core asks the outside world to do after a command: persist these
// rows, then (only once they are durable) send these messages. The core itself
// never touches a disk or a socket.
struct Effects {
  std::map<uint64_t, v1::Job> jobs;  // the latest version of every changed job
  std::vector<v1::JobEvent> events;
  std::map<std::string, v1::Node> nodes;
  std::vector<AgentCommand> agent_commands;

  bool empty() const { return jobs.empty() && events.empty() && nodes.empty() && agent_commands.empty(); }
};

}  // namespace gpusched::core
