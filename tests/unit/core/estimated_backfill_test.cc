// Backfill and ranking for jobs that give no time limit: run times learned
// from the jobs that ended (RuntimeHistory), told as stories on a manual
// clock.
#include <catch2/catch.hpp>

#include "common/proto_time.h"
#include "tests/unit/core/core_harness.h"

using namespace gpusched;
using core::testing::CoreHarness;
using core::testing::GpuJob;
using JobUpdate = v1::JobUpdate;

namespace {

v1::JobSpec Named(v1::JobSpec spec, const std::string& name) {
  spec.set_user("u");
  spec.set_name(name);
  return spec;
}

// Three earlier runs of `name`, each `seconds` long.
void Learn(CoreHarness& h, const std::string& name, int64_t gpus, int64_t seconds) {
  for (int i = 0; i < 3; ++i) h.core.LearnRunTime(Named(GpuJob(gpus), name), absl::Seconds(seconds));
}

// Both jobs were ranked in the last pass; `first` above `second`.
void RankedAbove(CoreHarness& h, uint64_t first, uint64_t second) {
  auto a = h.core.PriorityOf(first);
  auto b = h.core.PriorityOf(second);
  REQUIRE(a.has_value());
  REQUIRE(b.has_value());
  CHECK(a->total > b->total);
}

}  // namespace

