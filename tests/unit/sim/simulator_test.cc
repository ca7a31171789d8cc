// Hand-built traces on a tiny cluster, with answers worked out by hand.
#include "daemon/sim/simulator.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "daemon/sim/cluster_spec.h"
#include "daemon/sim/metrics.h"
#include "daemon/sim/pools_file.h"
#include "daemon/sim/report_files.h"
#include "daemon/sim/sim_cluster.h"
#include "tests/unit/sim/test_specs.h"

using namespace gpusched;
using namespace gpusched::sim;

namespace {

SimCluster Tiny(int nodes) {
  auto spec = ParseClusterSpec(testing::TinySpec(nodes));
  REQUIRE(spec.ok());
  auto cluster = BuildCluster(*spec, "");
  REQUIRE(cluster.ok());
  return *std::move(cluster);
}

Trace Jobs(const std::vector<TraceJob>& jobs) {
  Trace trace;
  trace.jobs = jobs;
  trace.rows = static_cast<int64_t>(jobs.size());
  return trace;
}

TraceJob Job(const std::string& id, int64_t submit_s, int64_t gpus, int64_t duration_s) {
  TraceJob j;
  j.id = id;
  j.submit_s = submit_s;
  j.gpus = gpus;
  j.duration_s = duration_s;
  return j;
}

}  // namespace

TEST_CASE("simulate: strict FIFO order and exact completion times on two 4-GPU nodes") {
  // j3 needs both nodes: it waits for j1 (t=100) although j2 ends at 50, and
  // j4 (1 GPU) waits behind j3 although GPUs are free from 50 to 100: no backfill.
  const Trace trace = Jobs(
      {Job("j1", 0, 4, 100), Job("j2", 0, 4, 50), Job("j3", 10, 8, 30), Job("j4", 20, 1, 5), Job("j5", 200, 2, 10)});
  struct Want {
    double submit, start, end;
  };
  const Want want[] = {{0, 0, 100}, {0, 0, 50}, {10, 100, 130}, {20, 130, 135}, {200, 200, 210}};
  for (const char* policy : {"topology", "best-fit", "first-fit", "spread"}) {
    INFO(policy);
    SimOptions options;
    options.policy = policy;
    options.head_blocks_after = absl::ZeroDuration();  // strict FIFO, the named baseline
    auto result = Simulate(trace, Tiny(2), options);
    REQUIRE(result.ok());
    REQUIRE(result->jobs.size() == 5);
    for (size_t i = 0; i < 5; ++i) {
      INFO("job " << i + 1);
      const JobOutcome& j = result->jobs[i];
      CHECK(j.job_id == i + 1);
      CHECK(j.state == v1::JOB_STATE_COMPLETED);
      CHECK(j.submit_s == want[i].submit);
      CHECK(j.start_s == want[i].start);
      CHECK(j.end_s == want[i].end);
      CHECK(j.slowdown == 1.0);  // every job got its ideal placement
    }
    CHECK(result->jobs[2].nodes == 2);
    CHECK(result->jobs[2].span == "leaf leaf1");

    const PolicyMetrics m = ComputeMetrics(*result);
    CHECK(m.completed == 5);
    CHECK(m.makespan_s == 210);
    CHECK(m.jct[0].mean == Approx((100 + 50 + 120 + 115 + 10) / 5.0));
    CHECK(m.jct[0].p50 == 100);
    CHECK(m.wait[0].mean == Approx((90 + 110) / 5.0));
    CHECK(m.wait[SizeClassOf(8)].count == 1);
    CHECK(m.wait[SizeClassOf(8)].mean == 90);
    // GPU-seconds: 400 + 200 + 240 + 5 + 20 over 8 GPUs x 210 s.
    CHECK(m.utilization == Approx(865.0 / 1680.0));
    // Jobs wait from 10 to 130; only from 50 to 100 are GPUs free (4 of them).
    CHECK(m.waiting_time_share == Approx(120.0 / 210.0));
    CHECK(m.free_while_waiting_gpu_h == Approx(200.0 / 3600.0));
    CHECK(m.free_while_waiting_share == Approx(200.0 / (8 * 120.0)));
    CHECK(m.multi_gpu_jobs == 4);
    CHECK(m.in_one_node == Approx(0.75));
    CHECK(m.in_one_leaf == 1.0);
  }
}

