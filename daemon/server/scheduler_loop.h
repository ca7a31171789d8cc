#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/threads/mutex.h"
#include "daemon/core/scheduler_core.h"
#include "daemon/metrics/daemon_metrics.h"
#include "daemon/server/agent_channel.h"
#include "daemon/server/batch_committer.h"
#include "daemon/server/power_programs.h"
#include "daemon/server/priority_board.h"
#include "daemon/server/store_health.h"

namespace gpusched::server {

// What a command sees while it runs on the scheduler thread.
struct LoopContext {
  core::SchedulerCore& core;
  core::Effects& fx;
  std::map<std::string, ConnectedAgent>& agents;
  // Runs on the committer's thread once this batch is durable (or failed to be).
  std::vector<AfterCommit>& after_commit;
};

// The one thread that owns the scheduling state (the actor of DESIGN.md).
// Handlers Post commands; the loop runs every queued command and one
// scheduling pass, and hands all their changes as one batch to the
// BatchCommitter, which releases the replies and agent messages of that batch
// once it is durable. Nothing leaves the daemon before the change behind it
// is durable, and this thread never waits for the disk.
class SchedulerLoop {
 public:
  using Command = std::function<void(LoopContext&)>;

  // `metrics` may be null (no --metrics-listen): nothing is measured then.
  // No placement runs while `store` fails commits: nothing started could
  // be recorded.
  SchedulerLoop(const Clock& clock, core::SchedulerCore& core, BatchCommitter& committer, const StoreHealth& store,
                absl::Duration tick, metrics::DaemonMetrics* metrics = nullptr);
  ~SchedulerLoop();

  // Runs on the scheduler thread each time it wakes (every tick at least):
  // the systemd watchdog's proof that this thread is not stuck. Before Start.
  void set_on_wake(std::function<void()> on_wake) { on_wake_ = std::move(on_wake); }
  // Where the pools' programs run (Effects::power_requests), once the power
  // states behind them are durable; null: none runs (no pools). Before Start.
  // Read by the committer's threads (after-commit callbacks), each of which
  // holds the runner while it starts a program: atomic, and shared.
  void set_power_programs(std::shared_ptr<PowerPrograms> programs) { power_programs_.store(std::move(programs)); }
  void Start();
  void Stop();  // runs what is queued, then joins
  void Post(Command command);
  // The pending jobs' priority factors of the latest pass.
  const PriorityBoard& priorities() const { return priorities_; }
  // With nothing changed, a scheduling pass runs at most this often.
  static constexpr absl::Duration kIdlePassEvery = absl::Seconds(2);
  // Passes run so far (read on the scheduler thread, or after Stop).
  uint64_t passes() const { return passes_.load(std::memory_order_relaxed); }

 private:
  void Run();
  void RunBatch(std::deque<Command>& commands, bool tick);

  const Clock& clock_;
  core::SchedulerCore& core_;
  BatchCommitter& committer_;
  const StoreHealth& store_;
  const absl::Duration tick_;
  std::function<void()> on_wake_;
  std::atomic<std::shared_ptr<PowerPrograms>> power_programs_;
  metrics::DaemonMetrics* const metrics_;
  std::map<std::string, ConnectedAgent> agents_;
  PriorityBoard priorities_;
  absl::Time last_pass_ = absl::InfinitePast();
  std::atomic<uint64_t> passes_{0};

  Mutex mu_;
  CondVar wake_;
  std::deque<Command> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace gpusched::server
