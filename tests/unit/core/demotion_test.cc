// Least attained service first (QueueSpec::demote_after_s and
// demote_after_per_gpu; DemoteAfter in attained_service.h), told as short
// stories on a manual clock against the real SchedulerCore.
#include <catch2/catch.hpp>

#include "daemon/core/queue/attained_service.h"
#include "tests/unit/core/core_harness.h"

using namespace gpusched;
using core::CoreOptions;
using core::QueueSpec;
using core::testing::CoreHarness;
using core::testing::GpuJob;
using JobUpdate = v1::JobUpdate;

namespace {

// One queue, "train", whose jobs are demoted after an hour's run, whatever
// their size, or per GPU.
CoreOptions Demoting(int max_requeues = 5, bool per_gpu = false) {
  CoreOptions o = CoreHarness::Options();
  QueueSpec train = QueueSpec::Named("train");
  train.demote_after_s = 3600;
  train.demote_after_per_gpu = per_gpu;
  o.queues.queues = {train};
  o.queues.max_requeues = max_requeues;
  REQUIRE(o.queues.Compile().ok());
  return o;
}

// Submits a 4-GPU job, starts it on node "a" (its `attempt`) and lets it run
// for `ran`, the node heartbeating.
void RunFor(CoreHarness& h, uint64_t id, absl::Duration ran, int attempt = 0) {
  h.Pass();
  REQUIRE(h.StateOf(id) == v1::JOB_STATE_STARTING);
  h.StartOnAllNodes(id, attempt);
  h.clock.Advance(ran);
  h.core.AgentHeartbeat("a", h.fx);
  h.Drain();
}

bool KillSentFor(const CoreHarness& h, uint64_t id) {
  for (const v1::DaemonMessage& m : h.Sent("a", v1::DaemonMessage::kKill)) {
    if (m.kill().job_id() == id) return true;
  }
  return false;
}

// Runs `long_job` (its `attempt`) for two hours, then submits a fresh job
// that stops it, and lets the fresh job run and end.
void DemoteForFreshJob(CoreHarness& h, uint64_t long_job, int attempt) {
  INFO("attempt " << attempt);
  RunFor(h, long_job, absl::Hours(2), attempt);
  const uint64_t fresh = h.Submit(GpuJob(4));
  h.Pass();
  REQUIRE(KillSentFor(h, long_job));
  h.Report("a", long_job, JobUpdate::KIND_EXITED, 143, attempt);
  REQUIRE(h.StateOf(long_job) == v1::JOB_STATE_PENDING);
  h.Drain();
  h.Pass();
  h.StartOnAllNodes(fresh);
  h.Report("a", fresh, JobUpdate::KIND_EXITED, 0);
  h.Drain();
}

// On a 4-GPU node "a", a 4-GPU job that has run a minute less than `after`
// is not preempted for a fresh job; two minutes later it is. Returns it.
uint64_t ExpectDemotedPast(CoreHarness& h, absl::Duration after) {
  h.AddNode("a", 4);
  const uint64_t running = h.Submit(GpuJob(4));
  RunFor(h, running, after - absl::Minutes(1));
  const uint64_t fresh = h.Submit(GpuJob(4));
  h.Pass();
  CHECK_FALSE(KillSentFor(h, running));
  CHECK(h.StateOf(fresh) == v1::JOB_STATE_PENDING);
  h.clock.Advance(absl::Minutes(2));
  h.core.AgentHeartbeat("a", h.fx);
  h.Pass();
  REQUIRE(KillSentFor(h, running));
  return running;
}

}  // namespace

