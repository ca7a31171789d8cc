// Spot interruptions as stories: a node the cloud takes back after a notice
// is drained, its gangs are told the deadline and stopped before it, and go
// back to the queue by their node-failure rules; a replacement boots for
// them; at the deadline the node powers down; --no-spot jobs never go there.
#include <catch2/catch.hpp>

#include "tests/unit/core/core_harness.h"
#include "tests/unit/core/pool_harness.h"

namespace gpusched::core::testing {
namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

// A spot pool of three nodes, two of them up, and a 2-node gang running on those two.
struct SpotGang {
  CoreHarness h{WithPools({Pool("spot", PoolClass::kSpot, 1.2, {"s1", "s2", "s3"})})};
  uint64_t job = 0;

  explicit SpotGang(v1::JobSpec spec = GpuJob(16, 2, 8)) {
    Register(h, "s1");
    Register(h, "s2");
    job = h.Submit(std::move(spec));
    h.Pass();
    REQUIRE(h.Persisted(job).state() == v1::JOB_STATE_STARTING);
    h.StartOnAllNodes(job);
    h.Drain();
  }

  // `node` is interrupted and both ranks leave at once, as a checkpointing job does.
  void InterruptAndLeave(const std::string& node, absl::Duration notice) {
    REQUIRE(h.core.InterruptNode(node, notice, "", h.fx).ok());
    h.Report("s1", job, v1::JobUpdate::KIND_EXITED, 143);
    h.Report("s2", job, v1::JobUpdate::KIND_EXITED, 143);
  }
};

TEST_CASE("a spot interruption drains the node and tells the whole gang its deadline", "[spot]") {
  SpotGang g;
  CoreHarness& h = g.h;
  const absl::Time deadline = h.clock.Now() + absl::Seconds(120);
  auto node = h.core.InterruptNode("s1", absl::Seconds(120), "notice i-0abc", h.fx);
  REQUIRE(node.ok());
  CHECK_THAT(node->drain_reason(), Contains("spot interruption (notice i-0abc): taken back at"));
  REQUIRE(node->has_reclaim_at());
  CHECK(node->reclaim_at().seconds() == absl::ToUnixSeconds(deadline));
  REQUIRE(h.fx.nodes.contains("s1"));
  CHECK(h.fx.nodes.at("s1").has_reclaim_at());  // persisted: a restart keeps the deadline
  for (const char* n : {"s1", "s2"}) {
    const auto kills = h.Sent(n, v1::DaemonMessage::kKill);
    REQUIRE(kills.size() == 1);
    // SIGKILL 5 s before the deadline, so that the exits are in while the node is there.
    CHECK(kills[0].kill().grace_ms() == 115'000);
    CHECK(kills[0].kill().notice_deadline_unix_ms() == absl::ToUnixMillis(deadline));
  }
  CHECK(h.Persisted(g.job).stop_cause() == v1::STOP_CAUSE_SPOT_INTERRUPTION);
  CHECK(h.Persisted(g.job).stopping_as() == v1::JOB_STATE_PREEMPTED);
  CHECK_THAT(h.Persisted(g.job).reason(), StartsWith("spot interruption of s1"));
  CHECK(h.fx.events.back().reason().rfind("stopping: spot interruption of s1", 0) == 0);
  CHECK(node->drain_kind() == v1::DRAIN_KIND_SPOT_INTERRUPTION);
}

TEST_CASE("the interrupted gang is requeued and a replacement node boots for it", "[spot]") {
  SpotGang g;
  CoreHarness& h = g.h;
  g.InterruptAndLeave("s1", absl::Seconds(120));
  CHECK(h.Persisted(g.job).state() == v1::JOB_STATE_PENDING);
  CHECK(h.Persisted(g.job).attempt() == 1);
  CHECK(h.Persisted(g.job).stop_cause() == v1::STOP_CAUSE_UNSPECIFIED);
  h.fx = {};
  h.Pass();
  // s2 is free, s1 is drained until it is taken back: s3 boots.
  const auto resumes = Requests(h, PowerRequest::Kind::kResume);
  REQUIRE(resumes.size() == 1);
  CHECK(resumes[0].nodes == std::vector<std::string>{"s3"});
  CHECK_THAT(h.Persisted(g.job).reason(), Contains("waiting for s3 to boot"));
  CHECK(h.Persisted(g.job).wait_cause() == v1::WAIT_CAUSE_BOOTING);
  Register(h, "s3");
  h.Pass();
  REQUIRE(h.Persisted(g.job).state() == v1::JOB_STATE_STARTING);
  CHECK(h.Persisted(g.job).wait_cause() == v1::WAIT_CAUSE_UNSPECIFIED);  // it waits no more
  std::vector<std::string> placed;
  for (const auto& part : h.Persisted(g.job).allocation().nodes()) placed.push_back(part.node());
  std::sort(placed.begin(), placed.end());
  CHECK(placed == std::vector<std::string>{"s2", "s3"});
}

TEST_CASE("at the deadline the node powers down through its pool's suspend program, drain lifted", "[spot]") {
  SpotGang g;
  CoreHarness& h = g.h;
  g.InterruptAndLeave("s1", absl::Seconds(120));
  h.clock.Advance(absl::Seconds(119));
  h.fx = {};
  h.core.Tick(h.fx);
  CHECK(StateOf(h, "s1") != v1::NODE_STATE_POWERING_DOWN);
  CHECK(h.core.FindNode("s1")->drain_kind() == v1::DRAIN_KIND_SPOT_INTERRUPTION);
  h.clock.Advance(absl::Seconds(1));
  h.core.Tick(h.fx);
  CHECK(StateOf(h, "s1") == v1::NODE_STATE_POWERING_DOWN);
  CHECK_THAT(h.core.FindNode("s1")->reason(), Contains("taken back by its spot interruption"));
  CHECK(h.core.FindNode("s1")->drain_reason().empty());
  CHECK_FALSE(h.core.FindNode("s1")->has_reclaim_at());
  const auto suspends = Requests(h, PowerRequest::Kind::kSuspend);
  REQUIRE(suspends.size() == 1);
  CHECK(suspends[0].nodes == std::vector<std::string>{"s1"});
  h.core.PowerProgramEnded(suspends[0], absl::OkStatus(), h.fx);
  CHECK(StateOf(h, "s1") == v1::NODE_STATE_POWERED_DOWN);
}

TEST_CASE("a node suspended for idling before its deadline just loses its drain at the deadline", "[spot]") {
  SpotGang g;
  CoreHarness& h = g.h;
  g.InterruptAndLeave("s1", absl::Minutes(10));
  h.fx = {};
  Wait(h, absl::Minutes(6), {"s1", "s2"});  // idle_before_suspend is 5 minutes
  REQUIRE(StateOf(h, "s1") == v1::NODE_STATE_POWERING_DOWN);
  for (const PowerRequest& r : Requests(h, PowerRequest::Kind::kSuspend))
    h.core.PowerProgramEnded(r, absl::OkStatus(), h.fx);
  REQUIRE(StateOf(h, "s1") == v1::NODE_STATE_POWERED_DOWN);
  h.fx = {};
  Wait(h, absl::Minutes(3), {"s2"});
  CHECK(h.core.FindNode("s1")->drain_kind() == v1::DRAIN_KIND_SPOT_INTERRUPTION);  // until its deadline
  Wait(h, absl::Minutes(2), {"s2"});
  // Past it: no second suspend; the slot may be resumed again for the job that waits.
  CHECK(StateOf(h, "s1") != v1::NODE_STATE_POWERING_DOWN);
  CHECK(h.core.FindNode("s1")->drain_kind() == v1::DRAIN_KIND_NONE);
  CHECK_FALSE(h.core.FindNode("s1")->has_reclaim_at());
  for (const PowerRequest& r : Requests(h, PowerRequest::Kind::kSuspend)) {
    CHECK(std::find(r.nodes.begin(), r.nodes.end(), "s1") == r.nodes.end());  // not suspended twice
  }
}

TEST_CASE("a gang still there at the deadline is given up on that node and requeued", "[spot]") {
  SpotGang g;
  CoreHarness& h = g.h;
  REQUIRE(h.core.InterruptNode("s1", absl::Seconds(60), "", h.fx).ok());
  h.Report("s2", g.job, v1::JobUpdate::KIND_EXITED, 143);
  h.clock.Advance(absl::Seconds(60));
  h.core.Tick(h.fx);  // s1 never reported: its part is lost with the machine
  CHECK(h.Persisted(g.job).state() == v1::JOB_STATE_PENDING);
  CHECK(h.Persisted(g.job).attempt() == 1);
}

TEST_CASE("a job that says --requeue no ends PREEMPTED when its spot node is taken back", "[spot]") {
  v1::JobSpec spec = GpuJob(16, 2, 8);
  spec.set_requeue(false);
  SpotGang g(spec);
  CoreHarness& h = g.h;
  g.InterruptAndLeave("s2", absl::Seconds(120));
  CHECK(h.Persisted(g.job).state() == v1::JOB_STATE_PREEMPTED);
  CHECK_THAT(h.Persisted(g.job).reason(), Contains("spot interruption of s2"));
}

TEST_CASE("a queue preemption tells its victims the deadline too", "[spot]") {
  QueuePolicy queues = QueuePolicy::Default();
  queues.queues = {QueueSpec::Named("low"), QueueSpec::Named("high", 1)};
  CoreOptions o = CoreHarness::Options();
  o.queues = queues;
  CoreHarness h(o);
  h.AddNode("a", 8);
  v1::JobSpec low = GpuJob(8);
  low.set_queue("low");
  const uint64_t victim = h.Submit(low);
  h.Pass();
  h.StartOnAllNodes(victim);
  h.Drain();
  v1::JobSpec high = GpuJob(8);
  high.set_queue("high");
  h.Submit(high);
  h.Pass();
  const auto kills = h.Sent("a", v1::DaemonMessage::kKill);
  REQUIRE(kills.size() == 1);
  CHECK(kills[0].kill().notice_deadline_unix_ms() == absl::ToUnixMillis(h.clock.Now() + absl::Seconds(5)));
}

TEST_CASE("--no-spot jobs and queues with spot = false never use spot nodes and boot on-demand", "[spot]") {
  std::vector<PoolSpec> pools{Pool("spot", PoolClass::kSpot, 1.0, {"s1"}),
                              Pool("ondemand", PoolClass::kOnDemand, 3.0, {"o1"})};
  SECTION("a job that allows spot boots the cheaper spot node") {
    CoreHarness h(WithPools(pools));
    h.Submit(GpuJob(8));
    h.Pass();
    CHECK(Requests(h, PowerRequest::Kind::kResume).at(0).nodes == std::vector<std::string>{"s1"});
  }
  SECTION("--no-spot boots on-demand, and never runs on the spot node once it is up") {
    CoreHarness h(WithPools(pools));
    Register(h, "s1");
    v1::JobSpec spec = GpuJob(8);
    spec.set_no_spot(true);
    const uint64_t job = h.Submit(spec);
    h.Pass();
    CHECK(h.Persisted(job).state() == v1::JOB_STATE_PENDING);
    CHECK(Requests(h, PowerRequest::Kind::kResume).at(0).nodes == std::vector<std::string>{"o1"});
  }
  SECTION("a queue with spot = false") {
    CoreOptions o = WithPools(pools);
    QueueSpec safe = QueueSpec::Named("safe");
    safe.spot = false;
    o.queues.queues = {safe};
    CoreHarness h(o);
    Register(h, "s1");
    const uint64_t job = h.Submit(GpuJob(8));
    h.Pass();
    CHECK(h.Persisted(job).state() == v1::JOB_STATE_PENDING);
    CHECK(Requests(h, PowerRequest::Kind::kResume).at(0).nodes == std::vector<std::string>{"o1"});
  }
}

TEST_CASE("interrupting: unknown and powered-down nodes are refused, a booting one is taken back at once", "[spot]") {
  CoreHarness h(WithPools({Pool("spot", PoolClass::kSpot, 1.0, {"s1", "s2"})}));
  CHECK(h.core.InterruptNode("nope", absl::Seconds(120), "", h.fx).status().code() == absl::StatusCode::kNotFound);
  auto down = h.core.InterruptNode("s1", absl::Seconds(120), "", h.fx);
  CHECK(down.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(std::string(down.status().message()), Contains("nothing to take back"));
  CHECK(h.core.InterruptNode("s1", absl::Hours(2), "", h.fx).status().code() == absl::StatusCode::kInvalidArgument);
  const uint64_t job = h.Submit(GpuJob(8));
  h.Pass();
  const std::string booting = Requests(h, PowerRequest::Kind::kResume).at(0).nodes.at(0);
  REQUIRE(h.core.InterruptNode(booting, absl::Seconds(120), "", h.fx).ok());
  CHECK(StateOf(h, booting) == v1::NODE_STATE_POWERED_DOWN);
  h.fx = {};
  h.Pass();  // the job that waited for it boots again
  CHECK(Requests(h, PowerRequest::Kind::kResume).size() == 1);
  CHECK(h.Persisted(job).state() == v1::JOB_STATE_PENDING);
}

TEST_CASE("a second notice can only bring the deadline forward, and a restart keeps it", "[spot]") {
  SpotGang g;
  CoreHarness& h = g.h;
  const absl::Time first = h.clock.Now() + absl::Seconds(60);
  REQUIRE(h.core.InterruptNode("s1", absl::Seconds(60), "", h.fx).ok());
  auto later = h.core.InterruptNode("s1", absl::Seconds(300), "", h.fx);
  REQUIRE(later.ok());
  CHECK(later->reclaim_at().seconds() == absl::ToUnixSeconds(first));

  std::vector<v1::Node> rows;
  for (const auto& [name, row] : h.fx.nodes) rows.push_back(row);
  CoreHarness after(WithPools({Pool("spot", PoolClass::kSpot, 1.2, {"s1", "s2", "s3"})}));
  after.clock.Set(h.clock.Now() + absl::Seconds(30));
  after.core.Restore({}, rows, 0, {});
  REQUIRE(after.core.FindNode("s1")->has_reclaim_at());
  after.core.Tick(after.fx);
  CHECK_FALSE(after.core.FindNode("s1")->drain_reason().empty());
  after.clock.Advance(absl::Seconds(30));
  after.core.Tick(after.fx);
  CHECK(after.core.FindNode("s1")->state() == v1::NODE_STATE_POWERING_DOWN);
}

TEST_CASE("pools report class, nodes by state, paid and used GPUs, cost per hour and demand", "[spot]") {
  PoolSpec spot = Pool("spot", PoolClass::kSpot, 1.5, {"s1", "s2", "s3"});
  spot.headroom = 0.5;
  CoreHarness h(WithPools({spot, Pool("base", PoolClass::kReserved, 1.0, {"r1"})}));
  Register(h, "s1");
  const uint64_t busy = h.Submit(GpuJob(8));
  h.Pass();
  h.StartOnAllNodes(busy);
  h.Submit(GpuJob(16, 2, 8));  // needs two more nodes: demand of 16 GPUs
  h.Pass();
  const std::vector<v1::PoolStatus> pools = h.core.Pools();
  REQUIRE(pools.size() == 2);
  const v1::PoolStatus& s = pools[0];
  CHECK(s.name() == "spot");
  CHECK(s.pool_class() == "spot");
  CHECK(s.elastic());
  CHECK(s.nodes_up() == 1);
  // The gang's nodes (reserved first) and one more for the headroom, or both spot nodes.
  CHECK(s.nodes_powering_up() == 2);
  CHECK(s.gpus_paid() == 24);
  CHECK(s.cost_per_hour() == Approx(36.0));
  CHECK(s.demand_gpus() == 16);
  CHECK(s.demand_window_s() == 300);
  CHECK(s.headroom_gpus() == 8);
  CHECK(pools[1].pool_class() == "reserved");
  CHECK(pools[1].cost_per_gpu_hour() == 1.0);
  CHECK(s.gpus_used() == 8);
  CHECK(pools[1].gpus_used() == 0);
}

TEST_CASE("target utilization keeps enough GPUs on that the window's peak use is that share of them", "[pools]") {
  PoolSpec pool = Pool("burst", PoolClass::kOnDemand, 3.0, {"g1", "g2", "g3", "g4"});
  pool.target_utilization = 0.5;
  pool.idle_before_suspend = absl::Minutes(1);
  CoreHarness h(WithPools({pool}));
  Register(h, "g1");
  Register(h, "g2");
  h.Submit(GpuJob(8));
  h.Submit(GpuJob(8));
  h.Pass();
  // 16 GPUs in use, at most half of those on: 32 on, so two more nodes boot.
  std::vector<std::string> resumed;
  for (const PowerRequest& r : Requests(h, PowerRequest::Kind::kResume)) {
    resumed.insert(resumed.end(), r.nodes.begin(), r.nodes.end());
  }
  CHECK(resumed == std::vector<std::string>{"g3", "g4"});
  CHECK_THAT(h.core.FindNode("g3")->reason(), Contains("headroom for 16 free GPUs"));
}

}  // namespace
}  // namespace gpusched::core::testing
