// Queues, limits, multifactor priority, preemption and requeue, told as short
// stories on a manual clock against the real SchedulerCore.
#include <algorithm>
#include <catch2/catch.hpp>

#include "common/proto_time.h"
#include "tests/unit/core/core_harness.h"

using namespace gpusched;
using core::CoreOptions;
using core::PreemptMode;
using core::QueueSpec;
using core::testing::CoreHarness;
using core::testing::GpuJob;
using JobUpdate = v1::JobUpdate;

namespace {

CoreOptions WithQueues(std::vector<QueueSpec> queues) {
  CoreOptions o = CoreHarness::Options();
  o.queues.queues = std::move(queues);
  REQUIRE(o.queues.Compile().ok());
  return o;
}

// "low" (tier 0) and "high" (tier 1); `low_mode` is what preemption does to low's jobs.
CoreOptions TwoTiers(PreemptMode low_mode = PreemptMode::kRequeue) {
  QueueSpec low = QueueSpec::Named("low");
  low.preempt_mode = low_mode;
  return WithQueues({low, QueueSpec::Named("high", 1)});
}

QueueSpec Limited(const std::string& name, int64_t max_gpus_per_user) {
  QueueSpec q = QueueSpec::Named(name);
  q.max_gpus_per_user = max_gpus_per_user;
  return q;
}

v1::JobSpec In(const std::string& queue, v1::JobSpec spec, const std::string& user = "alice") {
  spec.set_queue(queue);
  spec.set_user(user);
  return spec;
}

void ExitOn(CoreHarness& h, uint64_t id, int code, int attempt = 0) {
  std::vector<std::string> nodes;
  for (const auto& part : h.Persisted(id).allocation().nodes()) nodes.push_back(part.node());
  for (const std::string& node : nodes) h.Report(node, id, JobUpdate::KIND_EXITED, code, attempt);
}

std::vector<std::string> NodesOf(const v1::Job& job) {
  std::vector<std::string> nodes;
  for (const auto& part : job.allocation().nodes()) nodes.push_back(part.node());
  std::sort(nodes.begin(), nodes.end());
  return nodes;
}

std::vector<v1::JobState> EventStates(const CoreHarness& h, uint64_t id) {
  std::vector<v1::JobState> states;
  for (const v1::JobEvent& e : h.fx.events) {
    if (e.job_id() == id) states.push_back(e.state());
  }
  return states;
}

void Heartbeats(CoreHarness& h, std::initializer_list<const char*> nodes) {
  for (const char* n : nodes) h.core.AgentHeartbeat(n, h.fx);
}

// Submits `spec`, starts it where it is placed, then lets `age` pass (the
// nodes keep heartbeating): a running job with that much work to lose.
uint64_t RunFor(CoreHarness& h, v1::JobSpec spec, absl::Duration age, std::initializer_list<const char*> nodes) {
  uint64_t id = h.Submit(std::move(spec));
  h.Pass();
  h.StartOnAllNodes(id);
  h.clock.Advance(age);
  Heartbeats(h, nodes);
  return id;
}

// Starts the placed `victim` (its `attempt`), submits a tier-"high" job of
// the same size, and lets the victim stop on the SIGTERM it gets: the
// preemption story's first half. Returns the preempting job.
uint64_t PreemptedBy4GpuJob(CoreHarness& h, uint64_t victim, int attempt = 0) {
  h.StartOnAllNodes(victim, attempt);
  uint64_t urgent = h.Submit(In("high", GpuJob(4)));
  h.Pass();
  ExitOn(h, victim, 143, attempt);
  return urgent;
}

// A job of `running_queue` fills node "a"; whether one of `waiting_queue`
// then gets it stopped. The waiting job stays PENDING either way.
bool Preempts(CoreHarness& h, const std::string& running_queue, const std::string& waiting_queue) {
  h.AddNode("a", 4);
  uint64_t running = h.Submit(In(running_queue, GpuJob(4)));
  h.Pass();
  h.StartOnAllNodes(running);
  h.Drain();
  uint64_t waiting = h.Submit(In(waiting_queue, GpuJob(4)));
  h.Pass();
  CHECK(h.StateOf(waiting) == v1::JOB_STATE_PENDING);
  return !h.Sent("a", v1::DaemonMessage::kKill).empty();
}

}  // namespace