TEST_CASE("demotion: a job run past demote_after is preempted for a fresh one, keeps its service, ranks last") {
  CoreHarness h(Demoting());
  h.AddNode("a", 4);
  const uint64_t long_job = h.Submit(GpuJob(4));
  RunFor(h, long_job, absl::Hours(2));

  const uint64_t fresh = h.Submit(GpuJob(4));
  h.Pass();
  // Told to stop with the grace for a checkpoint, as a lower tier would be.
  REQUIRE(KillSentFor(h, long_job));
  CHECK(h.Sent("a", v1::DaemonMessage::kKill)[0].kill().grace_ms() == 5000);
  CHECK(h.Persisted(long_job).stopping_as() == v1::JOB_STATE_PREEMPTED);
  CHECK(h.Persisted(long_job).stop_cause() == v1::STOP_CAUSE_DEMOTED);
  CHECK_THAT(h.Persisted(long_job).reason(),
             Catch::Contains("preempted by job " + std::to_string(fresh)) &&
                 Catch::Contains("this job has run 2h, past the 1h after which its queue demotes it"));
  CHECK(h.StateOf(fresh) == v1::JOB_STATE_PENDING);
  CHECK_THAT(h.Persisted(fresh).reason(), Catch::Contains("preempting job " + std::to_string(long_job)) &&
                                              Catch::Contains("their queue demoted them"));

  h.clock.Advance(absl::Seconds(3));
  h.Report("a", long_job, JobUpdate::KIND_EXITED, 143);
  REQUIRE(h.StateOf(long_job) == v1::JOB_STATE_PENDING);
  CHECK(h.Persisted(long_job).attempt() == 1);
  // Its two hours and the seconds it took to stop stay with it.
  CHECK(h.Persisted(long_job).earlier_run_s() == 2 * 3600 + 3);

  h.Drain();
  h.Pass();
  REQUIRE(h.StateOf(fresh) == v1::JOB_STATE_STARTING);
  h.StartOnAllNodes(fresh);
  // A job submitted after the demoted one still goes before it.
  h.clock.Advance(absl::Minutes(1));
  h.core.AgentHeartbeat("a", h.fx);
  const uint64_t later = h.Submit(GpuJob(4));
  h.Report("a", fresh, JobUpdate::KIND_EXITED, 0);
  h.Pass();
  CHECK(h.StateOf(later) == v1::JOB_STATE_STARTING);
  CHECK(h.StateOf(long_job) == v1::JOB_STATE_PENDING);
  h.StartOnAllNodes(later);
  h.Report("a", later, JobUpdate::KIND_EXITED, 0);
  h.Drain();
  h.Pass();
  // Then it runs again, as its next attempt.
  REQUIRE(h.StateOf(long_job) == v1::JOB_STATE_STARTING);
  CHECK(h.Sent("a", v1::DaemonMessage::kLaunch)[0].launch().attempt() == 1);
}

TEST_CASE("demotion: a job that has not run demote_after yet is never preempted for a fresh one") {
  CoreHarness h(Demoting());
  ExpectDemotedPast(h, absl::Hours(1));
}

TEST_CASE("demotion: per GPU, a job of 4 GPUs is demoted after 4x demote_after") {
  CoreHarness h(Demoting(/*max_requeues=*/5, /*per_gpu=*/true));
  const uint64_t gang = ExpectDemotedPast(h, absl::Hours(4));
  CHECK(h.Persisted(gang).stop_cause() == v1::STOP_CAUSE_DEMOTED);
  CHECK_THAT(h.Persisted(gang).reason(), Catch::Contains("past the 4h (1h per GPU) after which its queue demotes it"));
}

TEST_CASE("demotion: per GPU, of two jobs that ran as long, the 1-GPU job is stopped and the 4-GPU job is not") {
  CoreHarness h(Demoting(/*max_requeues=*/5, /*per_gpu=*/true));
  h.AddNode("a", 4);
  h.AddNode("b", 1);
  const uint64_t gang = h.Submit(GpuJob(4));
  h.Pass();
  REQUIRE(h.Persisted(gang).allocation().nodes(0).node() == "a");
  h.StartOnAllNodes(gang);
  const uint64_t single = h.Submit(GpuJob(1));
  h.Pass();
  REQUIRE(h.Persisted(single).allocation().nodes(0).node() == "b");
  h.StartOnAllNodes(single);
  h.clock.Advance(absl::Hours(2));
  for (const char* node : {"a", "b"}) h.core.AgentHeartbeat(node, h.fx);
  h.Drain();

  const uint64_t fresh = h.Submit(GpuJob(1));
  h.Pass();
  CHECK(h.Sent("a", v1::DaemonMessage::kKill).empty());
  const auto kills = h.Sent("b", v1::DaemonMessage::kKill);
  REQUIRE(kills.size() == 1);
  CHECK(kills[0].kill().job_id() == single);
  CHECK_THAT(h.Persisted(single).reason(), Catch::Contains("past the 1h (1h per GPU) after which"));
  CHECK_THAT(h.Persisted(fresh).reason(), Catch::Contains("preempting job " + std::to_string(single)));
}

