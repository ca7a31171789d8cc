#include "daemon/server/scheduler_loop.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/io/logging/logging.h"
#include "common/job_states.h"
#include "common/threads/mutex.h"

namespace gpusched::server {

SchedulerLoop::SchedulerLoop(const Clock& clock, core::SchedulerCore& core, BatchCommitter& committer,
                             const StoreHealth& store, absl::Duration tick, metrics::DaemonMetrics* metrics)
    : clock_(clock), core_(core), committer_(committer), store_(store), tick_(tick), metrics_(metrics) {}

SchedulerLoop::~SchedulerLoop() { Stop(); }

void SchedulerLoop::Start() {
  thread_ = std::thread([this] { Run(); });
}

void SchedulerLoop::Stop() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  wake_.Signal();
  if (thread_.joinable()) thread_.join();
}

void SchedulerLoop::Post(Command command) {
  {
    MutexLock lock(&mu_);
    queue_.push_back(std::move(command));
  }
  wake_.Signal();
}

void SchedulerLoop::Run() {
  absl::Time next_tick = clock_.Now();
  while (true) {
    std::deque<Command> commands;
    bool stop = false;
    {
      MutexLock lock(&mu_);
      // The tick is due on the injected clock; the wait for it is real time.
      const CondVar::Deadline wake_by = CondVar::DeadlineIn(std::max(next_tick - clock_.Now(), absl::ZeroDuration()));
      while (queue_.empty() && !stopping_ && wake_.WaitUntil(&mu_, wake_by)) {
      }
      commands.swap(queue_);
      stop = stopping_;
    }
    const bool tick = clock_.Now() >= next_tick;
    if (tick) next_tick = clock_.Now() + tick_;
    if (!commands.empty() || tick) RunBatch(commands, tick);
    if (on_wake_) on_wake_();
    if (stop) {
      MutexLock lock(&mu_);
      if (queue_.empty()) return;
    }
  }
}

void SchedulerLoop::RunBatch(std::deque<Command>& commands, bool tick) {
  core::Effects fx;
  CommittedBatch batch;
  LoopContext ctx{core_, fx, agents_, batch.after_commit};
  for (Command& command : commands) command(ctx);
  if (tick) core_.Tick(fx);
  // A pass when the commands or the tick changed something, else at most
  // every kIdlePassEvery: heartbeats and ticks alone change nothing a pass
  // reads but the clock, and what moves with the clock alone (ages, waits
  // past their bounds) moves slowly, while a pass over thousands of
  // pending jobs costs milliseconds.
  const bool changed = !fx.empty() || !batch.after_commit.empty();
  if (!store_.failing() && (changed || clock_.Now() - last_pass_ >= kIdlePassEvery)) {
    // Timed on the steady clock, not the injected one: this is the real
    // cost of a pass, which a test's manual clock would hide.
    const auto pass_start = std::chrono::steady_clock::now();
    last_pass_ = clock_.Now();
    core_.Schedule(fx);
    priorities_.Publish(core_.TakePriorityUpdates());
    ++passes_;
    if (metrics_ != nullptr) metrics_->ObservePass(absl::FromChrono(std::chrono::steady_clock::now() - pass_start));
  }
  if (metrics_ != nullptr) metrics_->Apply(fx);
  for (const std::string& error : fx.internal_errors) GetLogger("daemon")->error("scheduler: {}", error);
  for (const core::PowerTransition& t : fx.power_transitions) {
    GetLogger("power")->info("node {}: {} ({})", t.node, std::string(NodeStateName(t.to)), t.reason);
  }
  if (fx.empty() && batch.after_commit.empty()) return;

  batch.jobs = std::move(fx.jobs);
  batch.events = std::move(fx.events);
  batch.arrays = std::move(fx.arrays);
  batch.nodes = std::move(fx.nodes);
  batch.fair_share = std::move(fx.fair_share);
  for (core::PowerRequest& request : fx.power_requests) {
    batch.after_commit.push_back([this, request = std::move(request)](const absl::Status& durable,
                                                                      const CommittedBatch&) {
      if (std::shared_ptr<PowerPrograms> programs = power_programs_.load(); durable.ok() && programs != nullptr) {
        return programs->Run(request);
      }
      // Not run: the nodes go back to where they were, with the reason.
      const absl::Status why =
          durable.ok()
              ? absl::FailedPreconditionError("no program runner in this daemon")
              : absl::UnavailableError(absl::StrCat("not run: the state could not be saved (", durable.message(), ")"));
      Post([request, why](LoopContext& loop) { loop.core.PowerProgramEnded(request, why, loop.fx); });
    });
  }
  for (core::AgentCommand& command : fx.agent_commands) {
    // Resolved now: the map of connected agents belongs to this thread.
    auto it = agents_.find(command.node);
    if (it != agents_.end()) batch.messages.emplace_back(it->second.channel, std::move(command.message));
  }
  committer_.Hand(std::move(batch));
}

}  // namespace gpusched::server