TEST_CASE("an unknown queue is refused at submit, naming the queues there are") {
  CoreHarness h(TwoTiers());
  h.AddNode("a", 4);
  auto outcome = h.core.Submit(In("gpu", GpuJob(1)), "", h.fx);
  REQUIRE_FALSE(outcome.ok());
  CHECK(outcome.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(outcome.status().message()),
             Catch::Contains("spec.queue") && Catch::Contains("\"gpu\"") && Catch::Contains("low, high"));
  // A job that names no queue goes to the first.
  uint64_t id = h.Submit(GpuJob(1));
  CHECK(h.Persisted(id).spec().queue() == "low");
}

TEST_CASE("a queue's time limits: its default for jobs without one, its maximum refused beyond") {
  QueueSpec short_queue = QueueSpec::Named("short");
  short_queue.default_time_limit_s = 600;
  short_queue.max_time_limit_s = 3600;
  CoreHarness h(WithQueues({short_queue}));
  h.AddNode("a", 4);
  CHECK(h.Persisted(h.Submit(GpuJob(1))).spec().time_limit_s() == 600);
  v1::JobSpec longer = GpuJob(1);
  longer.set_time_limit_s(7200);
  auto outcome = h.core.Submit(longer, "", h.fx);
  REQUIRE_FALSE(outcome.ok());
  CHECK_THAT(std::string(outcome.status().message()),
             Catch::Contains("spec.time_limit_s") && Catch::Contains("max_time_limit of 01:00:00"));
}

TEST_CASE("a queue's jobs stay on the queue's nodes") {
  QueueSpec small = QueueSpec::Named("small");
  small.nodes = "a";
  CoreHarness h(WithQueues({QueueSpec::Named("all"), small}));
  h.AddNode("a", 2);
  h.AddNode("b", 8);
  uint64_t first = h.Submit(In("small", GpuJob(2)));
  uint64_t second = h.Submit(In("small", GpuJob(2)));
  h.Pass();
  CHECK(NodesOf(h.Persisted(first)) == std::vector<std::string>{"a"});
  // Node b is idle, but not small's.
  CHECK(h.StateOf(second) == v1::JOB_STATE_PENDING);
  // More GPUs than all of small's nodes have is refused outright.
  auto outcome = h.core.Submit(In("small", GpuJob(4)), "", h.fx);
  REQUIRE_FALSE(outcome.ok());
  CHECK_THAT(std::string(outcome.status().message()), Catch::Contains("nodes of its queue"));
}

TEST_CASE("a per-user GPU limit holds one user's jobs without holding back anyone else's") {
  CoreHarness h(WithQueues({Limited("shared", 4)}));
  h.AddNode("a", 8);
  uint64_t a1 = h.Submit(In("shared", GpuJob(2), "alice"));
  uint64_t a2 = h.Submit(In("shared", GpuJob(2), "alice"));
  uint64_t a3 = h.Submit(In("shared", GpuJob(2), "alice"));
  uint64_t b1 = h.Submit(In("shared", GpuJob(2), "bob"));
  h.Pass();
  CHECK(h.StateOf(a1) == v1::JOB_STATE_STARTING);
  CHECK(h.StateOf(a2) == v1::JOB_STATE_STARTING);
  CHECK(h.StateOf(a3) == v1::JOB_STATE_PENDING);
  CHECK_THAT(h.Persisted(a3).reason(), Catch::Contains("per-user GPU limit: alice's jobs hold 4 of 4 GPUs"));
  CHECK(h.StateOf(b1) == v1::JOB_STATE_STARTING);

  h.StartOnAllNodes(a1);
  ExitOn(h, a1, 0);
  h.Pass();
  CHECK(h.StateOf(a3) == v1::JOB_STATE_STARTING);
}