TEST_CASE("simulate: with time limits, backfill lets a short job pass the blocked gang") {
  // As the FIFO case, but every job's limit is its duration: j4 (5 s) ends
  // long before j3's reservation (j1's limit + the kill grace) and starts
  // as soon as j2 frees a GPU; nothing else moves.
  const Trace trace = Jobs({Job("j1", 0, 4, 100), Job("j2", 0, 4, 50), Job("j3", 10, 8, 30), Job("j4", 20, 1, 5)});
  SimOptions options;
  options.time_limit_factor = 1.0;
  auto result = Simulate(trace, Tiny(2), options);
  REQUIRE(result.ok());
  CHECK(result->jobs[2].start_s == 100);
  CHECK(result->jobs[2].end_s == 130);
  CHECK(result->jobs[3].start_s == 50);
  CHECK(result->jobs[3].end_s == 55);
  for (const JobOutcome& j : result->jobs) CHECK(j.state == v1::JOB_STATE_COMPLETED);
}

TEST_CASE("simulate: a job slowed past its time limit ends TIMEOUT at the limit") {
  const Trace trace = Jobs({Job("a", 0, 3, 1000), Job("b", 0, 3, 1000), Job("c", 1, 2, 500)});
  SimOptions options;
  options.time_limit_factor = 1.0;  // no room for c's slowdown
  auto result = Simulate(trace, Tiny(2), options);
  REQUIRE(result.ok());
  const JobOutcome& c = result->jobs[2];
  CHECK(c.slowdown > 1.0);
  CHECK(c.state == v1::JOB_STATE_TIMEOUT);
  CHECK(c.end_s == 501);
  CHECK(ComputeMetrics(*result).timed_out == 1);
}

TEST_CASE("simulate: a gang split across nodes runs longer by the runtime model") {
  // a and b leave one free GPU on each node: c's two GPUs must span both.
  const Trace trace = Jobs({Job("a", 0, 3, 1000), Job("b", 0, 3, 1000), Job("c", 1, 2, 500)});
  SimOptions options;
  auto result = Simulate(trace, Tiny(2), options);
  REQUIRE(result.ok());
  const JobOutcome& c = result->jobs[2];
  CHECK(c.start_s == 1);
  CHECK(c.nodes == 2);
  CHECK(c.ideal_bw > c.placed_bw);
  CHECK(c.slowdown == options.model.Factor(2, c.ideal_bw, c.placed_bw));
  CHECK(c.slowdown > 1.0);
  CHECK(c.end_s == Approx(1 + 500 * c.slowdown).margin(0.001));
  CHECK(result->jobs[0].slowdown == 1.0);  // 3 GPUs on one node: ideal

  options.model.slowdown = false;
  auto plain = Simulate(trace, Tiny(2), options);
  REQUIRE(plain.ok());
  CHECK(plain->jobs[2].end_s == 501);
}

