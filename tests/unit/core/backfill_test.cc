// Backfill with a reservation, told as short stories on a manual clock.
#include "daemon/core/backfill.h"

#include <catch2/catch.hpp>

#include "common/proto_time.h"
#include "daemon/core/policy/share_placement.h"
#include "tests/unit/core/core_harness.h"

using namespace gpusched;
using core::testing::CoreHarness;
using core::testing::GpuJob;
using JobUpdate = v1::JobUpdate;

namespace {

v1::JobSpec Limited(v1::JobSpec spec, int64_t seconds) {
  spec.set_time_limit_s(seconds);
  return spec;
}

// Time passes; the agents keep heartbeating, so their nodes stay up.
void Advance(CoreHarness& h, absl::Duration d, int nodes) {
  h.clock.Advance(d);
  for (int n = 0; n < nodes; ++n) h.core.AgentHeartbeat("n" + std::to_string(n), h.fx);
}

// Starts job `id` (placed on `node`) as its agent would.
void Run(CoreHarness& h, const std::string& node, uint64_t id) { h.Report(node, id, JobUpdate::KIND_STARTED); }

std::string NodeOf(CoreHarness& h, uint64_t id) {
  const v1::Job& job = h.Persisted(id);
  INFO("job " << id << " " << v1::JobState_Name(job.state()) << ": " << job.reason());
  REQUIRE(job.allocation().nodes_size() > 0);
  return job.allocation().nodes(0).node();
}

// These stories are about the reservation, told in submission order: the
// default ranking would put the jobs with short limits first
// (estimated_backfill_test.cc has its stories).
core::CoreOptions SubmissionOrder() {
  core::CoreOptions options = CoreHarness::Options();
  options.queues.weights = core::PriorityWeights::None();
  return options;
}

}  // namespace

TEST_CASE("a 64-GPU gang does not starve behind a stream of 1-GPU jobs") {
  CoreHarness h(SubmissionOrder());
  for (int n = 0; n < 8; ++n) h.AddNode("n" + std::to_string(n), 8);
  // The cluster is full of 1-hour single-GPU jobs, all ending at different times.
  std::vector<uint64_t> running;
  for (int i = 0; i < 64; ++i) {
    running.push_back(h.Submit(Limited(GpuJob(1), 3600)));
    h.Pass();
    Run(h, NodeOf(h, running.back()), running.back());
    Advance(h, absl::Seconds(10), 8);
  }
  const absl::Time last_end = h.clock.Now() - absl::Seconds(10) + absl::Seconds(3600) + absl::Seconds(5);
  uint64_t gang = h.Submit(Limited(GpuJob(64), 7200));
  h.Pass();
  REQUIRE(h.StateOf(gang) == v1::JOB_STATE_PENDING);
  CHECK_THAT(h.Persisted(gang).reason(), Catch::Contains("; reserved to start by "));
  REQUIRE(h.Persisted(gang).has_estimated_start_time());
  CHECK(FromProtoTime(h.Persisted(gang).estimated_start_time()) == last_end);

  // A stream of 1-GPU jobs, each longer than the wait: every GPU that frees
  // up is the gang's, so none of them may start before it.
  std::vector<uint64_t> stream;
  size_t next_to_end = 0;
  while (h.StateOf(gang) == v1::JOB_STATE_PENDING) {
    stream.push_back(h.Submit(Limited(GpuJob(1), 4 * 3600)));
    Advance(h, absl::Seconds(10), 8);
    // The running jobs end in the order they started, one per 10 s.
    if (next_to_end < running.size()) {
      uint64_t id = running[next_to_end++];
      h.Report(NodeOf(h, id), id, JobUpdate::KIND_EXITED, 0);
    }
    h.Pass();
    for (uint64_t id : stream) CHECK(h.StateOf(id) == v1::JOB_STATE_PENDING);
    REQUIRE(h.clock.Now() <= last_end);
  }
  CHECK(h.StateOf(gang) == v1::JOB_STATE_STARTING);
  CHECK(h.Persisted(gang).allocation().nodes_size() == 8);
  CHECK_FALSE(h.Persisted(gang).has_estimated_start_time());
}