namespace {

// One queue, fair share decaying by half in a day.
CoreOptions FairShareQueue() {
  CoreOptions options = WithQueues({QueueSpec::Named("shared")});
  options.queues.weights.fair_share_half_life = absl::Hours(24);
  return options;
}

// On node "a" (8 GPUs), alice's job that has had the whole node for ten hours.
uint64_t AliceHeldTheNodeTenHours(CoreHarness& h) {
  h.AddNode("a", 8);
  uint64_t big = h.Submit(In("shared", GpuJob(8), "alice"));
  h.Pass();
  h.StartOnAllNodes(big);
  h.fx.fair_share.reset();
  for (int i = 0; i < 10; ++i) {
    h.clock.Advance(absl::Hours(1));
    Heartbeats(h, {"a"});
    h.Pass();
  }
  return big;
}

}  // namespace

TEST_CASE("fair share: of two users waiting, the one who used less goes first") {
  CoreHarness h(FairShareQueue());
  const uint64_t big = AliceHeldTheNodeTenHours(h);
  // She queues first; bob a minute later. Both want the whole node.
  uint64_t alices = h.Submit(In("shared", GpuJob(8), "alice"));
  h.clock.Advance(absl::Minutes(1));
  Heartbeats(h, {"a"});
  uint64_t bobs = h.Submit(In("shared", GpuJob(8), "bob"));
  h.Pass();
  const core::PriorityScore alice_score = *h.core.PriorityOf(alices);
  const core::PriorityScore bob_score = *h.core.PriorityOf(bobs);
  CHECK(bob_score.fair_share == Approx(1.0));
  // Alice's usage is all of it, her share half: 2^(-1/0.5) for user and account.
  CHECK(alice_score.fair_share == Approx(0.25));
  CHECK(bob_score.total > alice_score.total);

  ExitOn(h, big, 0);
  h.Pass();
  CHECK(h.StateOf(bobs) == v1::JOB_STATE_STARTING);
  CHECK(h.StateOf(alices) == v1::JOB_STATE_PENDING);
}

TEST_CASE("priority factors: age grows while a job waits, and a higher tier ranks first") {
  CoreHarness h(TwoTiers());
  h.AddNode("a", 1);
  uint64_t blocker = h.Submit(In("low", GpuJob(1)));
  h.Pass();
  uint64_t old_low = h.Submit(In("low", GpuJob(1)));
  h.Pass();
  const double age_then = h.core.PriorityOf(old_low)->age;
  h.clock.Advance(absl::Hours(24));
  Heartbeats(h, {"a"});
  h.Pass();
  CHECK(h.core.PriorityOf(old_low)->age > age_then);
  CHECK(h.core.PriorityOf(old_low)->age == Approx(1.0 / 7).epsilon(0.01));
  (void)blocker;
  uint64_t new_high = h.Submit(In("high", GpuJob(1)));
  h.Pass();
  CHECK(h.core.PriorityOf(new_high)->tier == Approx(1.0));
  CHECK(h.core.PriorityOf(new_high)->total > h.core.PriorityOf(old_low)->total);
}