TEST_CASE("demotion: DemoteAfter scales with the job's GPUs only where the queue says so") {
  QueueSpec q = QueueSpec::Named("train");
  auto job_of = [](int64_t gpus) {
    v1::Job job;
    job.mutable_spec()->mutable_resources()->set_gpus(gpus);
    return job;
  };
  CHECK(core::DemoteAfter(job_of(4), q) == absl::InfiniteDuration());  // off
  q.demote_after_s = 3600;
  CHECK(core::DemoteAfter(job_of(4), q) == absl::Hours(4));
  CHECK(core::DemoteAfter(job_of(1), q) == absl::Hours(1));
  CHECK(core::DemoteAfter(job_of(0), q) == absl::Hours(1));  // CPU-only jobs count as one
  // Shares and MIG instances count as the GPUs they hold, at least one.
  v1::Job shares = job_of(8);
  shares.mutable_spec()->mutable_resources()->set_gpu_share_milli(100);
  CHECK(core::DemoteAfter(shares, q) == absl::Hours(1));
  v1::Job mig = job_of(2);
  mig.mutable_spec()->mutable_resources()->set_mig_profile("7g.80gb");
  CHECK(core::DemoteAfter(mig, q) == absl::Hours(2));
  mig.mutable_spec()->mutable_resources()->set_mig_profile("3g.40gb");
  CHECK(core::DemoteAfter(mig, q) == absl::Hours(1));
  q.demote_after_per_gpu = false;
  CHECK(core::DemoteAfter(job_of(4), q) == absl::Hours(1));
}

TEST_CASE("demotion: a demoted job never preempts another demoted job") {
  CoreHarness h(Demoting());
  h.AddNode("a", 4);
  const uint64_t first = h.Submit(GpuJob(4));
  RunFor(h, first, absl::Hours(2));
  // The second is preempted by nobody: only the fresh third stops the first.
  const uint64_t second = h.Submit(GpuJob(4));
  h.Pass();
  REQUIRE(KillSentFor(h, first));
  h.Report("a", first, JobUpdate::KIND_EXITED, 143);
  h.Drain();
  h.Pass();
  RunFor(h, second, absl::Hours(2));
  // Both demoted now: `first`, pending, waits for `second` to end.
  h.Pass();
  CHECK_FALSE(KillSentFor(h, second));
  CHECK(h.StateOf(first) == v1::JOB_STATE_PENDING);
  h.Report("a", second, JobUpdate::KIND_EXITED, 0);
  h.Pass();
  CHECK(h.StateOf(first) == v1::JOB_STATE_STARTING);
}

TEST_CASE("demotion: its requeues are not bounded by max_requeues") {
  CoreHarness h(Demoting(/*max_requeues=*/0));
  h.AddNode("a", 4);
  const uint64_t long_job = h.Submit(GpuJob(4));
  for (int attempt = 0; attempt < 3; ++attempt) DemoteForFreshJob(h, long_job, attempt);
  CHECK(h.Persisted(long_job).attempt() == 3);
  CHECK(h.Persisted(long_job).earlier_run_s() == 3 * 2 * 3600);
}

TEST_CASE("demotion: its requeues leave a job its max_requeues for other causes") {
  // "train" demotes after an hour; "urgent" (tier 1) preempts it.
  CoreOptions o = Demoting(/*max_requeues=*/1);
  o.queues.queues.push_back(QueueSpec::Named("urgent", 1));
  REQUIRE(o.queues.Compile().ok());
  CoreHarness h(o);
  h.AddNode("a", 4);
  const uint64_t long_job = h.Submit(GpuJob(4));
  for (int attempt = 0; attempt < 2; ++attempt) DemoteForFreshJob(h, long_job, attempt);
  REQUIRE(h.Persisted(long_job).demotions() == 2);
  RunFor(h, long_job, absl::Minutes(1), 2);
  v1::JobSpec urgent = GpuJob(4);
  urgent.set_queue("urgent");
  h.Submit(urgent);
  h.Pass();
  REQUIRE(KillSentFor(h, long_job));
  h.Report("a", long_job, JobUpdate::KIND_EXITED, 143, 2);
  // Its one requeue for another cause is still there.
  CHECK(h.StateOf(long_job) == v1::JOB_STATE_PENDING);
  CHECK(h.Persisted(long_job).attempt() == 3);
}

