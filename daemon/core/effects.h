#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpusched/v1/agent.pb.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::core {

struct AgentCommand {
  std::string node;
  v1::DaemonMessage message;
};

// How busy a node is, for metrics: what changes when a job starts or ends there.
struct NodeUsage {
  int64_t gpus_total = 0;
  int64_t gpus_free = 0;
  v1::NodeState state = v1::NODE_STATE_UNSPECIFIED;
  bool drained = false;
  // Each job's part of a GPU it does not hold whole: a share, or a MIG
  // instance (thousandths of the GPU, HeldGpuMilli's measure).
  struct PartHolder {
    int32_t gpu = 0;  // GpuInfo.index
    uint64_t job = 0;
    int milli = 0;
    bool mig = false;
    auto operator<=>(const PartHolder&) const = default;
  };
  std::vector<PartHolder> parts;

  // From the holders a node row carries (v1::Node.gpu_holders).
  static std::vector<PartHolder> PartsOf(const v1::NodeInfo& info,
                                         const google::protobuf::RepeatedPtrField<v1::GpuHolders>& holders);
};

// What the core asks the outside world to do after a command: persist these
// rows, then (only once they are durable) send these messages. The core itself
// never touches a disk or a socket.
struct Effects {
  std::map<uint64_t, v1::Job> jobs;  // the latest version of every changed job
  std::vector<v1::JobEvent> events;
  // Nodes whose row a restart needs changed: registered, state, drain. A
  // job starting or ending rewrites no row (a restart recounts usage from
  // the jobs) but is noted in node_usage, which never names a node of
  // `nodes` (whose rows carry their usage too).
  std::map<std::string, v1::Node> nodes;
  std::map<std::string, NodeUsage> node_usage;
  std::vector<AgentCommand> agent_commands;
  // Fair-share usage to keep, now and then (SchedulerCore::kFairSharePersistEvery).
  std::optional<v1::FairShareUsage> fair_share;
  // What the core found inconsistent in its own state and went around (a
  // placement its accounting refused): never expected, so the daemon logs
  // each as an error and the invariant tests fail on any.
  std::vector<std::string> internal_errors;

  bool empty() const {
    return jobs.empty() && events.empty() && nodes.empty() && node_usage.empty() && agent_commands.empty() &&
           !fair_share.has_value();
  }
};

}  // namespace gpusched::core