TEST_CASE("a gang is preempted whole by a higher tier, requeued, and runs again as its next attempt") {
  CoreHarness h(TwoTiers());
  h.AddNode("a", 4);
  h.AddNode("b", 4);
  uint64_t victim = h.Submit(In("low", GpuJob(8, 2, 4)));
  h.Pass();
  h.StartOnAllNodes(victim);
  REQUIRE(h.StateOf(victim) == v1::JOB_STATE_RUNNING);
  h.clock.Advance(absl::Minutes(30));
  Heartbeats(h, {"a", "b"});
  h.Drain();

  uint64_t urgent = h.Submit(In("high", GpuJob(4)));
  h.Pass();
  // The whole gang is told to stop, on both nodes, with the grace for a checkpoint.
  for (const char* node : {"a", "b"}) {
    auto kills = h.Sent(node, v1::DaemonMessage::kKill);
    REQUIRE(kills.size() == 1);
    CHECK(kills[0].kill().job_id() == victim);
    CHECK(kills[0].kill().grace_ms() == 5000);
  }
  CHECK(h.Persisted(victim).stopping_as() == v1::JOB_STATE_PREEMPTED);
  CHECK_THAT(h.Persisted(victim).reason(), Catch::Contains("preempted by job " + std::to_string(urgent)));
  CHECK(h.StateOf(urgent) == v1::JOB_STATE_PENDING);
  CHECK_THAT(h.Persisted(urgent).reason(), Catch::Contains("preempting job " + std::to_string(victim)));
  // Further passes while the gang stops preempt nothing more.
  h.Drain();
  h.Pass();
  CHECK(h.Sent("a", v1::DaemonMessage::kKill).empty());

  ExitOn(h, victim, 143);  // SIGTERM, after its checkpoint
  CHECK(h.StateOf(victim) == v1::JOB_STATE_PENDING);
  CHECK(h.Persisted(victim).attempt() == 1);
  CHECK(h.Persisted(victim).allocation().nodes_size() == 0);
  CHECK(h.Persisted(victim).exit_code() == 0);
  CHECK_THAT(h.Persisted(victim).reason(), Catch::StartsWith("requeued for attempt 2: preempted by job"));
  const auto states = EventStates(h, victim);
  REQUIRE(states.size() >= 2);
  CHECK(states[states.size() - 2] == v1::JOB_STATE_PREEMPTED);
  CHECK(states.back() == v1::JOB_STATE_PENDING);

  h.Drain();
  h.Pass();
  CHECK(h.StateOf(urgent) == v1::JOB_STATE_STARTING);
  // The gang needs both nodes whole again: it waits for the urgent job.
  CHECK(h.StateOf(victim) == v1::JOB_STATE_PENDING);
  h.StartOnAllNodes(urgent);
  ExitOn(h, urgent, 0);
  h.Drain();
  h.Pass();
  REQUIRE(h.StateOf(victim) == v1::JOB_STATE_STARTING);
  auto launches = h.Sent("a", v1::DaemonMessage::kLaunch);
  REQUIRE(launches.size() == 1);
  CHECK(launches[0].launch().attempt() == 1);
  // A late report about the first attempt changes nothing.
  h.Report("a", victim, JobUpdate::KIND_EXITED, 1, /*attempt=*/0);
  CHECK(h.StateOf(victim) == v1::JOB_STATE_STARTING);
  h.StartOnAllNodes(victim, 1);
  CHECK(h.StateOf(victim) == v1::JOB_STATE_RUNNING);
}

TEST_CASE("preemption evicts the gang that loses the least work, and only what is needed") {
  CoreHarness h(TwoTiers());
  h.AddNode("a", 4);
  h.AddNode("b", 4);
  uint64_t old_job = RunFor(h, In("low", GpuJob(4)), absl::Hours(5), {"a", "b"});
  uint64_t young_job = RunFor(h, In("low", GpuJob(4)), absl::Minutes(10), {"a", "b"});

  uint64_t urgent = h.Submit(In("high", GpuJob(4)));
  h.Pass();
  CHECK(h.Persisted(young_job).stopping_as() == v1::JOB_STATE_PREEMPTED);
  CHECK(h.Persisted(old_job).stopping_as() == v1::JOB_STATE_UNSPECIFIED);
  ExitOn(h, young_job, 143);
  h.Pass();
  CHECK(h.StateOf(urgent) == v1::JOB_STATE_STARTING);
  // On the node the young job had: the old one was never touched.
  CHECK(NodesOf(h.Persisted(urgent)) != NodesOf(h.Persisted(old_job)));
}

