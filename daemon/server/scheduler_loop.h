#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "daemon/core/scheduler_core.h"
#include "daemon/server/agent_channel.h"
#include "daemon/server/job_event_hub.h"
#include "daemon/store/job_store.h"

namespace gpusched::server {

// What a command sees while it runs on the scheduler thread.
struct LoopContext {
  core::SchedulerCore& core;
  core::Effects& fx;
  std::map<std::string, std::shared_ptr<AgentChannel>>& agents;
  // Runs on the scheduler thread once this batch is durable (or failed to be).
  std::vector<std::function<void(const absl::Status&)>>& after_commit;
};

// The one thread that owns the scheduling state (the actor of DESIGN.md).
// Handlers Post commands; the loop runs every queued command, one scheduling
// pass, and commits all their changes in ONE transaction (group commit), then
// releases the replies and agent messages of that batch. Nothing leaves the
// daemon before the change behind it is durable.
class SchedulerLoop {
 public:
  using Command = std::function<void(LoopContext&)>;

  SchedulerLoop(const Clock& clock, core::SchedulerCore& core, store::JobStore& store, JobEventHub& hub,
                absl::Duration tick);
  ~SchedulerLoop();

  void Start();
  void Stop();  // runs what is queued, then joins
  void Post(Command command);

 private:
  void Run();
  void RunBatch(std::deque<Command>& commands, bool tick);

  const Clock& clock_;
  core::SchedulerCore& core_;
  store::JobStore& store_;
  JobEventHub& hub_;
  const absl::Duration tick_;
  std::map<std::string, std::shared_ptr<AgentChannel>> agents_;

  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<Command> queue_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace gpusched::server
