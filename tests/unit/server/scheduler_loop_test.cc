// The scheduler thread runs a pass when something changed, and with nothing
// changed at most every SchedulerLoop::kIdlePassEvery, on the real loop and
// a manual clock.
#include "daemon/server/scheduler_loop.h"

#include <catch2/catch.hpp>
#include <future>

#include "common/clock.h"
#include "daemon/server/batch_committer.h"
#include "daemon/server/job_event_hub.h"
#include "daemon/server/store_health.h"
#include "tests/unit/core/test_cluster.h"

using namespace gpusched;

namespace {

class NullStore final : public store::JobStore {
 public:
  absl::StatusOr<store::RecoveredState> Recover() override { return store::RecoveredState{}; }
  absl::Status Commit(const store::StoreBatch&) override { return absl::OkStatus(); }
};

// The passes run before the loop takes this command (read on its thread).
uint64_t PassesSoFar(server::SchedulerLoop& loop) {
  std::promise<uint64_t> seen;
  loop.Post([&](server::LoopContext&) { seen.set_value(loop.passes()); });
  return seen.get_future().get();
}

}  // namespace

TEST_CASE("a batch that changes nothing runs no pass, until the idle interval has passed") {
  ManualClock clock{absl::FromUnixSeconds(1'700'000'000)};
  core::SchedulerCore core(clock, core::CoreOptions{});
  NullStore store;
  server::JobEventHub hub;
  server::StoreHealth health;
  server::BatchCommitter committer(store, hub, health);
  committer.Start();
  server::SchedulerLoop loop(clock, core, committer, health, absl::Milliseconds(200));
  loop.Start();

  PassesSoFar(loop);  // the first batch passes: none ran before
  const uint64_t settled = PassesSoFar(loop);
  // Heartbeat-like commands, with the clock standing still: no pass.
  for (int i = 0; i < 5; ++i) loop.Post([](server::LoopContext&) {});
  CHECK(PassesSoFar(loop) == settled);
  CHECK(PassesSoFar(loop) == settled);

  clock.Advance(server::SchedulerLoop::kIdlePassEvery);
  PassesSoFar(loop);  // the interval is up: this batch passes, after this read
  CHECK(PassesSoFar(loop) == settled + 1);

  // A node registering changes what a pass reads: a pass at once.
  loop.Post([](server::LoopContext& ctx) {
    v1::RegisterNode reg;
    *reg.mutable_node() = core::testing::MakeNode("n0", 8);
    v1::RegisterAck ack;
    ctx.core.AgentRegistered(reg, ctx.fx, ack);
  });
  PassesSoFar(loop);  // may share the registration's batch, read before its pass
  CHECK(PassesSoFar(loop) == settled + 2);
  loop.Stop();
  committer.Stop();
}