TEST_CASE("preemption frees one whole node for a gang rather than one GPU on each of many") {
  CoreHarness h(TwoTiers());
  for (const char* n : {"a", "b", "c", "d"}) h.AddNode(n, 4);
  // On every node: a 3-GPU job running for a day, then a 1-GPU job just started.
  std::vector<uint64_t> big, small;
  for (int i = 0; i < 4; ++i) {
    big.push_back(h.Submit(In("low", GpuJob(3))));
    h.Pass();
    h.StartOnAllNodes(big.back());
  }
  h.clock.Advance(absl::Hours(24));
  Heartbeats(h, {"a", "b", "c", "d"});
  for (int i = 0; i < 4; ++i) {
    small.push_back(h.Submit(In("low", GpuJob(1))));
    h.Pass();
    h.StartOnAllNodes(small.back());
  }
  h.clock.Advance(absl::Minutes(1));
  Heartbeats(h, {"a", "b", "c", "d"});

  uint64_t urgent = h.Submit(In("high", GpuJob(4)));
  h.Pass();
  // Evicting the four young 1-GPU jobs would lose least, but spread the gang
  // over four nodes: one node's two jobs are evicted instead.
  std::vector<uint64_t> victims;
  for (uint64_t id : big) {
    if (h.Persisted(id).stopping_as() == v1::JOB_STATE_PREEMPTED) victims.push_back(id);
  }
  for (uint64_t id : small) {
    if (h.Persisted(id).stopping_as() == v1::JOB_STATE_PREEMPTED) victims.push_back(id);
  }
  REQUIRE(victims.size() == 2);
  CHECK(NodesOf(h.Persisted(victims[0])) == NodesOf(h.Persisted(victims[1])));
  for (uint64_t id : victims) ExitOn(h, id, 143);
  h.Pass();
  REQUIRE(h.StateOf(urgent) == v1::JOB_STATE_STARTING);
  CHECK(h.Persisted(urgent).allocation().nodes_size() == 1);
}

TEST_CASE("best-fit compacts: it evicts on the least utilized node, the topology policy loses the least work") {
  for (const char* policy : {"best-fit", "topology"}) {
    INFO(policy);
    // Two low queues, each pinned to one node, so that best-fit's packing
    // cannot put both gangs on one node.
    QueueSpec on_a_only = QueueSpec::Named("low-a"), on_b_only = QueueSpec::Named("low-b");
    on_a_only.nodes = "a";
    on_b_only.nodes = "b";
    CoreOptions options = WithQueues({on_a_only, on_b_only, QueueSpec::Named("high", 1)});
    options.placement_policy = policy;
    CoreHarness h(options);
    h.AddNode("a", 4);
    h.AddNode("b", 4);
    // b: one GPU busy for ten hours (10 GPU-hours to lose); a: three GPUs for one hour (3).
    uint64_t on_b = RunFor(h, In("low-b", GpuJob(1)), absl::Hours(9), {"a", "b"});
    uint64_t on_a = RunFor(h, In("low-a", GpuJob(3)), absl::Hours(1), {"a", "b"});

    // One whole node: the free GPUs (one on a, three on b) are not enough.
    h.Submit(In("high", GpuJob(4, 1, 4)));
    h.Pass();
    const uint64_t expected = std::string(policy) == "best-fit" ? on_b : on_a;
    const uint64_t spared = expected == on_b ? on_a : on_b;
    CHECK(h.Persisted(expected).stopping_as() == v1::JOB_STATE_PREEMPTED);
    CHECK(h.Persisted(spared).stopping_as() == v1::JOB_STATE_UNSPECIFIED);
  }
}

TEST_CASE("preemption honours the victim queue's mode: cancel ends it PREEMPTED, off leaves it alone") {
  SECTION("cancel") {
    CoreHarness h(TwoTiers(PreemptMode::kCancel));
    h.AddNode("a", 4);
    uint64_t victim = h.Submit(In("low", GpuJob(4)));
    h.Pass();
    PreemptedBy4GpuJob(h, victim);
    CHECK(h.StateOf(victim) == v1::JOB_STATE_PREEMPTED);
    CHECK(h.core.FindActive(victim) == nullptr);
  }
  SECTION("requeue") {
    CoreHarness h(TwoTiers(PreemptMode::kRequeue));
    CHECK(Preempts(h, "low", "high"));
  }
  SECTION("off") {
    CoreHarness h(TwoTiers(PreemptMode::kOff));
    CHECK_FALSE(Preempts(h, "low", "high"));
  }
}

TEST_CASE("jobs of the same tier never preempt each other") {
  CoreHarness h(TwoTiers());
  CHECK_FALSE(Preempts(h, "high", "high"));
}