TEST_CASE("demotion: a job cancelled while it stops for a fresh one ends cancelled") {
  CoreHarness h(Demoting());
  h.AddNode("a", 4);
  const uint64_t long_job = h.Submit(GpuJob(4));
  RunFor(h, long_job, absl::Hours(2));
  h.Submit(GpuJob(4));
  h.Pass();
  REQUIRE(h.Persisted(long_job).stopping_as() == v1::JOB_STATE_PREEMPTED);
  REQUIRE(h.core.Cancel(long_job, "", h.fx).ok());
  h.Report("a", long_job, JobUpdate::KIND_EXITED, 143);
  CHECK(h.StateOf(long_job) == v1::JOB_STATE_CANCELLED);
  CHECK(h.Persisted(long_job).reason() == "cancelled by user");
}

TEST_CASE("demotion: behind a reservation, a fresh job preempts only demoted jobs off the reserved GPUs") {
  // "train" demotes, "eval" does not; both use nodes a, b and c.
  CoreOptions o = Demoting();
  o.queues.queues.push_back(QueueSpec::Named("eval"));
  REQUIRE(o.queues.Compile().ok());
  CoreHarness h(o);
  for (const char* node : {"a", "b", "c"}) h.AddNode(node, 4);
  auto heartbeats = [&] {
    for (const char* node : {"a", "b", "c"}) h.core.AgentHeartbeat(node, h.fx);
  };
  auto start = [&](v1::JobSpec spec) {
    const uint64_t id = h.Submit(std::move(spec));
    h.Pass();
    REQUIRE(h.StateOf(id) == v1::JOB_STATE_STARTING);
    h.StartOnAllNodes(id);
    return id;
  };
  v1::JobSpec limited = GpuJob(4);
  limited.set_time_limit_s(3 * 3600);
  // The younger of the two demoted jobs would be preempted first, but a
  // reservation counts on its GPUs.
  const uint64_t demoted_open = start(GpuJob(4));  // no limit: no reservation counts on it
  h.clock.Advance(absl::Seconds(1));
  const uint64_t demoted_limited = start(limited);  // ends within 3 h: a reservation counts on it
  h.clock.Advance(absl::Hours(2));
  heartbeats();
  const uint64_t young = start(limited);  // not demoted, ends within 3 h
  const std::string young_node = h.Persisted(young).allocation().nodes(0).node();
  const std::string limited_node = h.Persisted(demoted_limited).allocation().nodes(0).node();
  const std::string open_node = h.Persisted(demoted_open).allocation().nodes(0).node();
  h.clock.Advance(absl::Minutes(1));
  heartbeats();
  h.Drain();

  // An eval gang cannot preempt (its queue does not demote): it is reserved
  // the two nodes whose jobs end first.
  v1::JobSpec gang = GpuJob(8, 2, 4);
  gang.set_queue("eval");
  const uint64_t reserved = h.Submit(gang);
  const uint64_t fresh = h.Submit(GpuJob(4));
  h.Pass();
  INFO(h.Persisted(reserved).reason() << " / " << h.Persisted(fresh).reason());
  REQUIRE(h.Persisted(reserved).wait_cause() == v1::WAIT_CAUSE_RESERVED);
  CHECK(h.Sent(limited_node, v1::DaemonMessage::kKill).empty());
  CHECK(h.Sent(young_node, v1::DaemonMessage::kKill).empty());
  const auto kills = h.Sent(open_node, v1::DaemonMessage::kKill);
  REQUIRE(kills.size() == 1);
  CHECK(kills[0].kill().job_id() == demoted_open);
  CHECK_THAT(h.Persisted(fresh).reason(), Catch::Contains("preempting job " + std::to_string(demoted_open)));
}

TEST_CASE("demotion: demote_after needs its demoted jobs requeued, and must not be negative") {
  core::QueuePolicy policy;
  QueueSpec q = QueueSpec::Named("train");
  q.demote_after_s = 3600;
  q.preempt_mode = core::PreemptMode::kCancel;
  policy.queues = {q};
  absl::Status s = policy.Compile();
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(s.message()), Catch::Contains("train") && Catch::Contains("demote_after") &&
                                           Catch::Contains("requeue") && Catch::Contains("cancel"));
  policy.queues[0].preempt_mode = core::PreemptMode::kRequeue;
  policy.queues[0].demote_after_s = -1;
  CHECK_THAT(std::string(policy.Compile().message()), Catch::Contains("demote_after must be >= 0"));
}
