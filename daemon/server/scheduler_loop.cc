#include "daemon/server/scheduler_loop.h"

#include <chrono>
#include <cstdlib>

#include "common/logging.h"

namespace gpusched::server {

SchedulerLoop::SchedulerLoop(const Clock& clock, core::SchedulerCore& core, store::JobStore& store, JobEventHub& hub,
                             absl::Duration tick)
    : clock_(clock), core_(core), store_(store), hub_(hub), tick_(tick) {}

SchedulerLoop::~SchedulerLoop() { Stop(); }

void SchedulerLoop::Start() { thread_ = std::thread([this] { Run(); }); }

void SchedulerLoop::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void SchedulerLoop::Post(Command command) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(command));
  }
  wake_.notify_one();
}

void SchedulerLoop::Run() {
  absl::Time next_tick = clock_.Now();
  while (true) {
    std::deque<Command> commands;
    bool stop = false;
    {
      std::unique_lock<std::mutex> lock(mu_);
      const auto wait = std::chrono::nanoseconds(absl::ToInt64Nanoseconds(std::max(next_tick - clock_.Now(), absl::ZeroDuration())));
      wake_.wait_for(lock, wait, [this] { return !queue_.empty() || stopping_; });
      commands.swap(queue_);
      stop = stopping_;
    }
    const bool tick = clock_.Now() >= next_tick;
    if (tick) next_tick = clock_.Now() + tick_;
    if (!commands.empty() || tick) RunBatch(commands, tick);
    if (stop) {
      std::lock_guard<std::mutex> lock(mu_);
      if (queue_.empty()) return;
    }
  }
}

void SchedulerLoop::RunBatch(std::deque<Command>& commands, bool tick) {
  core::Effects fx;
  std::vector<std::function<void(const absl::Status&)>> after_commit;
  LoopContext ctx{core_, fx, agents_, after_commit};
  for (Command& command : commands) command(ctx);
  if (tick) core_.Tick(fx);
  core_.Schedule(fx);

  store::StoreBatch batch;
  for (auto& [id, job] : fx.jobs) batch.jobs.push_back(std::move(job));
  batch.events = fx.events;
  for (auto& [name, node] : fx.nodes) batch.nodes.push_back(std::move(node));
  const absl::Status committed = store_.Commit(batch);
  if (!committed.ok()) {
    // Memory and disk now disagree; carrying on would acknowledge things that
    // a restart forgets. Fail the batch and stop: a restart reloads the truth.
    GetLogger("daemon")->critical("cannot commit scheduler state, stopping: {}", std::string(committed.message()));
    for (auto& done : after_commit) done(absl::UnavailableError("gpuschedd could not persist the change"));
    std::abort();
  }
  for (const core::AgentCommand& command : fx.agent_commands) {
    auto it = agents_.find(command.node);
    if (it != agents_.end()) it->second->Send(command.message);
  }
  hub_.Publish(fx.events);
  for (auto& done : after_commit) done(absl::OkStatus());
}

}  // namespace gpusched::server