TEST_CASE("a gang whose node fails is requeued whole, unless it asked not to be") {
  CoreHarness h(WithQueues({QueueSpec::Named("q")}));
  h.AddNode("a", 4);
  h.AddNode("b", 4);
  h.AddNode("c", 4);
  uint64_t keeps = h.Submit(In("q", GpuJob(8, 2, 4)));
  h.Pass();
  v1::JobSpec no_requeue = In("q", GpuJob(4));
  no_requeue.set_requeue(false);
  uint64_t ends = h.Submit(no_requeue);
  h.Pass();
  h.StartOnAllNodes(keeps);
  h.StartOnAllNodes(ends);
  const std::vector<std::string> gang_nodes = NodesOf(h.Persisted(keeps));
  const std::string failing = gang_nodes[0];
  const std::string survivor = gang_nodes[1];
  const std::string other = NodesOf(h.Persisted(ends))[0];
  // The failing node goes silent; the others keep heartbeating.
  for (int i = 0; i < 13; ++i) {
    h.clock.Advance(absl::Seconds(10));
    h.core.AgentHeartbeat(survivor, h.fx);
    h.core.AgentHeartbeat(other, h.fx);
    h.Pass();
  }
  REQUIRE(h.core.Nodes().size() == 3);
  // The rest of the gang is stopped; once its node confirms, the job waits again.
  CHECK(h.Persisted(keeps).stopping_as() == v1::JOB_STATE_NODE_FAIL);
  h.Report(survivor, keeps, JobUpdate::KIND_EXITED, 143);
  CHECK(h.StateOf(keeps) == v1::JOB_STATE_PENDING);
  CHECK(h.Persisted(keeps).attempt() == 1);
  CHECK_THAT(h.Persisted(keeps).reason(), Catch::Contains("is down"));
  (void)other;
  (void)ends;
}

TEST_CASE("requeues stop at max_requeues: the next failure ends the job") {
  CoreOptions options = TwoTiers();
  options.queues.max_requeues = 1;
  CoreHarness h(options);
  h.AddNode("a", 4);
  uint64_t victim = h.Submit(In("low", GpuJob(4)));
  for (int attempt = 0; attempt < 2; ++attempt) {
    h.Pass();
    REQUIRE(h.StateOf(victim) == v1::JOB_STATE_STARTING);
    uint64_t urgent = PreemptedBy4GpuJob(h, victim, attempt);
    h.Pass();
    h.StartOnAllNodes(urgent);
    ExitOn(h, urgent, 0);
  }
  CHECK(h.StateOf(victim) == v1::JOB_STATE_PREEMPTED);
}

TEST_CASE("an agent that comes back with an earlier attempt of a requeued job is told to kill it") {
  CoreHarness h(TwoTiers());
  h.AddNode("a", 4);
  uint64_t victim = h.Submit(In("low", GpuJob(4)));
  h.Pass();
  PreemptedBy4GpuJob(h, victim);
  REQUIRE(h.Persisted(victim).attempt() == 1);
  v1::RegisterNode reg;
  *reg.mutable_node() = core::testing::MakeNode("a", 4);
  reg.add_running_job_ids(victim);
  reg.add_running_job_attempts(0);
  v1::RegisterAck ack;
  h.core.AgentRegistered(reg, h.fx, ack);
  REQUIRE(ack.kill_job_ids_size() == 1);
  CHECK(ack.kill_job_ids(0) == victim);
}

TEST_CASE("fair share: the usage is kept every minute and a restarted core ranks as the old one did") {
  const CoreOptions options = FairShareQueue();
  CoreHarness h(options);
  const uint64_t big = AliceHeldTheNodeTenHours(h);
  REQUIRE(h.fx.fair_share.has_value());
  const v1::FairShareUsage kept = *h.fx.fair_share;
  CHECK(kept.users().at("alice") > 8 * 9 * 3600.0 * 0.7);  // ten hours on 8 GPUs, decayed
  CHECK(FromProtoTime(kept.at()) == h.clock.Now());
  // Within a minute, nothing more to keep.
  h.fx.fair_share.reset();
  h.clock.Advance(absl::Seconds(30));
  Heartbeats(h, {"a"});
  h.Pass();
  CHECK_FALSE(h.fx.fair_share.has_value());
  ExitOn(h, big, 0);
  h.Pass();

  // A new core (a restarted daemon) given what was kept, thirty seconds on.
  CoreHarness after(options);
  after.clock.Advance(h.clock.Now() - after.clock.Now());
  after.core.RestoreFairShare(kept);
  after.AddNode("a", 8);
  // Alice queues first; without what was kept she would go first.
  uint64_t alices = after.Submit(In("shared", GpuJob(8), "alice"));
  uint64_t bobs = after.Submit(In("shared", GpuJob(8), "bob"));
  after.Pass();
  CHECK(after.StateOf(bobs) == v1::JOB_STATE_STARTING);
  CHECK(after.StateOf(alices) == v1::JOB_STATE_PENDING);
  CHECK(after.core.PriorityOf(alices)->fair_share == Approx(0.25).epsilon(0.01));
}

