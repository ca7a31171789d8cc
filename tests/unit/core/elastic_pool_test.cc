// Elastic pools as stories: the core resumes exactly the nodes a waiting
// gang needs, from the preferred pools, never half a gang; nodes count as
// up only once their agents register; failed and late boots go back to
// POWERED_DOWN with the reason; idle nodes power down within the pool's
// rules; a restart carries on where it was.
#include <algorithm>
#include <catch2/catch.hpp>

#include "tests/unit/core/core_harness.h"
#include "tests/unit/core/pool_harness.h"

namespace gpusched::core::testing {
namespace {

using Catch::Matchers::Contains;

TEST_CASE("a job on a powered-down pool boots exactly the nodes its gang needs, all at once", "[pools]") {
  CoreHarness h(WithPools({Pool("burst", PoolClass::kOnDemand, 3.0, {"g1", "g2", "g3", "g4"})}));
  for (const char* n : {"g1", "g2", "g3", "g4"}) CHECK(StateOf(h, n) == v1::NODE_STATE_POWERED_DOWN);
  const uint64_t job = h.Submit(GpuJob(16, 2, 8));  // known capacity: accepted before any node booted
  h.Pass();
  const auto resumes = Requests(h, PowerRequest::Kind::kResume);
  REQUIRE(resumes.size() == 1);
  CHECK(resumes[0].nodes.size() == 2);
  CHECK(resumes[0].pool == "burst");
  CHECK(resumes[0].program == "/opt/resume");
  REQUIRE(resumes[0].jobs.size() == 1);
  CHECK(resumes[0].jobs[0].job_id == job);
  for (const std::string& n : resumes[0].nodes) CHECK(StateOf(h, n) == v1::NODE_STATE_POWERING_UP);
  CHECK(h.Persisted(job).state() == v1::JOB_STATE_PENDING);
  CHECK_THAT(h.Persisted(job).reason(), Contains("waiting for g[1-2] to boot (resume started 0 s ago"));
  CHECK_THAT(h.Persisted(job).reason(), Contains("timeout 00:10:00"));

  // The next passes boot nothing more: the job waits for those boots.
  h.fx = {};
  h.clock.Advance(absl::Seconds(40));
  h.Pass();
  CHECK(Requests(h, PowerRequest::Kind::kResume).empty());
  CHECK_THAT(h.Persisted(job).reason(), Contains("resume started 40 s ago"));

  // Up only once the agents register: one is not enough for the gang.
  Register(h, "g1");
  h.Pass();
  CHECK(h.Persisted(job).state() == v1::JOB_STATE_PENDING);
  Register(h, "g2");
  h.Pass();
  CHECK(h.Persisted(job).state() == v1::JOB_STATE_STARTING);
  CHECK(StateOf(h, "g3") == v1::NODE_STATE_POWERED_DOWN);
}

TEST_CASE("a job that fits the running nodes boots nothing", "[pools]") {
  CoreHarness h(WithPools({Pool("burst", PoolClass::kOnDemand, 3.0, {"g1", "g2"})}));
  h.AddNode("static", 8);
  const uint64_t job = h.Submit(GpuJob(4));
  h.Pass();
  CHECK(h.Persisted(job).state() == v1::JOB_STATE_STARTING);
  CHECK(h.fx.power_requests.empty());
}

// On a static node of 8 GPUs, 4 busy for an hour: an 8-GPU head reserved
// for their end, and a 2-GPU job behind it, ranked after it (more
// GPU-hours), that would end after the reservation begins.
struct HeadAndBehind {
  uint64_t head = 0;
  uint64_t behind = 0;
};
HeadAndBehind ReservedHeadAndJobBehind(CoreHarness& h) {
  auto limited = [](v1::JobSpec spec, int64_t seconds) {
    spec.set_time_limit_s(seconds);
    return spec;
  };
  h.AddNode("static", 8);
  const uint64_t running = h.Submit(limited(GpuJob(4), 3600));
  h.Pass();
  h.StartOnAllNodes(running);
  HeadAndBehind jobs;
  jobs.head = h.Submit(limited(GpuJob(8, 1, 8), 3600));
  jobs.behind = h.Submit(limited(GpuJob(2), 6 * 3600));
  h.fx = {};
  h.Pass();
  return jobs;
}

TEST_CASE("a job kept off free GPUs by a reservation boots a node of its own", "[pools]") {
  // g1 has 4 GPUs: the 8-GPU head cannot use it, the 2-GPU job can.
  CoreHarness h(WithPools({Pool("burst", PoolClass::kOnDemand, 3.0, {"g1"}, 4)}));
  const auto [head, behind] = ReservedHeadAndJobBehind(h);
  CHECK(h.Persisted(head).wait_cause() == v1::WAIT_CAUSE_RESERVED);
  CHECK(h.Persisted(behind).state() == v1::JOB_STATE_PENDING);
  const auto resumes = Requests(h, PowerRequest::Kind::kResume);
  REQUIRE(resumes.size() == 1);
  CHECK(resumes[0].nodes == std::vector<std::string>{"g1"});
  REQUIRE(resumes[0].jobs.size() == 1);
  CHECK(resumes[0].jobs[0].job_id == behind);
  CHECK_THAT(h.Persisted(behind).reason(), Contains("waiting for g1 to boot"));
  Register(h, "g1", 4);
  h.Pass();
  CHECK(h.Persisted(behind).state() == v1::JOB_STATE_STARTING);
  CHECK(h.Persisted(behind).allocation().nodes(0).node() == "g1");
  CHECK(h.Persisted(head).wait_cause() == v1::WAIT_CAUSE_RESERVED);
}

TEST_CASE("a reserved job given a booting node frees its reservation for the job behind it", "[pools]") {
  CoreHarness h(WithPools({Pool("burst", PoolClass::kOnDemand, 3.0, {"g1", "g2"})}));
  const auto [head, behind] = ReservedHeadAndJobBehind(h);
  // The head boots g1; the job behind it counts on the static node's free
  // GPUs the head will not need, and boots nothing more.
  const auto resumes = Requests(h, PowerRequest::Kind::kResume);
  REQUIRE(resumes.size() == 1);
  CHECK(resumes[0].nodes == std::vector<std::string>{"g1"});
  REQUIRE(resumes[0].jobs.size() == 1);
  CHECK(resumes[0].jobs[0].job_id == head);
  CHECK(StateOf(h, "g2") == v1::NODE_STATE_POWERED_DOWN);
  CHECK(h.Persisted(behind).state() == v1::JOB_STATE_PENDING);
}

TEST_CASE("resumes prefer reserved, then spot, then on-demand, then the cheaper pool", "[pools]") {
  CoreHarness h(WithPools(
      {Pool("od-dear", PoolClass::kOnDemand, 5.0, {"d1"}), Pool("od-cheap", PoolClass::kOnDemand, 2.0, {"c1"}),
       Pool("spot", PoolClass::kSpot, 1.0, {"s1"}), Pool("reserved", PoolClass::kReserved, 4.0, {"r1"})}));
  auto booted_for = [&](int64_t gpus) {
    h.fx = {};
    h.Submit(GpuJob(gpus));
    h.Pass();
    std::vector<std::string> nodes;
    for (const PowerRequest& r : Requests(h, PowerRequest::Kind::kResume)) {
      nodes.insert(nodes.end(), r.nodes.begin(), r.nodes.end());
    }
    return nodes;
  };
  CHECK(booted_for(8) == std::vector<std::string>{"r1"});
  CHECK(booted_for(8) == std::vector<std::string>{"s1"});
  CHECK(booted_for(8) == std::vector<std::string>{"c1"});
  CHECK(booted_for(8) == std::vector<std::string>{"d1"});
  // Nothing left to boot: the next job just waits.
  CHECK(booted_for(8).empty());
}

TEST_CASE("a gang that max_nodes cannot hold boots no node at all", "[pools]") {
  PoolSpec pool = Pool("burst", PoolClass::kOnDemand, 3.0, {"g1", "g2", "g3"});
  pool.max_nodes = 1;
  CoreHarness h(WithPools({pool}));
  const uint64_t job = h.Submit(GpuJob(16, 2, 8));
  h.Pass();
  CHECK(h.fx.power_requests.empty());
  CHECK(StateOf(h, "g1") == v1::NODE_STATE_POWERED_DOWN);
  CHECK_THAT(h.Persisted(job).reason(), Contains("max_nodes 1"));
}

TEST_CASE("a rate limit lets a big gang go whole and alone, then holds the next one", "[pools]") {
  PoolSpec pool = Pool("burst", PoolClass::kOnDemand, 3.0, {"g1", "g2", "g3", "g4", "g5"});
  pool.resumes_per_minute = 1;
  CoreHarness h(WithPools({pool}));
  h.Submit(GpuJob(24, 3, 8));
  h.Pass();
  REQUIRE(Requests(h, PowerRequest::Kind::kResume).size() == 1);
  CHECK(Requests(h, PowerRequest::Kind::kResume)[0].nodes.size() == 3);
  h.fx = {};
  const uint64_t second = h.Submit(GpuJob(8));
  h.Pass();
  CHECK(Requests(h, PowerRequest::Kind::kResume).empty());
  CHECK_THAT(h.Persisted(second).reason(), Contains("at most 1 node(s) a minute"));
  h.clock.Advance(absl::Minutes(1));
  h.fx = {};
  h.Pass();
  CHECK(Requests(h, PowerRequest::Kind::kResume).size() == 1);
}

TEST_CASE("a resume program that fails puts the nodes back to POWERED_DOWN and the job boots again", "[pools]") {
  CoreHarness h(WithPools({Pool("burst", PoolClass::kOnDemand, 3.0, {"g1", "g2"})}));
  const uint64_t job = h.Submit(GpuJob(8));
  h.Pass();
  const PowerRequest first = Requests(h, PowerRequest::Kind::kResume).at(0);
  h.fx = {};
  h.core.PowerProgramEnded(first, absl::AbortedError("/opt/resume exited with status 3"), h.fx);
  CHECK(StateOf(h, first.nodes[0]) == v1::NODE_STATE_POWERED_DOWN);
  CHECK_THAT(h.core.FindNode(first.nodes[0])->reason(), Contains("resume failed: /opt/resume exited with status 3"));
  h.Pass();
  // Placed again: on a retry of the same node or on another, never lost.
  CHECK(Requests(h, PowerRequest::Kind::kResume).size() == 1);
  // Both steps are noted, though the batch's row shows only the last.
  REQUIRE(h.fx.power_transitions.size() == 2);
  CHECK(h.fx.power_transitions[0].from == v1::NODE_STATE_POWERING_UP);
  CHECK(h.fx.power_transitions[0].to == v1::NODE_STATE_POWERED_DOWN);
  CHECK(h.fx.power_transitions[0].pool == "burst");
  CHECK(h.fx.power_transitions[1].from == v1::NODE_STATE_POWERED_DOWN);
  CHECK(h.fx.power_transitions[1].to == v1::NODE_STATE_POWERING_UP);
  CHECK(h.Persisted(job).state() == v1::JOB_STATE_PENDING);
}

TEST_CASE("a node whose agent does not register within resume_timeout goes back to POWERED_DOWN", "[pools]") {
  CoreHarness h(WithPools({Pool("burst", PoolClass::kOnDemand, 3.0, {"g1"})}));
  h.Submit(GpuJob(8));
  h.Pass();
  h.core.PowerProgramEnded(Requests(h, PowerRequest::Kind::kResume).at(0), absl::OkStatus(), h.fx);
  CHECK(StateOf(h, "g1") == v1::NODE_STATE_POWERING_UP);
  h.clock.Advance(absl::Minutes(10));
  h.fx = {};
  h.core.Tick(h.fx);
  CHECK(StateOf(h, "g1") == v1::NODE_STATE_POWERED_DOWN);
  CHECK_THAT(h.core.FindNode("g1")->reason(), Contains("did not register with its GPUs within 00:10:00"));
  REQUIRE(h.fx.nodes.contains("g1"));  // persisted with the reason
}

TEST_CASE("a late outcome of an earlier boot leaves the node's next boot alone", "[pools]") {
  CoreHarness h(WithPools({Pool("burst", PoolClass::kOnDemand, 3.0, {"g1"})}));
  h.Submit(GpuJob(8));
  h.Pass();
  const PowerRequest hung = Requests(h, PowerRequest::Kind::kResume).at(0);
  h.clock.Advance(absl::Minutes(10));
  h.fx = {};
  h.Pass();  // timed out, and resumed again at once
  REQUIRE(Requests(h, PowerRequest::Kind::kResume).size() == 1);
  CHECK(Requests(h, PowerRequest::Kind::kResume)[0].id != hung.id);
  REQUIRE(StateOf(h, "g1") == v1::NODE_STATE_POWERING_UP);
  // The hung program is killed only now: its failure is about the old boot.
  h.core.PowerProgramEnded(hung, absl::DeadlineExceededError("killed"), h.fx);
  CHECK(StateOf(h, "g1") == v1::NODE_STATE_POWERING_UP);
}

TEST_CASE("idle nodes power down after idle_before_suspend, never with a job, keeping min_nodes", "[pools]") {
  PoolSpec pool = Pool("burst", PoolClass::kOnDemand, 3.0, {"g1", "g2", "g3"});
  pool.min_nodes = 1;
  CoreHarness h(WithPools({pool}));
  // min_nodes: one node is resumed with no job asking.
  h.Pass();
  REQUIRE(Requests(h, PowerRequest::Kind::kResume).size() == 1);
  CHECK(Requests(h, PowerRequest::Kind::kResume)[0].nodes == std::vector<std::string>{"g1"});
  Register(h, "g1");
  Register(h, "g2");
  Register(h, "g3");
  const uint64_t job = h.Submit(GpuJob(8));
  h.Pass();
  const std::string busy = h.Persisted(job).allocation().nodes(0).node();
  h.StartOnAllNodes(job);
  h.fx = {};
  Wait(h, absl::Minutes(4), {"g1", "g2", "g3"});
  CHECK(Requests(h, PowerRequest::Kind::kSuspend).empty());  // not idle long enough
  Wait(h, absl::Minutes(1) + absl::Seconds(30), {"g1", "g2", "g3"});
  const auto suspends = Requests(h, PowerRequest::Kind::kSuspend);
  REQUIRE(suspends.size() == 1);
  // Three on, one busy, min 1: the busy one stays and counts toward min, so
  // both idle ones may go.
  CHECK(suspends[0].nodes.size() == 2);
  for (const std::string& n : suspends[0].nodes) {
    CHECK(n != busy);
    CHECK(StateOf(h, n) == v1::NODE_STATE_POWERING_DOWN);
  }
  // Its agent leaves as the machine stops: still powering down, not NOT_RESPONDING.
  h.core.AgentDisconnected(suspends[0].nodes[0], h.fx);
  CHECK(StateOf(h, suspends[0].nodes[0]) == v1::NODE_STATE_POWERING_DOWN);
  h.core.PowerProgramEnded(suspends[0], absl::OkStatus(), h.fx);
  for (const std::string& n : suspends[0].nodes) CHECK(StateOf(h, n) == v1::NODE_STATE_POWERED_DOWN);
  CHECK(StateOf(h, busy) == v1::NODE_STATE_UP);
}

TEST_CASE("a suspend that fails leaves the node NOT_RESPONDING until its agent is heard", "[pools]") {
  PoolSpec pool = Pool("burst", PoolClass::kOnDemand, 3.0, {"g1"});
  CoreHarness h(WithPools({pool}));
  Register(h, "g1");
  h.Pass();
  Wait(h, absl::Minutes(6), {"g1"});
  const PowerRequest suspend = Requests(h, PowerRequest::Kind::kSuspend).at(0);
  h.core.PowerProgramEnded(suspend, absl::AbortedError("/opt/suspend exited with status 1"), h.fx);
  CHECK(StateOf(h, "g1") == v1::NODE_STATE_NOT_RESPONDING);
  CHECK_THAT(h.core.FindNode("g1")->reason(), Contains("suspend failed"));
  CHECK(h.core.AgentHeartbeat("g1", h.fx));
  CHECK(StateOf(h, "g1") == v1::NODE_STATE_UP);
}

TEST_CASE("reserved and static pools never power down", "[pools]") {
  PoolSpec reserved = Pool("base", PoolClass::kReserved, 1.0, {"r1"});
  CoreHarness h(WithPools({reserved}));
  Register(h, "r1");
  h.Pass();
  Wait(h, absl::Hours(2), {"r1"});
  CHECK(h.fx.power_requests.empty());
  CHECK(StateOf(h, "r1") == v1::NODE_STATE_UP);
}

TEST_CASE("a restart keeps a boot's timeout running and runs a lost suspend again", "[pools]") {
  const std::vector<std::string> nodes{"g1", "g2", "g3"};
  CoreHarness before(WithPools({Pool("burst", PoolClass::kOnDemand, 3.0, nodes)}));
  Register(before, "g3");
  Wait(before, absl::Minutes(6), {"g3"});
  REQUIRE(before.core.FindNode("g3")->state() == v1::NODE_STATE_POWERING_DOWN);
  before.Submit(GpuJob(8));
  before.Pass();
  REQUIRE(before.core.FindNode("g1")->state() == v1::NODE_STATE_POWERING_UP);
  std::vector<v1::Node> rows;
  for (const auto& [name, row] : before.fx.nodes) rows.push_back(row);

  CoreHarness after(WithPools({Pool("burst", PoolClass::kOnDemand, 3.0, nodes)}));
  after.clock.Set(before.clock.Now() + absl::Minutes(1));
  after.core.Restore({}, rows, 0, {});
  CHECK(after.core.FindNode("g1")->state() == v1::NODE_STATE_POWERING_UP);
  CHECK(after.core.FindNode("g2")->state() == v1::NODE_STATE_POWERED_DOWN);
  after.Pass();
  const auto suspends = Requests(after, PowerRequest::Kind::kSuspend);
  REQUIRE(suspends.size() == 1);
  CHECK(suspends[0].nodes == std::vector<std::string>{"g3"});
  // The boot started a minute before the restart: 9 more to its timeout.
  after.clock.Advance(absl::Minutes(8));
  after.core.Tick(after.fx);
  CHECK(after.core.FindNode("g1")->state() == v1::NODE_STATE_POWERING_UP);
  after.clock.Advance(absl::Minutes(1));
  after.core.Tick(after.fx);
  CHECK(after.core.FindNode("g1")->state() == v1::NODE_STATE_POWERED_DOWN);
}

}  // namespace
}  // namespace gpusched::core::testing