TEST_CASE("without time limits, the reservation is planned from learned run times and backfill respects it") {
  core::CoreOptions options = CoreHarness::Options();
  options.queues.weights = core::PriorityWeights::None();  // the story's order
  CoreHarness h(options);
  h.AddNode("n0", 8);
  h.AddNode("n1", 8);
  Learn(h, "train", 8, 1'000);
  Learn(h, "long", 4, 10'000);
  Learn(h, "long", 2, 10'000);
  Learn(h, "quick", 2, 100);
  const uint64_t train = h.Submit(Named(GpuJob(8, 1, 8), "train"));
  const uint64_t long_run = h.Submit(Named(GpuJob(4), "long"));
  h.Pass();
  h.StartOnAllNodes(train);
  h.StartOnAllNodes(long_run);
  const absl::Time t0 = h.clock.Now();
  h.clock.Advance(absl::Seconds(1));

  const uint64_t gang = h.Submit(Named(GpuJob(16, 2, 8), "big"));  // no history of its own
  const uint64_t quick = h.Submit(Named(GpuJob(2), "quick"));
  const uint64_t late = h.Submit(Named(GpuJob(2), "long"));
  h.Pass();
  // The gang needs both nodes: it is reserved for the long job's expected end.
  REQUIRE(h.StateOf(gang) == v1::JOB_STATE_PENDING);
  REQUIRE(h.Persisted(gang).has_estimated_start_time());
  CHECK(FromProtoTime(h.Persisted(gang).estimated_start_time()) == t0 + absl::Seconds(10'000));
  // Expected to end long before that: it may use the reserved GPUs.
  CHECK(h.StateOf(quick) == v1::JOB_STATE_STARTING);
  // Expected to run past it: it may not.
  CHECK(h.StateOf(late) == v1::JOB_STATE_PENDING);
  CHECK(h.Persisted(late).reason().find("holds a reservation") != std::string::npos);
}

TEST_CASE("the default ranking puts work expected to be short first") {
  CoreHarness h;
  h.AddNode("n0", 1);
  Learn(h, "quick", 1, 60);
  Learn(h, "long", 1, 36'000);
  const uint64_t running = h.Submit(Named(GpuJob(1), "other"));
  h.Pass();
  h.StartOnAllNodes(running);
  const uint64_t long_run = h.Submit(Named(GpuJob(1), "long"));
  h.clock.Advance(absl::Seconds(10));
  const uint64_t quick = h.Submit(Named(GpuJob(1), "quick"));
  h.Pass();
  RankedAbove(h, quick, long_run);
  CHECK(h.core.PriorityOf(quick)->short_work > h.core.PriorityOf(long_run)->short_work);

  h.Report("n0", running, JobUpdate::KIND_EXITED, 0);
  h.Pass();
  CHECK(h.StateOf(quick) == v1::JOB_STATE_STARTING);  // submitted later, expected 600x shorter
  CHECK(h.StateOf(long_run) == v1::JOB_STATE_PENDING);
}

TEST_CASE(
    "a multi-node gang past its starvation bound goes ahead of the jobs that need whole nodes; past twice it, "
    "ahead of short work too") {
  core::CoreOptions options = CoreHarness::Options();
  options.head_blocks_after = absl::Hours(24);
  CoreHarness h(options);
  h.AddNode("n0", 2);
  h.AddNode("n1", 2);
  Learn(h, "quick", 1, 600);
  Learn(h, "pair", 2, 600);
  std::vector<uint64_t> running;
  for (int i = 0; i < 4; ++i) running.push_back(h.Submit(Named(GpuJob(1), "quick")));
  h.Pass();
  for (uint64_t id : running) h.StartOnAllNodes(id);
  // Two of four nodes' worth: its bound is 24h x (4 / (4 x 2))^2 = 6h.
  const uint64_t gang = h.Submit(Named(GpuJob(4, 2, 2), "big"));
  const uint64_t fresh = h.Submit(Named(GpuJob(1), "quick"));
  const uint64_t pair = h.Submit(Named(GpuJob(2), "pair"));  // a whole node
  h.Pass();
  // Fresh short work ranks above the gang, which has no history.
  RankedAbove(h, fresh, gang);
  RankedAbove(h, pair, gang);

  auto end = [&](uint64_t id) {
    for (const std::string node : {"n0", "n1"}) h.core.AgentHeartbeat(node, h.fx);
    h.Report(h.Persisted(id).allocation().nodes(0).node(), id, JobUpdate::KIND_EXITED, 0);
  };
  // Six hours later a GPU frees: the gang is due. It goes ahead of the job
  // that needs a whole node, and holds the reservation; the job smaller than
  // a node still takes the free GPU.
  h.clock.Advance(absl::Hours(6));
  end(running[0]);
  h.Pass();
  CHECK(h.StateOf(gang) == v1::JOB_STATE_PENDING);
  CHECK(h.Persisted(gang).has_estimated_start_time());
  CHECK(h.StateOf(fresh) == v1::JOB_STATE_STARTING);
  CHECK(h.StateOf(pair) == v1::JOB_STATE_PENDING);
  CHECK_THAT(h.Persisted(pair).reason(), Catch::Contains("job " + std::to_string(gang) + " holds a reservation"));

  // Twice its bound: it goes ahead of every job, and the short job behind
  // it may not take a GPU that frees (it would end after the reservation's
  // start, which waits for the other jobs' expected ends).
  h.StartOnAllNodes(fresh);
  h.clock.Advance(absl::Hours(6));
  end(running[1]);
  const uint64_t late = h.Submit(Named(GpuJob(1), "quick"));
  h.Pass();
  CHECK(h.StateOf(gang) == v1::JOB_STATE_PENDING);
  CHECK(h.StateOf(late) == v1::JOB_STATE_PENDING);
  for (uint64_t id : {running[2], running[3], fresh}) end(id);
  h.Pass();
  CHECK(h.StateOf(gang) == v1::JOB_STATE_STARTING);
}

TEST_CASE("a pending job's rank carries the run time the pass expects and the estimate it came from") {
  CoreHarness h;
  h.AddNode("n0", 8);
  const uint64_t busy = h.Submit(GpuJob(8));
  h.Pass();
  REQUIRE(h.StateOf(busy) == v1::JOB_STATE_STARTING);  // the others wait, and are ranked
  Learn(h, "train", 8, 1'000);
  v1::JobSpec limited = Named(GpuJob(8), "train");
  limited.set_time_limit_s(600);
  const uint64_t unknown = h.Submit(Named(GpuJob(8), "never-seen"));
  const uint64_t learned = h.Submit(Named(GpuJob(8), "train"));
  const uint64_t short_limit = h.Submit(limited);
  h.Pass();
  const v1::PriorityFactors from_history = h.core.PriorityOf(learned)->ToProto();
  CHECK(from_history.expected_run_s() == 1'000);
  CHECK(from_history.estimate_typical_s() == 1'000);
  CHECK(from_history.estimate_samples() == 3);
  CHECK(from_history.estimate_basis() == v1::ESTIMATE_BASIS_USER_AND_NAME);
  // A time limit shorter than the history is what it is expected to take.
  const v1::PriorityFactors from_limit = h.core.PriorityOf(short_limit)->ToProto();
  CHECK(from_limit.expected_run_s() == 600);
  CHECK(from_limit.estimate_typical_s() == 1'000);
  // Nothing similar ran under its name, but 8-GPU jobs did: the size class speaks.
  const v1::PriorityFactors coarse = h.core.PriorityOf(unknown)->ToProto();
  CHECK(coarse.estimate_basis() == v1::ESTIMATE_BASIS_USER_AND_SIZE);
}