namespace {

// Queue "on-a" may use node a only, "on-b" node b only; strict queue order,
// so that a head without a reservation blocks at once.
CoreOptions DisjointQueues() {
  QueueSpec on_a = QueueSpec::Named("on-a"), on_b = QueueSpec::Named("on-b");
  on_a.nodes = "a";
  on_b.nodes = "b";
  CoreOptions options = WithQueues({on_a, on_b});
  options.head_blocks_after = absl::ZeroDuration();
  return options;
}

}  // namespace

TEST_CASE("a job of another queue's nodes does not inherit a same-shaped job's 'cannot be placed'") {
  CoreHarness h(DisjointQueues());
  h.AddNode("a", 2);
  h.AddNode("b", 2);
  v1::JobSpec busy = In("on-b", GpuJob(2));
  busy.set_time_limit_s(3600);  // b frees up at a known time: the next job of b gets a reservation
  const uint64_t running = h.Submit(busy);
  h.Pass();
  h.StartOnAllNodes(running);
  const uint64_t waits_for_b = h.Submit(In("on-b", GpuJob(2)));
  const uint64_t fits_on_a = h.Submit(In("on-a", GpuJob(2)));
  h.Pass();
  CHECK(h.StateOf(waits_for_b) == v1::JOB_STATE_PENDING);
  CHECK(h.StateOf(fits_on_a) == v1::JOB_STATE_STARTING);
}

TEST_CASE("a blocked head holds back only the jobs that compete with it for nodes") {
  CoreHarness h(DisjointQueues());
  h.AddNode("a", 2);
  h.AddNode("b", 2);
  // b is taken by a job without a time limit: the next job of b cannot be
  // given a reservation, and blocks b's queue.
  const uint64_t running = h.Submit(In("on-b", GpuJob(2)));
  h.Pass();
  h.StartOnAllNodes(running);
  const uint64_t head = h.Submit(In("on-b", GpuJob(2)));
  const uint64_t behind_on_b = h.Submit(In("on-b", GpuJob(1)));
  const uint64_t on_a = h.Submit(In("on-a", GpuJob(1)));
  h.Pass();
  CHECK(h.StateOf(head) == v1::JOB_STATE_PENDING);
  CHECK(h.StateOf(behind_on_b) == v1::JOB_STATE_PENDING);
  CHECK_THAT(h.Persisted(behind_on_b).reason(), Catch::Contains("waiting behind a higher-priority job"));
  // Node a shares nothing with the blocked head: its job runs.
  CHECK(h.StateOf(on_a) == v1::JOB_STATE_STARTING);
}

TEST_CASE("held jobs take no place in the queue depth: thousands of them cannot starve a runnable job") {
  CoreOptions options = CoreHarness::Options();
  options.queue_depth = 5;
  CoreHarness h(options);
  h.AddNode("a", 4);
  std::vector<uint64_t> held;
  for (int i = 0; i < 20; ++i) {
    held.push_back(h.Submit(GpuJob(1)));
    REQUIRE(h.core.Hold(held.back(), h.fx).ok());
  }
  const uint64_t runnable = h.Submit(GpuJob(1));
  h.Pass();
  CHECK(h.StateOf(runnable) == v1::JOB_STATE_STARTING);
  for (uint64_t id : held) {
    CHECK(h.StateOf(id) == v1::JOB_STATE_PENDING);
    CHECK_THAT(h.Persisted(id).reason(), Catch::StartsWith("held"));
  }
}