TEST_CASE("simulate: wait or spread is weighed for each job, not once for its shape") {
  // a and b leave one free GPU on each node until 1,000 s. L and S ask for
  // the same shape, 2 GPUs, and their limits (twice their runs) are what
  // the core expects them to run. L, 100,000 s, finishes sooner waiting for
  // a node than spread over two for 100,000 s times its slowdown; S, 100 s,
  // finishes sooner spread out now, though it comes after L in the queue.
  const Trace trace = Jobs({Job("a", 0, 3, 1000), Job("b", 0, 3, 1000), Job("L", 1, 2, 100'000), Job("S", 2, 2, 100)});
  SimOptions options;
  options.time_limit_factor = 2.0;
  auto result = Simulate(trace, Tiny(2), options);
  REQUIRE(result.ok());
  const JobOutcome& l = result->jobs[2];
  const JobOutcome& s = result->jobs[3];
  CHECK(l.start_s == 1000);
  CHECK(l.nodes == 1);
  CHECK(s.start_s == 2);
  CHECK(s.nodes == 2);
  CHECK(s.slowdown > 1.0);
  for (const JobOutcome& j : result->jobs) CHECK(j.state == v1::JOB_STATE_COMPLETED);
}

TEST_CASE("simulate: a job larger than the cluster is refused, the rest run") {
  const Trace trace = Jobs({Job("huge", 0, 64, 10), Job("ok", 5, 1, 10)});
  auto result = Simulate(trace, Tiny(1), SimOptions{});
  REQUIRE(result.ok());
  CHECK(result->jobs[0].job_id == 0);
  CHECK_FALSE(result->jobs[0].reason.empty());
  CHECK(result->jobs[1].job_id == 1);
  CHECK(result->jobs[1].end_s == 15);
  const PolicyMetrics m = ComputeMetrics(*result);
  CHECK(m.refused == 1);
  CHECK(m.completed == 1);
}

TEST_CASE("simulate: strict topology waits for the idle cluster's best placement") {
  const Trace trace = Jobs({Job("a", 0, 3, 1000), Job("b", 0, 3, 1000), Job("c", 1, 2, 500)});
  SimOptions options;
  options.topology_mode = v1::TOPOLOGY_MODE_STRICT;
  auto result = Simulate(trace, Tiny(2), options);
  REQUIRE(result.ok());
  const JobOutcome& c = result->jobs[2];
  CHECK(c.start_s == 1000);
  CHECK(c.nodes == 1);
  CHECK(c.slowdown == 1.0);
  CHECK(c.end_s == 1500);
}

TEST_CASE("simulate: unknown policy") {
  SimOptions options;
  options.policy = "random";
  auto result = Simulate(Jobs({}), Tiny(1), options);
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("simulate: the per-job CSV carries the trace's ids, exact times past 1e6 s, and each node's GPU ids") {
  // late-42 is submitted at 1,234,567 s, which %g would print as 1.23457e+06.
  const Trace trace = Jobs({Job("first", 0, 1, 10), Job("late-42", 1234567, 6, 100)});
  SimOptions options;
  auto result = Simulate(trace, Tiny(2), options);
  REQUIRE(result.ok());
  char tmpl[] = "/tmp/gpusched-simcsv-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  auto written = WriteReportFiles(dir, {*result}, {ComputeMetrics(*result)});
  REQUIRE(written.ok());
  std::ifstream in(dir + "/jobs-" + result->policy + ".csv");
  std::stringstream csv;
  csv << in.rdbuf();
  std::filesystem::remove_all(dir);
  INFO(csv.str());
  CHECK_THAT(csv.str(), Catch::StartsWith("trace_index,trace_job_id,job_id,gpus,gpu_milli,submit_s,start_s,end_s,"));
  CHECK_THAT(csv.str(), Catch::Contains("\n1,late-42,2,6,1000,1234567.000,1234567.000,1234667.000,0.000,100.000,"));
  // 6 GPUs on 4-GPU nodes: both nodes, each with the GPU ids it gave.
  CHECK_THAT(csv.str(), Catch::Contains(",2,n1:0+1+2+3 n2:0+1,"));
}

namespace {

SimOptions WithBurstPool(double failure_rate) {
  SimOptions options;
  options.head_blocks_after = absl::ZeroDuration();
  core::PoolSpec pool;
  pool.name = "burst";
  pool.pool_class = core::PoolClass::kOnDemand;
  pool.cost_per_gpu_hour = 3;
  pool.nodes = {"n2"};
  pool.max_nodes = 1;
  pool.resume_program = pool.suspend_program = "(simulated)";
  pool.idle_before_suspend = absl::Seconds(100);
  options.pools = {pool};
  options.power.boot_delay = absl::Seconds(60);
  options.power.suspend_delay = absl::Seconds(10);
  options.power.static_cost_per_gpu_hour = 1;
  options.power.boot_failure_rate = failure_rate;
  return options;
}

}  // namespace

TEST_CASE("simulate --pools: a job boots the pool's node, which powers down when idle; GPU-hours paid and cost") {
  // j1 holds the static node n1 from 0 to 1000; j2 (t=10) boots n2, which
  // registers at 70; j2 runs to 170; n2 idles 100 s, powers down at 271+10.
  const Trace trace = Jobs({Job("j1", 0, 4, 1000), Job("j2", 10, 4, 100)});
  auto result = Simulate(trace, Tiny(2), WithBurstPool(0));
  REQUIRE(result.ok());
  CHECK(result->jobs[1].start_s == 70);
  CHECK(result->jobs[1].end_s == 170);
  CHECK(result->jobs[1].placement == "n2:0+1+2+3");
  const PolicyMetrics m = ComputeMetrics(*result);
  CHECK(m.makespan_s == 1000);
  CHECK(m.paid_gpu_h == Approx((4 * 1000 + 4 * (281 - 10)) / 3600.0));
  CHECK(m.used_gpu_h == Approx((4 * 1000 + 4 * 100) / 3600.0));
  CHECK(m.waste == Approx(1 - 4400.0 / (4000 + 4 * 271)));
  CHECK(m.cost == Approx((4 * 1000 * 1 + 4 * 271 * 3) / 3600.0));
}

TEST_CASE("simulate --pools: boots that always fail leave the job to the static node, never lost") {
  const Trace trace = Jobs({Job("j1", 0, 4, 1000), Job("j2", 10, 4, 100)});
  auto result = Simulate(trace, Tiny(2), WithBurstPool(1.0));
  REQUIRE(result.ok());
  CHECK(result->jobs[1].state == v1::JOB_STATE_COMPLETED);
  CHECK(result->jobs[1].start_s == 1000);
  CHECK(result->jobs[1].placement == "n1:0+1+2+3");
}

TEST_CASE("simulate --pools: spot nodes taken back requeue their jobs, within max_requeues") {
  // n2 is spot and lives seconds once up (1000 interruptions per node-hour):
  // j2 is interrupted on every boot, requeued 5 times (the daemon's
  // max_requeues), then ends PREEMPTED. j1 on the static node never notices.
  SimOptions options = WithBurstPool(0);
  options.pools[0].pool_class = core::PoolClass::kSpot;
  options.power.spot_interruptions_per_node_hour = 1000;
  options.power.spot_notice = absl::Seconds(30);
  const Trace trace = Jobs({Job("j1", 0, 4, 1000), Job("j2", 10, 4, 100)});
  auto result = Simulate(trace, Tiny(2), options);
  REQUIRE(result.ok());
  CHECK(result->jobs[0].state == v1::JOB_STATE_COMPLETED);
  CHECK(result->jobs[0].end_s == 1000);
  CHECK(result->jobs[1].state == v1::JOB_STATE_PREEMPTED);
  CHECK_THAT(result->jobs[1].reason, Catch::Contains("spot interruption of n2"));
  CHECK(result->requeues == 5);
  CHECK(result->spot_interruptions >= 6);
  const PolicyMetrics m = ComputeMetrics(*result);
  CHECK(m.requeues == 5);
  // The same seed replays the same interruptions.
  auto again = Simulate(trace, Tiny(2), options);
  REQUIRE(again.ok());
  CHECK(again->spot_interruptions == result->spot_interruptions);
  CHECK(again->jobs[1].end_s == result->jobs[1].end_s);
}

TEST_CASE("simulate --demote-after-h: a long job yields to a short one and resumes from its checkpoint") {
  // One 4-GPU node. `long` has run 5,000 s when `short` arrives; demoted
  // after an hour whatever its size, it is stopped at once, and `short`
  // runs 5,000-5,100.
  const Trace trace = Jobs({Job("long", 0, 4, 10'000), Job("short", 5'000, 4, 100)});
  SimOptions options;
  auto plain = Simulate(trace, Tiny(1), options);
  REQUIRE(plain.ok());
  CHECK(plain->jobs[1].start_s == 10'000);  // without demotion it waits
  CHECK(plain->requeues == 0);

  options.demote_after = absl::Hours(1);
  options.checkpoint_restore = absl::Seconds(60);
  // Per GPU (the default), `long` is demoted only after 4 hours: a short
  // job at 5,000 s waits for it, one at 15,000 s stops it.
  auto per_gpu = Simulate(trace, Tiny(1), options);
  REQUIRE(per_gpu.ok());
  CHECK(per_gpu->jobs[1].start_s == 10'000);
  CHECK(per_gpu->requeues == 0);
  auto past_four_hours = Simulate(Jobs({Job("long", 0, 4, 20'000), Job("short", 15'000, 4, 100)}), Tiny(1), options);
  REQUIRE(past_four_hours.ok());
  CHECK(past_four_hours->requeues == 1);
  CHECK(past_four_hours->jobs[1].start_s == 15'000);
  CHECK(past_four_hours->jobs[0].end_s == 15'100 + 60 + 5'000);

  options.demote_after_per_gpu = false;
  auto resumed = Simulate(trace, Tiny(1), options);
  REQUIRE(resumed.ok());
  CHECK(resumed->requeues == 1);
  CHECK(resumed->jobs[1].start_s == 5'000);
  CHECK(resumed->jobs[1].end_s == 5'100);
  // `long` resumes with 5,000 s of work left and a minute to restore.
  CHECK(resumed->jobs[0].start_s == 5'100);
  CHECK(resumed->jobs[0].end_s == 5'100 + 60 + 5'000);
  for (const JobOutcome& j : resumed->jobs) CHECK(j.state == v1::JOB_STATE_COMPLETED);

  // Jobs that do not checkpoint start over.
  options.checkpoint_restore = -absl::InfiniteDuration();
  auto restarted = Simulate(trace, Tiny(1), options);
  REQUIRE(restarted.ok());
  CHECK(restarted->jobs[0].end_s == 5'100 + 10'000);
}

TEST_CASE("simulate --pools: a pool naming a node the cluster lacks is refused") {
  SimOptions options = WithBurstPool(0);
  options.pools[0].nodes = {"n9"};
  auto result = Simulate(Jobs({Job("j1", 0, 1, 10)}), Tiny(2), options);
  REQUIRE_FALSE(result.ok());
  CHECK_THAT(std::string(result.status().message()), Catch::Contains("pool burst names node n9"));
}

TEST_CASE("simulate --pools: the shipped pool files parse; mistakes name the file and line") {
  for (const char* name : {"static", "mean-sized", "ondemand", "ondemand-quick", "ondemand-headroom",
                           "ondemand-utilization", "mix", "mix-spot"}) {
    INFO(name);
    auto pools = ReadSimPoolsFile(std::string(GPUSCHED_SIM_POOLS_DIR) + "/" + name + ".toml");
    INFO(pools.status().ToString());
    REQUIRE(pools.ok());
  }
  auto mix = ReadSimPoolsFile(std::string(GPUSCHED_SIM_POOLS_DIR) + "/mix.toml");
  REQUIRE(mix->pools.size() == 3);
  CHECK_FALSE(mix->pools[0].elastic());  // reserved: always on
  CHECK(mix->pools[1].elastic());
  CHECK(mix->power.boot_delay == absl::Minutes(5));
  CHECK(mix->power.boot_failure_rate == 0.02);
  auto spot = ReadSimPoolsFile(std::string(GPUSCHED_SIM_POOLS_DIR) + "/mix-spot.toml");
  CHECK(spot->power.spot_interruptions_per_node_hour == 0.01);
  CHECK(spot->power.spot_notice == absl::Minutes(2));

  const std::string bad = (std::filesystem::temp_directory_path() / "gpusched-sim-pools-bad.toml").string();
  std::ofstream(bad) << "boot_failure_rate = 2\n[[pool]]\nname = \"x\"\nnodes = \"h[1-2]\"\nresume_program = \"/x\"\n";
  auto refused = ReadSimPoolsFile(bad);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(std::string(refused.status().message()),
             Catch::StartsWith(bad + ":1:") && Catch::Contains("boot_failure_rate"));
  std::ofstream(bad) << "[[pool]]\nname = \"x\"\nnodes = \"h[1-2]\"\nresume_program = \"/x\"\n";
  refused = ReadSimPoolsFile(bad);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(std::string(refused.status().message()),
             Catch::StartsWith(bad + ":4:") && Catch::Contains("resume_program"));
  std::filesystem::remove(bad);
}
