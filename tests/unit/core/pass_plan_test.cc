// The scheduling pass as a plan (pass_planner.h): what one pass decides,
// read before it is applied, told as stories on a manual clock.
#include <catch2/catch.hpp>

#include "common/proto_time.h"
#include "tests/unit/core/core_harness.h"

using namespace gpusched;
using core::CoreOptions;
using core::PassPlan;
using core::QueueSpec;
using core::WaitCause;
using core::testing::CoreHarness;
using core::testing::GpuJob;
using JobUpdate = v1::JobUpdate;

namespace {

v1::JobSpec In(const std::string& queue, v1::JobSpec spec, int64_t time_limit_s = 0) {
  spec.set_queue(queue);
  spec.set_user("alice");
  if (time_limit_s > 0) spec.set_time_limit_s(time_limit_s);
  return spec;
}

// Queue "on-a" may use node a only, "on-b" node b only, "both" either;
// jobs in plain priority order.
CoreOptions ThreeQueues() {
  CoreOptions o = CoreHarness::Options();
  QueueSpec on_a = QueueSpec::Named("on-a"), on_b = QueueSpec::Named("on-b");
  on_a.nodes = "a";
  on_b.nodes = "b";
  o.queues.queues = {on_a, on_b, QueueSpec::Named("both")};
  o.queues.weights = core::PriorityWeights::None();
  REQUIRE(o.queues.Compile().ok());
  return o;
}

// Nodes a and b with 4 GPUs each, three of each busy: until 1,000 s from
// now on a, until 3,000 s on b (time limits).
struct TwoBusyNodes {
  CoreHarness h{ThreeQueues()};
  absl::Time t0;
  TwoBusyNodes() {
    h.AddNode("a", 4);
    h.AddNode("b", 4);
    const uint64_t on_a = h.Submit(In("on-a", GpuJob(3), 1'000));
    const uint64_t on_b = h.Submit(In("on-b", GpuJob(3), 3'000));
    h.Pass();
    h.StartOnAllNodes(on_a);
    h.StartOnAllNodes(on_b);
    t0 = h.clock.Now();
  }
};

}  // namespace

TEST_CASE("each competing node set gets its own reservation in one pass") {
  TwoBusyNodes c;
  CoreHarness& h = c.h;
  const uint64_t head_a = h.Submit(In("on-a", GpuJob(4)));
  const uint64_t head_b = h.Submit(In("on-b", GpuJob(4)));
  const uint64_t long_b = h.Submit(In("on-b", GpuJob(1), 5'000));
  const uint64_t short_a = h.Submit(In("on-a", GpuJob(1), 500));
  const PassPlan plan = h.core.PlanPass();

  // Node b's job does not wait for a's reservation: it gets one of its own.
  const core::PlannedReservation* ra = plan.ReservationOf(head_a);
  const core::PlannedReservation* rb = plan.ReservationOf(head_b);
  REQUIRE(ra != nullptr);
  REQUIRE(rb != nullptr);
  CHECK(plan.reservations.size() == 2);
  const absl::Duration grace = CoreHarness::Options().kill_grace;
  CHECK(ra->reservation.start == c.t0 + absl::Seconds(1'000) + grace);
  CHECK(rb->reservation.start == c.t0 + absl::Seconds(3'000) + grace);
  // Neither reserved job's queue competes for the other's nodes ("both" competes with each).
  const uint64_t bit_a = uint64_t{1} << h.core.queues().IndexOf("on-a");
  const uint64_t bit_b = uint64_t{1} << h.core.queues().IndexOf("on-b");
  CHECK((ra->competing_queues & bit_b) == 0);
  CHECK((rb->competing_queues & bit_a) == 0);
  CHECK(plan.WaitOf(head_a)->cause == WaitCause::kReserved);
  CHECK(plan.WaitOf(head_b)->estimated_start == rb->reservation.start);

  // A job of b that would run past b's reservation waits for it, naming it.
  REQUIRE(plan.WaitOf(long_b) != nullptr);
  CHECK(plan.WaitOf(long_b)->cause == WaitCause::kBehindReservation);
  CHECK_THAT(plan.WaitOf(long_b)->reason, Catch::Contains("job " + std::to_string(head_b) + " holds a reservation"));
  // A job of a that is gone before a's reservation starts uses its GPU.
  REQUIRE(plan.StartOf(short_a) != nullptr);
  CHECK(plan.StartOf(short_a)->allocation.nodes(0).node() == "a");
}

TEST_CASE("a job that competes with two reservations uses their GPUs only if it ends before both") {
  TwoBusyNodes c;
  CoreHarness& h = c.h;
  h.Submit(In("on-a", GpuJob(4)));
  h.Submit(In("on-b", GpuJob(4)));
  // Before a's start (1,000 s) and b's (3,000 s): it may use either's GPU.
  const uint64_t quick = h.Submit(In("both", GpuJob(1), 900));
  // Before b's but not a's: a's reserved GPU is not its to take, nor b's.
  const uint64_t middling = h.Submit(In("both", GpuJob(1), 2'000));
  const PassPlan plan = h.core.PlanPass();
  CHECK(plan.StartOf(quick) != nullptr);
  REQUIRE(plan.WaitOf(middling) != nullptr);
  CHECK(plan.WaitOf(middling)->cause == WaitCause::kBehindReservation);
}

TEST_CASE("a planned pass changes nothing until it is applied, and the applied pass is the plan") {
  TwoBusyNodes c;
  CoreHarness& h = c.h;
  const uint64_t head_a = h.Submit(In("on-a", GpuJob(4)));
  const uint64_t short_a = h.Submit(In("on-a", GpuJob(1), 500));
  const int64_t free_before = h.core.FindNode("a")->gpus_free();
  const PassPlan first = h.core.PlanPass();
  const PassPlan again = h.core.PlanPass();
  CHECK(h.core.FindNode("a")->gpus_free() == free_before);
  CHECK(h.core.FindActive(short_a)->state() == v1::JOB_STATE_PENDING);
  REQUIRE(again.starts.size() == first.starts.size());
  REQUIRE(again.reservations.size() == first.reservations.size());
  CHECK(again.reservations[0].reservation.start == first.reservations[0].reservation.start);

  h.fx = {};
  h.core.Schedule(h.fx);
  CHECK(h.StateOf(short_a) == v1::JOB_STATE_STARTING);
  CHECK(h.Persisted(short_a).allocation().nodes(0).gpu_indices(0) ==
        first.StartOf(short_a)->allocation.nodes(0).gpu_indices(0));
  CHECK(FromProtoTime(h.Persisted(head_a).estimated_start_time()) == first.ReservationOf(head_a)->reservation.start);
  CHECK(h.Persisted(head_a).reason() == first.WaitOf(head_a)->reason);
}

TEST_CASE("the plan says why each job waits, by cause") {
  CoreOptions options = ThreeQueues();
  options.head_blocks_after = absl::Hours(1);
  CoreHarness h(options);
  h.AddNode("a", 4);
  h.AddNode("b", 4);
  // b is taken by a job that says nothing of when it ends.
  const uint64_t forever = h.Submit(In("on-b", GpuJob(4)));
  h.Pass();
  h.StartOnAllNodes(forever);
  const uint64_t first = h.Submit(In("on-a", GpuJob(1)));
  h.Pass();
  h.StartOnAllNodes(first);
  const uint64_t stuck = h.Submit(In("on-b", GpuJob(4)));
  const uint64_t held = h.Submit(In("on-a", GpuJob(1)));
  REQUIRE(h.core.Hold(held, h.fx).ok());
  auto after_ok = [&](uint64_t job) {
    v1::JobSpec spec = In("on-a", GpuJob(1));
    v1::Dependency* d = spec.add_dependencies();
    d->set_job_id(job);
    d->set_kind(v1::DEPENDENCY_KIND_AFTER_OK);
    return h.Submit(spec);
  };
  const uint64_t never = after_ok(first);
  const uint64_t chained = after_ok(never);
  h.Report("a", first, JobUpdate::KIND_EXITED, 1);  // FAILED: `never` can never start

  PassPlan plan = h.core.PlanPass();
  CHECK(plan.WaitOf(held)->cause == WaitCause::kHeld);
  CHECK(plan.WaitOf(stuck)->cause == WaitCause::kMayBePassed);
  // A failed afterok can never be met, and neither can a dependency on the
  // job cancelled for it: both go in one pass.
  REQUIRE(plan.cancels.size() == 2);
  CHECK(plan.cancels[0].first == never);
  CHECK(plan.cancels[1].first == chained);

  // Past its bound, the job without a reservation holds back its own
  // node's queue, and only that.
  h.clock.Advance(absl::Hours(2));
  const uint64_t behind_on_b = h.Submit(In("on-b", GpuJob(1)));
  const uint64_t on_a = h.Submit(In("on-a", GpuJob(1)));
  plan = h.core.PlanPass();
  CHECK(plan.WaitOf(stuck)->cause == WaitCause::kCannotStart);
  CHECK(plan.WaitOf(behind_on_b)->cause == WaitCause::kBlocked);
  CHECK(plan.StartOf(on_a) != nullptr);
}

TEST_CASE("a preemption is planned, and only the applied pass stops its victims") {
  CoreOptions options = CoreHarness::Options();
  options.queues.queues = {QueueSpec::Named("low"), QueueSpec::Named("high", 1)};
  REQUIRE(options.queues.Compile().ok());
  CoreHarness h(options);
  h.AddNode("a", 4);
  const uint64_t victim = h.Submit(In("low", GpuJob(4)));
  h.Pass();
  h.StartOnAllNodes(victim);
  const uint64_t urgent = h.Submit(In("high", GpuJob(4)));
  const PassPlan plan = h.core.PlanPass();
  REQUIRE(plan.preemptions.size() == 1);
  CHECK(plan.preemptions[0].job_id == urgent);
  CHECK(plan.preemptions[0].victims == std::vector<uint64_t>{victim});
  CHECK(plan.WaitOf(urgent)->cause == WaitCause::kPreempting);
  CHECK(plan.ReservationOf(urgent) != nullptr);
  CHECK(h.core.FindActive(victim)->stopping_as() == v1::JOB_STATE_UNSPECIFIED);

  h.Pass();
  CHECK(h.Persisted(victim).stopping_as() == v1::JOB_STATE_PREEMPTED);
  CHECK_THAT(h.Persisted(urgent).reason(), Catch::StartsWith("preempting job"));
}

TEST_CASE("a job only down or drained nodes could make room for does not hold back the nodes that are up") {
  CoreOptions options = CoreHarness::Options();
  options.head_blocks_after = absl::Hours(1);
  CoreHarness h(options);
  h.AddNode("a", 4);
  h.AddNode("b", 4);
  REQUIRE(h.core.DrainNode("b", "maintenance", h.fx).ok());
  // Both nodes' GPUs: admitted (b comes back), but a alone can never hold it.
  const uint64_t big = h.Submit(GpuJob(8, 2, 4));
  h.clock.Advance(absl::Hours(10));
  const uint64_t small = h.Submit(GpuJob(1));
  const PassPlan plan = h.core.PlanPass();
  REQUIRE(plan.WaitOf(big) != nullptr);
  CHECK(plan.WaitOf(big)->cause == WaitCause::kMayBePassed);
  CHECK_THAT(plan.WaitOf(big)->reason, Catch::Contains("until down or drained nodes are back"));
  CHECK(plan.StartOf(small) != nullptr);
}