TEST_CASE("fair share charges a job with a share of a GPU that fraction of it") {
  CoreHarness h(FairShareQueue());
  h.AddNode("s", 2, v1::GPU_SHARE_MODE_TIMESLICE);
  v1::JobSpec share = GpuJob(1);
  share.mutable_resources()->set_gpu_share_milli(300);
  const uint64_t alices = h.Submit(In("shared", share, "alice"));
  const uint64_t bobs = h.Submit(In("shared", GpuJob(1), "bob"));
  h.Pass();
  h.StartOnAllNodes(alices);
  h.StartOnAllNodes(bobs);
  for (int i = 0; i < 10; ++i) {
    h.clock.Advance(absl::Hours(1));
    Heartbeats(h, {"s"});
    h.Pass();
  }
  REQUIRE(h.fx.fair_share.has_value());
  const v1::FairShareUsage& kept = *h.fx.fair_share;
  CHECK(kept.users().at("alice") == Approx(0.3 * kept.users().at("bob")));
}

TEST_CASE("queue GPU limits count a share as its fraction of a GPU, in each pass and at submit") {
  CoreHarness h(WithQueues({Limited("shared", 1)}));
  h.AddNode("s", 4, v1::GPU_SHARE_MODE_TIMESLICE);
  v1::JobSpec share = GpuJob(1);
  share.mutable_resources()->set_gpu_share_milli(300);
  v1::JobSpec half = GpuJob(1);
  half.mutable_resources()->set_gpu_share_milli(500);
  const uint64_t a = h.Submit(In("shared", share));
  const uint64_t b = h.Submit(In("shared", share));
  const uint64_t c = h.Submit(In("shared", half));
  h.Pass();
  // 0.3 + 0.3 of the user's one GPU: the 0.5 more would pass it.
  CHECK(h.StateOf(a) == v1::JOB_STATE_STARTING);
  CHECK(h.StateOf(b) == v1::JOB_STATE_STARTING);
  CHECK(h.StateOf(c) == v1::JOB_STATE_PENDING);
  CHECK_THAT(h.Persisted(c).reason(), Catch::Contains("per-user GPU limit: alice's jobs hold 0.6 of 1 GPUs"));
  // At submit too: three 30% shares are 0.9 of a GPU, within the limit of 1;
  // four are not.
  v1::JobSpec three = share;
  three.mutable_resources()->set_gpus(3);
  CHECK(h.core.Submit(In("shared", three), "", h.fx).ok());
  three.mutable_resources()->set_gpus(4);
  auto four = h.core.Submit(In("shared", three), "", h.fx);
  REQUIRE_FALSE(four.ok());
  CHECK(four.status().message() == "resources.gpus: 1.2 GPUs, but queue \"shared\" allows at most 1 per user");
}

TEST_CASE("a whole-GPU job of a higher tier preempts the shares off the GPU that frees with the fewest evicted") {
  CoreHarness h(TwoTiers());
  h.AddNode("s", 2, v1::GPU_SHARE_MODE_TIMESLICE);
  v1::JobSpec share = GpuJob(1);
  share.mutable_resources()->set_gpu_share_milli(300);
  std::vector<uint64_t> shares;
  // Best fit puts three on one GPU; the fourth does not fit there.
  for (int i = 0; i < 4; ++i) shares.push_back(RunFor(h, In("low", share), absl::Minutes(10 + i), {"s"}));
  const int lone_gpu = h.core.FindActive(shares[3])->allocation().nodes(0).gpu_indices(0);
  REQUIRE(h.core.FindActive(shares[0])->allocation().nodes(0).gpu_indices(0) != lone_gpu);

  const uint64_t urgent = h.Submit(In("high", GpuJob(1)));
  h.Pass();
  for (int i = 0; i < 3; ++i) CHECK(h.core.FindActive(shares[i])->stopping_as() == v1::JOB_STATE_UNSPECIFIED);
  CHECK(h.core.FindActive(shares[3])->stopping_as() == v1::JOB_STATE_PREEMPTED);
  ExitOn(h, shares[3], 143);
  h.Pass();
  REQUIRE(h.StateOf(urgent) == v1::JOB_STATE_STARTING);
  CHECK(h.Persisted(urgent).allocation().nodes(0).gpu_indices(0) == lone_gpu);
}