namespace gpusched::core::testing {
namespace {

TEST_CASE("headroom: a burst of demand keeps free GPUs on for the window, then lets them go", "[pools]") {
  PoolSpec pool = Pool("burst", PoolClass::kOnDemand, 3.0, {"g1", "g2", "g3", "g4"});
  pool.headroom = 1.0;
  pool.demand_window = absl::Minutes(5);
  pool.idle_before_suspend = absl::Minutes(1);
  CoreHarness h(WithPools({pool}));
  // A burst: 16 GPUs wait. Two nodes boot for the jobs, and two more for
  // the headroom (the window's peak, 16 GPUs, kept free).
  const uint64_t a = h.Submit(GpuJob(8));
  const uint64_t b = h.Submit(GpuJob(8));
  h.Pass();
  std::vector<std::string> resumed;
  for (const PowerRequest& r : Requests(h, PowerRequest::Kind::kResume)) {
    resumed.insert(resumed.end(), r.nodes.begin(), r.nodes.end());
  }
  CHECK(resumed.size() == 4);
  CHECK_THAT(h.core.FindNode("g4")->reason(), Contains("headroom for 16 free GPUs"));
  for (const char* n : {"g1", "g2", "g3", "g4"}) Register(h, n);
  h.Pass();
  CHECK(h.Persisted(a).state() == v1::JOB_STATE_STARTING);
  CHECK(h.Persisted(b).state() == v1::JOB_STATE_STARTING);
  h.StartOnAllNodes(a);
  h.StartOnAllNodes(b);
  // Idle past idle_before_suspend, but within the window: the two spare
  // nodes stay on.
  h.fx = {};
  Wait(h, absl::Minutes(3), {"g1", "g2", "g3", "g4"});
  CHECK(Requests(h, PowerRequest::Kind::kSuspend).empty());
  // The burst leaves the window: they may go.
  Wait(h, absl::Minutes(3), {"g1", "g2", "g3", "g4"});
  const auto suspends = Requests(h, PowerRequest::Kind::kSuspend);
  REQUIRE(suspends.size() == 1);
  CHECK(suspends[0].nodes.size() == 2);
}

TEST_CASE("demand window: the peak of the last window, older samples forgotten") {
  DemandWindow w;
  const absl::Time t0 = absl::FromUnixSeconds(1'000'000);
  w.Add(t0, 8);
  w.Add(t0 + absl::Minutes(1), 32);
  w.Add(t0 + absl::Minutes(2), 4);
  CHECK(w.Peak(t0 + absl::Minutes(2), absl::Minutes(5)) == 32);
  CHECK(w.Peak(t0 + absl::Minutes(6) + absl::Seconds(1), absl::Minutes(5)) == 4);
  w.Forget(t0 + absl::Minutes(10), absl::Minutes(5));
  CHECK(w.Peak(t0 + absl::Minutes(10), absl::Minutes(5)) == 0);
}

}  // namespace
}  // namespace gpusched::core::testing

