#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "common/job_array_record.h"
#include "daemon/server/agent_channel.h"
#include "gpusched/v1/agent.pb.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::server {

struct CommittedBatch;
// Runs after the batch is durable (or failed to be), off the scheduler thread.
using AfterCommit = std::function<void(const absl::Status&, const CommittedBatch&)>;

// One pass of the scheduler thread, handed over for commit: the rows to
// write, and what may leave the daemon only once they are durable.
struct CommittedBatch {
  std::map<uint64_t, v1::Job> jobs;  // the batch's final version of each changed job
  std::vector<v1::JobEvent> events;
  std::map<uint64_t, JobArrayRecord> arrays;  // the batch's final record of each changed array
  std::map<std::string, v1::Node> nodes;
  std::optional<v1::FairShareUsage> fair_share;
  std::vector<std::pair<std::shared_ptr<AgentChannel>, v1::DaemonMessage>> messages;
  std::vector<AfterCommit> after_commit;

  const v1::Job* FindJob(uint64_t id) const {
    auto it = jobs.find(id);
    return it == jobs.end() ? nullptr : &it->second;
  }
};

}  // namespace gpusched::server
