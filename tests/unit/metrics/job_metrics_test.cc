#include <catch2/catch.hpp>

#include "common/proto_time.h"
#include "daemon/metrics/daemon_metrics.h"
#include "daemon/metrics/placement_metrics.h"
#include "tests/unit/metrics/metrics_test_util.h"

namespace gpusched::metrics {
namespace {

using testing::Bucket;
using testing::Value;

const absl::Time kSubmit = absl::FromUnixSeconds(1'700'000'000);

v1::Job JobIn(uint64_t id, v1::JobState state, const std::string& queue = "default") {
  v1::Job job;
  job.set_id(id);
  job.set_state(state);
  job.mutable_spec()->set_queue(queue);
  *job.mutable_submit_time() = ToProtoTime(kSubmit);
  return job;
}

// Placed on a single node's NVSwitch; running (start_time) 90 s after submit.
v1::Job Placed(uint64_t id, v1::JobState state) {
  v1::Job job = JobIn(id, state);
  *job.mutable_start_time() = ToProtoTime(kSubmit + absl::Seconds(90));
  v1::Allocation* a = job.mutable_allocation();
  a->add_nodes()->set_node("a");
  a->set_est_bus_bandwidth_gbps(450);
  a->set_worst_link("NV18");
  a->set_span("node");
  return job;
}

core::Effects Changed(std::initializer_list<v1::Job> jobs) {
  core::Effects fx;
  for (const v1::Job& job : jobs) fx.jobs[job.id()] = job;
  return fx;
}

double Jobs(const DaemonMetrics& m, const char* state) {
  return Value(*m.registry(), "gpusched_jobs", {{"state", state}, {"queue", "default"}});
}

TEST_CASE("a requeued job counts as requeued and, once placed again, as started again") {
  DaemonMetrics m;
  CHECK(Value(*m.registry(), "gpusched_jobs_requeued_total", {{"queue", "default"}}) == 0);
  m.Apply(Changed({JobIn(1, v1::JOB_STATE_PENDING)}));
  m.Apply(Changed({Placed(1, v1::JOB_STATE_RUNNING)}));
  // Preempted: PENDING again as its second attempt.
  v1::Job requeued = JobIn(1, v1::JOB_STATE_PENDING);
  requeued.set_attempt(1);
  m.Apply(Changed({requeued}));
  CHECK(Value(*m.registry(), "gpusched_jobs_requeued_total", {{"queue", "default"}}) == 1);
  CHECK(Jobs(m, "pending") == 1);
  CHECK(Jobs(m, "running") == 0);
  // Its node fails and it is placed again within one batch: both are counted.
  v1::Job again = Placed(1, v1::JOB_STATE_STARTING);
  again.set_attempt(2);
  m.Apply(Changed({again}));
  CHECK(Value(*m.registry(), "gpusched_jobs_requeued_total", {{"queue", "default"}}) == 2);
  CHECK(Value(*m.registry(), "gpusched_jobs_started_total", {{"queue", "default"}}) == 2);
  CHECK(Jobs(m, "pending") == 0);
  CHECK(Jobs(m, "starting") == 1);
}

TEST_CASE("job metrics follow each job from submit to its end") {
  DaemonMetrics m;
  CHECK(Jobs(m, "pending") == 0);  // there before any job: alerts read 0, not nothing

  m.Apply(Changed({JobIn(1, v1::JOB_STATE_PENDING), JobIn(2, v1::JOB_STATE_PENDING)}));
  CHECK(Jobs(m, "pending") == 2);
  CHECK(Value(*m.registry(), "gpusched_jobs_submitted_total", {{"queue", "default"}}) == 2);

  m.Apply(Changed({Placed(1, v1::JOB_STATE_STARTING)}));
  CHECK(Jobs(m, "pending") == 1);
  CHECK(Jobs(m, "starting") == 1);
  CHECK(Value(*m.registry(), "gpusched_jobs_started_total", {{"queue", "default"}}) == 1);
  CHECK(Value(*m.registry(), "gpusched_job_wait_seconds_count") == 0);  // its ranks do not run yet
  CHECK(Value(*m.registry(), "gpusched_placements_total", {{"span", "node"}, {"worst_link", "NV18"}}) == 1);
  CHECK(Value(*m.registry(), "gpusched_placement_bus_bandwidth_bytes_per_second_sum") == 450e9);
  CHECK(Bucket(*m.registry(), "gpusched_placement_bus_bandwidth_bytes_per_second", 320e9) == 0);
  CHECK(Bucket(*m.registry(), "gpusched_placement_bus_bandwidth_bytes_per_second", 640e9) == 1);

  m.Apply(Changed({Placed(1, v1::JOB_STATE_RUNNING)}));
  CHECK(Jobs(m, "starting") == 0);
  CHECK(Jobs(m, "running") == 1);
  CHECK(Value(*m.registry(), "gpusched_jobs_started_total", {{"queue", "default"}}) == 1);  // not again
  CHECK(Value(*m.registry(), "gpusched_job_wait_seconds_count") == 1);
  CHECK(Value(*m.registry(), "gpusched_job_wait_seconds_sum") == 90);

  m.Apply(Changed({Placed(1, v1::JOB_STATE_COMPLETED), JobIn(2, v1::JOB_STATE_CANCELLED)}));
  CHECK(Jobs(m, "running") == 0);
  CHECK(Jobs(m, "pending") == 0);
  CHECK(Value(*m.registry(), "gpusched_jobs_finished_total", {{"state", "completed"}}) == 1);
  CHECK(Value(*m.registry(), "gpusched_jobs_finished_total", {{"state", "cancelled"}}) == 1);
}

TEST_CASE("a job first seen already placed or ended counts every step it took in that pass") {
  DaemonMetrics m;
  m.Apply(Changed({Placed(7, v1::JOB_STATE_STARTING), JobIn(8, v1::JOB_STATE_FAILED)}));
  CHECK(Value(*m.registry(), "gpusched_jobs_submitted_total", {{"queue", "default"}}) == 2);
  CHECK(Value(*m.registry(), "gpusched_jobs_started_total", {{"queue", "default"}}) == 1);
  CHECK(Value(*m.registry(), "gpusched_jobs_finished_total", {{"state", "failed"}}) == 1);
  CHECK(Jobs(m, "starting") == 1);
  CHECK(Jobs(m, "pending") == 0);
}

TEST_CASE("a job that started and ended within one batch still counts its wait") {
  DaemonMetrics m;
  m.Apply(Changed({JobIn(1, v1::JOB_STATE_PENDING)}));
  m.Apply(Changed({Placed(1, v1::JOB_STATE_STARTING)}));
  m.Apply(Changed({Placed(1, v1::JOB_STATE_COMPLETED)}));  // RUNNING came and went in the batch
  CHECK(Value(*m.registry(), "gpusched_job_wait_seconds_count", {}) == 1);
  CHECK(Value(*m.registry(), "gpusched_job_wait_seconds_sum", {}) == 90);
  // One that never ran (no start time) has no wait to count.
  m.Apply(Changed({JobIn(2, v1::JOB_STATE_PENDING)}));
  m.Apply(Changed({Placed(2, v1::JOB_STATE_STARTING)}));
  v1::Job failed = JobIn(2, v1::JOB_STATE_FAILED);
  m.Apply(Changed({failed}));
  CHECK(Value(*m.registry(), "gpusched_job_wait_seconds_count", {}) == 1);
}

TEST_CASE("a new reason or estimate on a waiting job changes no count") {
  DaemonMetrics m;
  m.Apply(Changed({JobIn(1, v1::JOB_STATE_PENDING)}));
  v1::Job again = JobIn(1, v1::JOB_STATE_PENDING);
  again.set_reason("waiting for 16 GPUs under one leaf switch");
  m.Apply(Changed({again}));
  CHECK(Jobs(m, "pending") == 1);
  CHECK(Value(*m.registry(), "gpusched_jobs_submitted_total", {{"queue", "default"}}) == 1);
}

TEST_CASE("a requeued job is counted pending again and started again") {
  DaemonMetrics m;
  m.Apply(Changed({Placed(1, v1::JOB_STATE_RUNNING)}));
  m.Apply(Changed({JobIn(1, v1::JOB_STATE_PENDING)}));  // its node failed, requeue
  CHECK(Jobs(m, "running") == 0);
  CHECK(Jobs(m, "pending") == 1);
  m.Apply(Changed({Placed(1, v1::JOB_STATE_STARTING)}));
  CHECK(Value(*m.registry(), "gpusched_jobs_started_total", {{"queue", "default"}}) == 2);
  CHECK(Value(*m.registry(), "gpusched_jobs_submitted_total", {{"queue", "default"}}) == 1);
}

TEST_CASE("restored jobs are counted where they are, not as new submits") {
  DaemonMetrics m;
  m.RestoreJobs({Placed(3, v1::JOB_STATE_RUNNING), JobIn(4, v1::JOB_STATE_PENDING, "batch")});
  CHECK(Jobs(m, "running") == 1);
  CHECK(Value(*m.registry(), "gpusched_jobs", {{"state", "pending"}, {"queue", "batch"}}) == 1);
  CHECK(Value(*m.registry(), "gpusched_jobs_submitted_total", {{"queue", "default"}}) == 0);

  m.Apply(Changed({Placed(3, v1::JOB_STATE_COMPLETED)}));
  CHECK(Jobs(m, "running") == 0);
  CHECK(Value(*m.registry(), "gpusched_jobs_finished_total", {{"state", "completed"}}) == 1);
  CHECK(Value(*m.registry(), "gpusched_jobs_started_total", {{"queue", "default"}}) == 0);
}

TEST_CASE("placements without a ring are counted but not given a bandwidth") {
  DaemonMetrics m;
  v1::Job single = Placed(1, v1::JOB_STATE_STARTING);
  single.mutable_allocation()->set_est_bus_bandwidth_gbps(0);
  single.mutable_allocation()->set_worst_link("none");
  m.Apply(Changed({single}));
  CHECK(Value(*m.registry(), "gpusched_placements_total", {{"span", "node"}, {"worst_link", "none"}}) == 1);
  CHECK(Value(*m.registry(), "gpusched_placement_bus_bandwidth_bytes_per_second_count") == 0);
}

TEST_CASE("placement spans are counted by tier, without switch names") {
  CHECK(PlacementMetrics::SpanTier("node") == "node");
  CHECK(PlacementMetrics::SpanTier("leaf leaf-01") == "leaf");
  CHECK(PlacementMetrics::SpanTier("nvlink-domain nvl01") == "nvlink-domain");
  CHECK(PlacementMetrics::SpanTier("") == "unknown");
}

TEST_CASE("latencies land in their histograms") {
  DaemonMetrics m;
  m.ObserveSubmit(absl::Milliseconds(3));
  m.ObservePass(absl::Microseconds(40));
  CHECK(Value(*m.registry(), "gpusched_submit_duration_seconds_count") == 1);
  CHECK(Bucket(*m.registry(), "gpusched_submit_duration_seconds", 0.0025) == 0);
  CHECK(Bucket(*m.registry(), "gpusched_submit_duration_seconds", 0.005) == 1);
  CHECK(Bucket(*m.registry(), "gpusched_scheduling_pass_duration_seconds", 0.000025) == 0);
  CHECK(Bucket(*m.registry(), "gpusched_scheduling_pass_duration_seconds", 0.00005) == 1);
}

TEST_CASE("the tasks an array's record stands for are pending, and all count as submitted at submit") {
  auto task = [](uint64_t id) {
    v1::Job job = JobIn(id, v1::JOB_STATE_PENDING);
    job.mutable_array()->set_array_id(10);
    job.mutable_array()->set_index(static_cast<int32_t>(id - 10));
    job.mutable_array()->set_count(100);
    return job;
  };
  DaemonMetrics m;
  JobArrayRecord record;
  record.prototype = task(10);
  record.indices = "0-99";
  record.materialized = 1;
  core::Effects submit = Changed({task(10)});
  submit.arrays[10] = record;
  m.Apply(submit);
  CHECK(Jobs(m, "pending") == 100);
  CHECK(Value(*m.registry(), "gpusched_jobs_submitted_total", {{"queue", "default"}}) == 100);

  // Tasks made jobs later were counted then.
  core::Effects made = Changed({task(11), task(12)});
  record.materialized = 3;
  made.arrays[10] = record;
  m.Apply(made);
  CHECK(Jobs(m, "pending") == 100);
  CHECK(Value(*m.registry(), "gpusched_jobs_submitted_total", {{"queue", "default"}}) == 100);

  // A restart counts what the record still stands for, once.
  DaemonMetrics after;
  after.RestoreJobs(
      {JobIn(10, v1::JOB_STATE_PENDING), JobIn(11, v1::JOB_STATE_PENDING), JobIn(12, v1::JOB_STATE_PENDING)}, {record});
  CHECK(Jobs(after, "pending") == 100);
  // A task made after it was submitted before it, not now.
  core::Effects later = Changed({task(13)});
  record.materialized = 4;
  later.arrays[10] = record;
  after.Apply(later);
  CHECK(Jobs(after, "pending") == 100);
  CHECK(Value(*after.registry(), "gpusched_jobs_submitted_total", {{"queue", "default"}}) == 0);
  record.materialized = 100;
  core::Effects last;
  last.arrays[10] = record;
  after.Apply(last);
  CHECK(Jobs(after, "pending") == 4);
}

}  // namespace
}  // namespace gpusched::metrics