namespace gpusched::core::testing {
namespace {

TEST_CASE("a booting node whose agent registers without all its GPUs is not up", "[pools]") {
  CoreHarness h(WithPools({Pool("burst", PoolClass::kOnDemand, 3.0, {"g1"})}));
  const uint64_t job = h.Submit(GpuJob(8));
  h.Pass();
  REQUIRE(StateOf(h, "g1") == v1::NODE_STATE_POWERING_UP);
  Register(h, "g1", 6);  // the driver has not seen two of them yet
  h.Pass();
  CHECK(StateOf(h, "g1") == v1::NODE_STATE_POWERING_UP);
  CHECK_THAT(h.core.FindNode("g1")->reason(), Contains("registered with 6 of 8 GPUs"));
  CHECK(h.Persisted(job).state() == v1::JOB_STATE_PENDING);
  Register(h, "g1", 8);  // the agent restarted and found them all
  h.Pass();
  CHECK(StateOf(h, "g1") == v1::NODE_STATE_UP);
  CHECK(h.Persisted(job).state() == v1::JOB_STATE_STARTING);
}

TEST_CASE("a node powered down by a pool since removed from the settings stays POWERED_DOWN after a restart",
          "[pools]") {
  CoreHarness before(WithPools({Pool("burst", PoolClass::kOnDemand, 3.0, {"g1"})}));
  Register(before, "g1");
  Wait(before, absl::Minutes(6), {"g1"});
  before.core.PowerProgramEnded(Requests(before, PowerRequest::Kind::kSuspend).at(0), absl::OkStatus(), before.fx);
  REQUIRE(StateOf(before, "g1") == v1::NODE_STATE_POWERED_DOWN);
  CoreHarness after;  // no pools now
  after.core.Restore({}, {before.fx.nodes.at("g1")}, 0, {});
  after.clock.Advance(absl::Hours(1));
  after.core.Tick(after.fx);  // not DOWN for being silent: it is off
  CHECK(StateOf(after, "g1") == v1::NODE_STATE_POWERED_DOWN);
  CHECK_THAT(after.core.FindNode("g1")->reason(), Contains("in no [[pool]] now"));
  Register(after, "g1");  // started by hand
  CHECK(StateOf(after, "g1") == v1::NODE_STATE_UP);
}

}  // namespace
}  // namespace gpusched::core::testing