TEST_CASE("short jobs backfill onto the reserved GPUs; longer ones go around them or wait") {
  CoreHarness h(SubmissionOrder());
  h.AddNode("a", 4);
  h.AddNode("b", 4);
  uint64_t blocker = h.Submit(Limited(GpuJob(3), 600));  // 3 of a for 10 minutes
  h.Pass();
  Run(h, "a", blocker);
  uint64_t other = h.Submit(GpuJob(3));  // 3 of b, no time limit
  h.Pass();
  Run(h, "b", other);
  REQUIRE(NodeOf(h, blocker) == "a");
  REQUIRE(NodeOf(h, other) == "b");

  uint64_t head = h.Submit(GpuJob(4));  // only a can give 4 in time: reserved there from the blocker's limit
  uint64_t around = h.Submit(Limited(GpuJob(1), 3600));    // fits off the reserved GPUs: b's last one
  uint64_t long_job = h.Submit(Limited(GpuJob(1), 3600));  // only a's reserved GPU is left: would delay the head
  uint64_t short_job = h.Submit(Limited(GpuJob(1), 300));  // gone before the head starts: may take it
  uint64_t unlimited = h.Submit(GpuJob(1));                // nothing left that cannot hurt the head
  h.Pass();
  CHECK(h.StateOf(head) == v1::JOB_STATE_PENDING);
  CHECK(h.StateOf(around) == v1::JOB_STATE_STARTING);
  CHECK(NodeOf(h, around) == "b");
  CHECK(h.StateOf(long_job) == v1::JOB_STATE_PENDING);
  CHECK_THAT(h.Persisted(long_job).reason(), Catch::EndsWith("; job " + std::to_string(head) + " holds a reservation"));
  CHECK(h.StateOf(short_job) == v1::JOB_STATE_STARTING);
  CHECK(NodeOf(h, short_job) == "a");
  CHECK(h.StateOf(unlimited) == v1::JOB_STATE_PENDING);

  // When the blocker and the short job are gone, the head starts on a.
  Run(h, "a", short_job);
  Run(h, "b", around);
  h.Report("a", blocker, JobUpdate::KIND_EXITED, 0);
  h.Report("a", short_job, JobUpdate::KIND_EXITED, 0);
  h.Pass();
  CHECK(h.StateOf(head) == v1::JOB_STATE_STARTING);
  CHECK(NodeOf(h, head) == "a");
  CHECK(h.StateOf(long_job) == v1::JOB_STATE_PENDING);
}

TEST_CASE(
    "without time limits nothing can be promised: smaller jobs pass the head until it has waited "
    "head_blocks_after, then they wait for it") {
  CoreHarness h(SubmissionOrder());
  h.AddNode("a", 8);
  const uint64_t filler = h.Submit(GpuJob(5));  // no time limit
  h.Pass();
  h.Report("a", filler, JobUpdate::KIND_STARTED);
  const uint64_t head = h.Submit(GpuJob(8));
  const uint64_t early = h.Submit(GpuJob(1));
  h.Pass();
  CHECK(h.StateOf(head) == v1::JOB_STATE_PENDING);
  CHECK_FALSE(h.Persisted(head).has_estimated_start_time());
  CHECK_THAT(h.Persisted(head).reason(), Catch::EndsWith("; smaller jobs may pass it until it has waited 38h"));
  CHECK(h.StateOf(early) == v1::JOB_STATE_STARTING);

  h.clock.Advance(core::CoreOptions{}.head_blocks_after);
  h.core.AgentHeartbeat("a", h.fx);
  const uint64_t late = h.Submit(GpuJob(1));  // would fit on the 2 free GPUs
  h.Pass();
  CHECK(h.StateOf(late) == v1::JOB_STATE_PENDING);
  CHECK(h.Persisted(late).reason() == "waiting behind a higher-priority job that cannot start yet");
  CHECK(h.Persisted(head).reason() == "waiting for 8 free GPUs (2 free on 1 up node)");

  // Strict queue order (head_blocks_after 0): nothing passes it at all.
  core::CoreOptions strict = SubmissionOrder();
  strict.head_blocks_after = absl::ZeroDuration();
  CoreHarness s(strict);
  s.AddNode("a", 8);
  s.Submit(GpuJob(5));
  s.Pass();
  const uint64_t strict_head = s.Submit(GpuJob(8));
  const uint64_t small = s.Submit(Limited(GpuJob(1), 60));
  s.Pass();
  CHECK(s.StateOf(strict_head) == v1::JOB_STATE_PENDING);
  CHECK(s.StateOf(small) == v1::JOB_STATE_PENDING);
  CHECK(s.Persisted(small).reason() == "waiting behind a higher-priority job that cannot start yet");
}

