#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "common/job_array_record.h"
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

// A pool's resume or suspend program to run (daemon/server/power_programs.h),
// once the nodes' new power state is durable. Its outcome comes back as
// SchedulerCore::PowerProgramEnded.
struct PowerRequest {
  enum class Kind { kResume, kSuspend };
  Kind kind = Kind::kResume;
  // Unique in the core's life: an outcome that comes back after its nodes
  // moved on (timed out, resumed again) changes nothing.
  uint64_t id = 0;
  std::string pool;
  std::string program;
  absl::Duration timeout;
  std::vector<std::string> nodes;
  // The jobs the resumed nodes are for, and why (the program's JSON file).
  struct ForJob {
    uint64_t job_id = 0;
    std::vector<std::string> nodes;
    std::string why;
  };
  std::vector<ForJob> jobs;
};

// A pool node entering a power state, or leaving one for UP.
struct PowerTransition {
  std::string node;
  std::string pool;
  v1::NodeState from = v1::NODE_STATE_UNSPECIFIED;
  v1::NodeState to = v1::NODE_STATE_UNSPECIFIED;
  std::string reason;      // for people: why
  absl::Duration in_from;  // how long it was in `from` (from POWERING_UP to UP: its boot)
};

// What the core asks the outside world to do after a command: persist these
// rows, then (only once they are durable) send these messages. The core itself
// never touches a disk or a socket.
struct Effects {
  std::map<uint64_t, v1::Job> jobs;  // the latest version of every changed job
  std::vector<v1::JobEvent> events;
  // The latest record of every job array whose tasks still to make changed
  // (array_backlog.h); one whose tasks are all jobs now (done()) is deleted.
  std::map<uint64_t, JobArrayRecord> arrays;
  // Nodes whose row a restart needs changed: registered, state, drain. A
  // job starting or ending rewrites no row (a restart recounts usage from
  // the jobs) but is noted in node_usage, which never names a node of
  // `nodes` (whose rows carry their usage too).
  std::map<std::string, v1::Node> nodes;
  std::map<std::string, NodeUsage> node_usage;
  std::vector<AgentCommand> agent_commands;
  std::vector<PowerRequest> power_requests;
  // Fair-share usage to keep, now and then (SchedulerCore::kFairSharePersistEvery).
  std::optional<v1::FairShareUsage> fair_share;
  // What the core found inconsistent in its own state and went around (a
  // placement its accounting refused): never expected, so the daemon logs
  // each as an error and the invariant tests fail on any.
  std::vector<std::string> internal_errors;
  // Every power state a pool node entered, in order: for the daemon's log
  // and the pool metrics. A boot that failed and was retried in the same
  // batch leaves no row of its own, only these.
  std::vector<PowerTransition> power_transitions;

  bool empty() const {
    return jobs.empty() && events.empty() && arrays.empty() && nodes.empty() && node_usage.empty() &&
           agent_commands.empty() && power_requests.empty() && !fair_share.has_value();
  }
};

}  // namespace gpusched::core