TEST_CASE("a reservation counts the jobs started earlier in the same pass: backfill never delays the reserved job") {
  // Plain priority order: the story's jobs come up in the order it tells.
  core::CoreOptions options = CoreHarness::Options();
  options.queues.weights = core::PriorityWeights::None();
  CoreHarness h(options);
  for (int n = 0; n < 4; ++n) h.AddNode("n" + std::to_string(n), 8);
  const uint64_t x = h.Submit(Limited(GpuJob(16, 2, 8), 1000));  // whole nodes, as the story has it
  h.Pass();
  const v1::Allocation x_on = h.Persisted(x).allocation();  // copied: each report rewrites the row
  for (const auto& part : x_on.nodes()) Run(h, part.node(), x);
  Advance(h, absl::Seconds(1), 4);
  const absl::Time arrived = h.clock.Now();
  // Considered in this order.
  auto with_priority = [](v1::JobSpec spec, int priority) {
    spec.set_priority(priority);
    return spec;
  };
  const uint64_t j = h.Submit(with_priority(Limited(GpuJob(8, 1, 8), 100), 30));
  const uint64_t big = h.Submit(with_priority(Limited(GpuJob(16, 2, 8), 100), 20));
  const uint64_t l = h.Submit(with_priority(Limited(GpuJob(8, 1, 8), 10000), 10));
  h.Pass();
  // J takes the third node; the 16-GPU job waits for J's end, not X's, and
  // the long one may not take the fourth node it needs.
  CHECK(h.StateOf(j) == v1::JOB_STATE_STARTING);
  REQUIRE(h.StateOf(big) == v1::JOB_STATE_PENDING);
  REQUIRE(h.Persisted(big).has_estimated_start_time());
  CHECK(FromProtoTime(h.Persisted(big).estimated_start_time()) == arrived + absl::Seconds(100) + absl::Seconds(5));
  CHECK(h.StateOf(l) == v1::JOB_STATE_PENDING);

  Run(h, NodeOf(h, j), j);
  Advance(h, absl::Seconds(100), 4);
  h.Report(NodeOf(h, j), j, JobUpdate::KIND_EXITED, 0);
  h.Pass();
  CHECK(h.StateOf(big) == v1::JOB_STATE_STARTING);  // at J's end, long before X's
  CHECK(h.StateOf(l) == v1::JOB_STATE_PENDING);
}

TEST_CASE("a reservation's held GPUs are closed to shares too, and come back whole when the hold lets go") {
  core::ClusterState cluster;
  v1::NodeInfo info = core::testing::MakeNode("n", 2, 64);
  for (v1::GpuInfo& gpu : *info.mutable_gpus()) gpu.set_share_mode(v1::GPU_SHARE_MODE_TIMESLICE);
  cluster.UpsertNode(info);
  cluster.SetState("n", v1::NODE_STATE_UP, "");
  core::Reservation reservation;
  reservation.job_id = 7;
  v1::NodeAllocation& part = *reservation.allocation.add_nodes();
  part.set_node("n");
  part.add_gpu_indices(0);
  part.add_gpu_indices(1);
  core::GangRequest share;
  share.total_gpus = 1;
  share.gpu_share_milli = 500;
  {
    core::ReservationHold hold(cluster, reservation);
    const core::PlacementResult placed = core::policy::PlaceShares(cluster, share);
    CHECK_FALSE(placed.placed());
    CHECK(cluster.Find("n")->FreeShareMilli(0) == 0);
  }
  const core::NodeSlot& slot = *cluster.Find("n");
  CHECK(slot.gpu_owner == std::vector<uint64_t>{0, 0});
  CHECK(slot.FreeShareMilli(0) == 1000);
  CHECK(slot.jobs.empty());
  CHECK(core::policy::PlaceShares(cluster, share).placed());
}
