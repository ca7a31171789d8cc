#include "daemon/core/scheduler_core.h"

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "tests/unit/core/core_harness.h"

using namespace gpusched;
using core::testing::CoreHarness;
using core::testing::GpuJob;
using v1::DaemonMessage;
using v1::JobUpdate;

namespace {

// The default queue, with gangs that end NODE_FAIL when a node fails
// instead of going back to the queue.
core::CoreOptions WithoutRequeue() {
  core::CoreOptions o = CoreHarness::Options();
  o.queues.queues[0].requeue_on_node_fail = false;
  return o;
}

}  // namespace

TEST_CASE("a job goes PENDING -> STARTING -> RUNNING -> COMPLETED") {
  CoreHarness h;
  h.AddNode("a", 8);
  uint64_t id = h.Submit(GpuJob(2));
  CHECK(h.StateOf(id) == v1::JOB_STATE_PENDING);
  h.Pass();
  CHECK(h.StateOf(id) == v1::JOB_STATE_STARTING);
  auto launches = h.Sent("a", DaemonMessage::kLaunch);
  REQUIRE(launches.size() == 1);
  CHECK(launches[0].launch().gpu_indices_size() == 2);
  CHECK(launches[0].launch().world_size() == 2);
  CHECK(h.core.cluster().Find("a")->FreeGpus() == 6);

  h.Report("a", id, JobUpdate::KIND_STARTED);
  CHECK(h.StateOf(id) == v1::JOB_STATE_RUNNING);
  CHECK(h.Persisted(id).allocation().nodes(0).log_dir() == "/logs/job-" + std::to_string(id));
  h.Report("a", id, JobUpdate::KIND_EXITED, 0);
  CHECK(h.StateOf(id) == v1::JOB_STATE_COMPLETED);
  CHECK(h.core.cluster().Find("a")->FreeGpus() == 8);
  CHECK(h.core.FindActive(id) == nullptr);
}

TEST_CASE("a 2-node gang gets distinct rank offsets and one master") {
  CoreHarness h;
  h.AddNode("a", 4);
  h.AddNode("b", 4);
  uint64_t id = h.Submit(GpuJob(0, 2, 2));
  h.Pass();
  auto la = h.Sent("a", DaemonMessage::kLaunch);
  auto lb = h.Sent("b", DaemonMessage::kLaunch);
  REQUIRE(la.size() == 1);
  REQUIRE(lb.size() == 1);
  CHECK(la[0].launch().nnodes() == 2);
  CHECK(la[0].launch().world_size() == 4);
  CHECK(la[0].launch().rank_offset() != lb[0].launch().rank_offset());
  CHECK(la[0].launch().node_rank() != lb[0].launch().node_rank());
  CHECK(la[0].launch().master_addr() == lb[0].launch().master_addr());
  CHECK(la[0].launch().master_port() == lb[0].launch().master_port());
  // RUNNING only once every node has started.
  h.Report("a", id, JobUpdate::KIND_STARTED);
  CHECK(h.StateOf(id) == v1::JOB_STATE_STARTING);
  h.Report("b", id, JobUpdate::KIND_STARTED);
  CHECK(h.StateOf(id) == v1::JOB_STATE_RUNNING);
}

TEST_CASE("one rank failing stops the whole gang and the job FAILS with its code") {
  CoreHarness h;
  uint64_t id = h.RunningGangOnAAndB(4);
  h.Drain();
  h.Report("a", id, JobUpdate::KIND_EXITED, 3);
  auto kills = h.Sent("b", DaemonMessage::kKill);
  REQUIRE(kills.size() == 1);
  CHECK(kills[0].kill().grace_ms() == 5000);
  CHECK(h.Sent("a", DaemonMessage::kKill).empty());  // already gone
  CHECK(h.StateOf(id) == v1::JOB_STATE_RUNNING);     // b still holds its GPUs
  CHECK(h.core.cluster().Find("b")->FreeGpus() == 0);
  h.Report("b", id, JobUpdate::KIND_EXITED, 143);
  CHECK(h.StateOf(id) == v1::JOB_STATE_FAILED);
  CHECK(h.Persisted(id).exit_code() == 3);
  CHECK(h.core.cluster().Find("b")->FreeGpus() == 4);
}

TEST_CASE("a launch failure fails the job with the agent's message") {
  CoreHarness h;
  h.AddNode("a", 4);
  uint64_t id = h.Submit(GpuJob(1));
  h.Pass();
  v1::JobUpdate update;
  update.set_job_id(id);
  update.set_kind(JobUpdate::KIND_LAUNCH_FAILED);
  update.set_message("exec \"nope\": No such file or directory");
  h.core.JobUpdate("a", update, h.fx);
  CHECK(h.StateOf(id) == v1::JOB_STATE_FAILED);
  CHECK(h.Persisted(id).reason() == "launch failed on a: exec \"nope\": No such file or directory");
}

TEST_CASE("cancel: pending at once, running after its processes are gone") {
  CoreHarness h;
  h.AddNode("a", 2);
  uint64_t running = h.Submit(GpuJob(2));
  uint64_t pending = h.Submit(GpuJob(2));
  h.Pass();
  h.Report("a", running, JobUpdate::KIND_STARTED);

  auto cancelled = h.core.Cancel(pending, "", h.fx);
  REQUIRE(cancelled.ok());
  CHECK(cancelled->state() == v1::JOB_STATE_CANCELLED);

  auto stopping = h.core.Cancel(running, "wrong data", h.fx);
  REQUIRE(stopping.ok());
  CHECK(stopping->state() == v1::JOB_STATE_RUNNING);
  CHECK(stopping->stopping_as() == v1::JOB_STATE_CANCELLED);
  CHECK(h.Sent("a", DaemonMessage::kKill).size() == 1);
  h.Report("a", running, JobUpdate::KIND_EXITED, 128 + 15);
  CHECK(h.StateOf(running) == v1::JOB_STATE_CANCELLED);
  CHECK(h.Persisted(running).reason() == "cancelled: wrong data");

  CHECK(h.core.Cancel(running, "", h.fx).status().code() == absl::StatusCode::kNotFound);
}

TEST_CASE("a job past its time limit is stopped and ends TIMEOUT") {
  CoreHarness h;
  h.AddNode("a", 1);
  v1::JobSpec spec = GpuJob(1);
  spec.set_time_limit_s(60);
  uint64_t id = h.Submit(spec);
  h.Pass();
  h.Report("a", id, JobUpdate::KIND_STARTED);
  h.clock.Advance(absl::Seconds(59));
  h.Pass();
  CHECK(h.Sent("a", DaemonMessage::kKill).empty());
  h.clock.Advance(absl::Seconds(1));
  h.Pass();
  REQUIRE(h.Sent("a", DaemonMessage::kKill).size() == 1);
  h.Report("a", id, JobUpdate::KIND_EXITED, 137);
  CHECK(h.StateOf(id) == v1::JOB_STATE_TIMEOUT);
  CHECK(h.Persisted(id).reason() == "time limit of 00:01:00 reached");
}

TEST_CASE("higher priority goes first; in strict queue order the head of the queue blocks the rest") {
  core::CoreOptions strict = CoreHarness::Options();
  strict.head_blocks_after = absl::ZeroDuration();
  CoreHarness h(strict);
  h.AddNode("a", 4);
  uint64_t filler = h.Submit(GpuJob(3));
  h.Pass();
  uint64_t big = h.Submit(GpuJob(4));  // must wait for the filler
  v1::JobSpec urgent = GpuJob(4);
  urgent.set_priority(10);
  uint64_t first = h.Submit(urgent);
  uint64_t small = h.Submit(GpuJob(1));  // would fit now, but waits its turn
  h.Pass();
  CHECK(h.StateOf(first) == v1::JOB_STATE_PENDING);
  CHECK(h.Persisted(first).reason() == "waiting for 4 free GPUs (1 free on 1 up node)");
  CHECK(h.Persisted(big).reason() == "waiting behind a higher-priority job that cannot start yet");
  CHECK(h.StateOf(small) == v1::JOB_STATE_PENDING);

  h.Report("a", filler, JobUpdate::KIND_STARTED);
  h.Report("a", filler, JobUpdate::KIND_EXITED, 0);
  h.Pass();
  CHECK(h.StateOf(first) == v1::JOB_STATE_STARTING);
  CHECK(h.StateOf(big) == v1::JOB_STATE_PENDING);
}

TEST_CASE("a retried submit with the same request id returns the first job") {
  CoreHarness h;
  uint64_t id = h.Submit(GpuJob(1), "req-1");
  auto again = h.core.Submit(GpuJob(1), "req-1", h.fx);
  REQUIRE(again.ok());
  CHECK(again->duplicate);
  CHECK(again->job_id == id);
  CHECK(h.Submit(GpuJob(1), "req-2") != id);
}

TEST_CASE("a request id is its user's own: another user's same id makes a job of theirs, after a restart too") {
  auto as = [](const std::string& user) {
    v1::JobSpec spec = GpuJob(1);
    spec.set_user(user);
    return spec;
  };
  CoreHarness h;
  const uint64_t alices = h.Submit(as("alice"), "train-1");
  auto bobs = h.core.Submit(as("bob"), "train-1", h.fx);
  REQUIRE(bobs.ok());
  CHECK_FALSE(bobs->duplicate);
  CHECK(bobs->job_id != alices);
  CHECK(h.Persisted(bobs->job_id).spec().user() == "bob");
  auto retried = h.core.SubmitArray(as("bob"), "0-3", "train-1", h.fx);
  REQUIRE(retried.ok());
  CHECK(retried->duplicate);
  CHECK(retried->job_id == bobs->job_id);

  // The ids come back from the store with their users.
  CoreHarness after;
  after.core.Restore({h.Persisted(alices), h.Persisted(bobs->job_id)}, {}, bobs->job_id,
                     {{"alice", "train-1", alices}, {"bob", "train-1", bobs->job_id}});
  auto alice_again = after.core.Submit(as("alice"), "train-1", after.fx);
  REQUIRE(alice_again.ok());
  CHECK(alice_again->duplicate);
  CHECK(alice_again->job_id == alices);
  auto carols = after.core.Submit(as("carol"), "train-1", after.fx);
  REQUIRE(carols.ok());
  CHECK_FALSE(carols->duplicate);
  CHECK(carols->job_id == bobs->job_id + 1);
}

TEST_CASE("a request id the store could not keep is refused at submit, naming the field and the byte") {
  CoreHarness h;
  const std::string too_long(core::kMaxClientRequestIdBytes + 1, 'k');
  auto refused = h.core.Submit(GpuJob(1), too_long, h.fx);
  CHECK(refused.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(refused.status().message(), "client_request_id: 257 bytes"));
  refused = h.core.Submit(GpuJob(1), std::string("req\0-1", 6), h.fx);
  CHECK(absl::StrContains(refused.status().message(), "client_request_id: byte 3 (0x00)"));
  refused = h.core.SubmitArray(GpuJob(1), "0-3", "caf\xc3\xa9", h.fx);
  CHECK(absl::StrContains(refused.status().message(), "client_request_id: byte 3 (0xc3)"));
  CHECK(h.fx.jobs.empty());
  const std::string longest(core::kMaxClientRequestIdBytes, 'k');
  CHECK(h.core.Submit(GpuJob(1), longest, h.fx).ok());
}

TEST_CASE("a never-schedulable gang is refused at submit") {
  CoreHarness h;
  h.AddNode("a", 8);
  auto outcome = h.core.Submit(GpuJob(0, 1, 16), "", h.fx);
  CHECK(outcome.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(h.fx.jobs.empty());
}

TEST_CASE("an agent that comes back without a job's processes fails that job NODE_FAIL") {
  CoreHarness h(WithoutRequeue());
  uint64_t id = h.RunningGangOnAAndB(4);
  h.core.AgentDisconnected("b", h.fx);
  h.Drain();
  v1::RegisterNode reg;
  *reg.mutable_node() = core::testing::MakeNode("b", 4);  // lists no running job
  reg.add_running_job_ids(777);                           // and one the daemon never placed there
  v1::RegisterAck ack;
  h.core.AgentRegistered(reg, h.fx, ack);
  REQUIRE(ack.kill_job_ids_size() == 1);
  CHECK(ack.kill_job_ids(0) == 777);
  REQUIRE(h.Sent("a", DaemonMessage::kKill).size() == 1);  // the rest of the gang stops
  h.Report("a", id, JobUpdate::KIND_EXITED, 143);
  CHECK(h.StateOf(id) == v1::JOB_STATE_NODE_FAIL);
}

TEST_CASE("restore keeps placed jobs' GPUs and re-sends a launch that may be lost") {
  CoreHarness before;
  before.AddNode("a", 4);
  uint64_t id = before.Submit(GpuJob(2));
  before.Pass();  // STARTING; the daemon "crashes" here

  CoreHarness after;
  std::vector<v1::Job> unfinished = {before.Persisted(id)};
  v1::Node node;
  *node.mutable_info() = core::testing::MakeNode("a", 4);
  after.core.Restore(unfinished, {node}, id, {});
  CHECK(after.core.cluster().Find("a")->FreeGpus() == 2);
  CHECK(after.core.cluster().Find("a")->state == v1::NODE_STATE_NOT_RESPONDING);
  after.AddNode("a", 4);  // the agent reconnects, not knowing the job
  REQUIRE(after.Sent("a", DaemonMessage::kLaunch).size() == 1);
  CHECK(after.Submit(GpuJob(1)) == id + 1);
}

TEST_CASE("a silent node takes no new work, then goes DOWN and its gangs end NODE_FAIL everywhere") {
  CoreHarness h(WithoutRequeue());
  uint64_t gang = h.RunningGangOnAAndB(2);

  h.clock.Advance(absl::Seconds(20));
  h.core.AgentHeartbeat("a", h.fx);  // a keeps talking, b falls silent
  h.clock.Advance(absl::Seconds(15));
  h.Pass();
  CHECK(h.core.cluster().Find("a")->state == v1::NODE_STATE_UP);
  CHECK(h.core.cluster().Find("b")->state == v1::NODE_STATE_NOT_RESPONDING);
  CHECK(h.core.cluster().Find("b")->reason == "no heartbeat for 35s");
  h.Drain();
  uint64_t next = h.Submit(GpuJob(2));
  h.Pass();
  REQUIRE(h.Sent("b", DaemonMessage::kLaunch).empty());  // nothing new lands on b
  CHECK(h.Persisted(next).allocation().nodes(0).node() == "a");
  CHECK(h.StateOf(gang) == v1::JOB_STATE_RUNNING);  // its agent may still be running it

  h.Drain();
  h.core.AgentHeartbeat("a", h.fx);
  h.clock.Advance(absl::Seconds(90));
  h.core.AgentHeartbeat("a", h.fx);
  h.Pass();
  CHECK(h.core.cluster().Find("b")->state == v1::NODE_STATE_DOWN);
  REQUIRE(h.Sent("a", DaemonMessage::kKill).size() == 1);  // no half-gang keeps running on a
  h.Report("a", gang, JobUpdate::KIND_EXITED, 143);
  CHECK(h.StateOf(gang) == v1::JOB_STATE_NODE_FAIL);
  CHECK(h.Persisted(gang).reason() == "node b is down: silent for 2m5s");

  // A heartbeat on b's old stream (a healed partition) does not bring it
  // back: the daemon must hear it register, with what it still runs.
  CHECK_FALSE(h.core.AgentHeartbeat("b", h.fx));
  CHECK(h.core.cluster().Find("b")->state == v1::NODE_STATE_DOWN);
  CHECK_FALSE(h.core.AgentHeartbeat("nobody-knows", h.fx));
  CHECK(h.core.AgentHeartbeat("a", h.fx));

  // b comes back still running the gang's old processes: it is told to kill them.
  v1::RegisterNode reg;
  *reg.mutable_node() = core::testing::MakeNode("b", 4);
  reg.add_running_job_ids(gang);
  v1::RegisterAck ack;
  h.core.AgentRegistered(reg, h.fx, ack);
  REQUIRE(ack.kill_job_ids_size() == 1);
  CHECK(ack.kill_job_ids(0) == gang);
  CHECK(h.core.cluster().Find("b")->state == v1::NODE_STATE_UP);
  CHECK(h.core.cluster().Find("b")->FreeGpus() == 4);
}

TEST_CASE("a disconnected agent that returns in time keeps its jobs") {
  CoreHarness h;
  h.AddNode("a", 4);
  uint64_t id = h.Submit(GpuJob(2));
  h.Pass();
  h.Report("a", id, JobUpdate::KIND_STARTED);
  h.core.AgentDisconnected("a", h.fx);
  CHECK(h.core.cluster().Find("a")->state == v1::NODE_STATE_NOT_RESPONDING);
  h.clock.Advance(absl::Seconds(60));
  h.Pass();
  CHECK(h.core.cluster().Find("a")->state == v1::NODE_STATE_NOT_RESPONDING);
  v1::RegisterNode reg;
  *reg.mutable_node() = core::testing::MakeNode("a", 4);
  reg.add_running_job_ids(id);
  v1::RegisterAck ack;
  h.Drain();
  h.core.AgentRegistered(reg, h.fx, ack);
  CHECK(ack.kill_job_ids_size() == 0);
  CHECK(h.Sent("a", DaemonMessage::kKill).empty());
  CHECK(h.core.FindActive(id)->state() == v1::JOB_STATE_RUNNING);
  h.Report("a", id, JobUpdate::KIND_EXITED, 0);
  CHECK(h.StateOf(id) == v1::JOB_STATE_COMPLETED);
}

TEST_CASE("a job being stopped when its agent restarted is sent its kill again: the new agent never heard it") {
  CoreHarness h;
  h.AddNode("a", 4);
  uint64_t id = h.Submit(GpuJob(2));
  h.Pass();
  h.Report("a", id, JobUpdate::KIND_STARTED);
  REQUIRE(h.core.Cancel(id, "no longer needed", h.fx).ok());
  REQUIRE(h.Sent("a", DaemonMessage::kKill).size() == 1);
  h.core.AgentDisconnected("a", h.fx);
  h.Drain();
  // The restarted agent adopted the job, which still runs.
  v1::RegisterNode reg;
  *reg.mutable_node() = core::testing::MakeNode("a", 4);
  reg.add_running_job_ids(id);
  v1::RegisterAck ack;
  h.core.AgentRegistered(reg, h.fx, ack);
  CHECK(ack.kill_job_ids_size() == 0);  // still this attempt's to end and report
  auto kills = h.Sent("a", DaemonMessage::kKill);
  REQUIRE(kills.size() == 1);
  CHECK(kills[0].kill().job_id() == id);
  h.Report("a", id, JobUpdate::KIND_EXITED, 143);
  CHECK(h.StateOf(id) == v1::JOB_STATE_CANCELLED);
}

TEST_CASE("a drained node takes no new job, keeps its running ones, and stays drained across restarts") {
  CoreHarness h;
  h.AddNode("a", 4);
  h.AddNode("b", 4);
  uint64_t running = h.Submit(GpuJob(2));
  h.Pass();
  REQUIRE(h.Persisted(running).allocation().nodes(0).node() == "a");  // best fit, name order
  h.Report("a", running, JobUpdate::KIND_STARTED);

  CHECK(h.core.DrainNode("a", "", h.fx).status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(h.core.DrainNode("zz", "why", h.fx).status().code() == absl::StatusCode::kNotFound);
  // A reason is one line of a table, and not a place to store a megabyte.
  auto long_reason = h.core.DrainNode("a", std::string(1 << 20, 'x'), h.fx);
  CHECK(long_reason.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(long_reason.status().message() == "reason: 1048576 bytes long, at most 1024");
  CHECK(h.core.DrainNode("a", "ok\nnode b DRAINED", h.fx).status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(h.core.Cancel(running, std::string(2000, 'x'), h.fx).status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(h.StateOf(running) == v1::JOB_STATE_RUNNING);
  auto drained = h.core.DrainNode("a", "replace GPU3", h.fx);
  REQUIRE(drained.ok());
  CHECK(drained->drain_reason() == "replace GPU3");
  CHECK(h.fx.nodes.at("a").drain_reason() == "replace GPU3");  // persisted with the node row
  CHECK(h.StateOf(running) == v1::JOB_STATE_RUNNING);

  // a has 2 free GPUs and fits best, but is drained: the job goes to b.
  uint64_t next = h.Submit(GpuJob(2));
  h.Pass();
  CHECK(h.Persisted(next).allocation().nodes(0).node() == "b");
  // A gang that needs a too waits, with a reason.
  uint64_t both = h.Submit(GpuJob(4, 2, 2));
  h.Pass();
  CHECK(h.StateOf(both) == v1::JOB_STATE_PENDING);

  // The agent reconnecting does not undo an operator's drain.
  h.AddNode("a", 4);
  CHECK(h.core.cluster().Find("a")->drain_reason == "replace GPU3");
  // Nor does a daemon restart: the node row carries it.
  CoreHarness after;
  after.core.Restore({}, {h.fx.nodes.at("a")}, next, {});
  CHECK(after.core.cluster().Find("a")->drain_reason == "replace GPU3");

  REQUIRE(h.core.ResumeNode("a", h.fx).ok());
  CHECK(h.fx.nodes.at("a").drain_reason().empty());
  h.Report("b", next, JobUpdate::KIND_STARTED);
  h.Report("b", next, JobUpdate::KIND_EXITED, 0);
  h.Report("a", running, JobUpdate::KIND_EXITED, 0);
  h.Pass();
  CHECK(h.StateOf(both) == v1::JOB_STATE_STARTING);
}

TEST_CASE("fencing: a node back from DOWN takes no job until its agent confirms the old attempt is gone") {
  CoreHarness h;  // requeue on node failure (the default)
  uint64_t gang = h.RunningGangOnAAndB(4);
  // b falls silent past the down timeout; a confirms its half is stopped.
  h.clock.Advance(absl::Seconds(60));
  h.core.AgentHeartbeat("a", h.fx);
  h.clock.Advance(absl::Seconds(65));
  h.core.AgentHeartbeat("a", h.fx);
  h.Pass();
  REQUIRE(h.core.cluster().Find("b")->state == v1::NODE_STATE_DOWN);
  h.Report("a", gang, JobUpdate::KIND_EXITED, 137);
  h.Pass();
  REQUIRE(h.core.FindActive(gang) != nullptr);
  CHECK(h.core.FindActive(gang)->attempt() == 1);
  CHECK(h.core.FindActive(gang)->state() == v1::JOB_STATE_PENDING);  // a alone cannot hold 8 GPUs

  // b registers again, still listing attempt 0: told to kill it, and not
  // eligible until it says the processes are gone.
  v1::RegisterNode reg;
  *reg.mutable_node() = core::testing::MakeNode("b", 4);
  reg.add_running_job_ids(gang);
  reg.add_running_job_attempts(0);
  v1::RegisterAck ack;
  h.Drain();
  h.core.AgentRegistered(reg, h.fx, ack);
  REQUIRE(ack.kill_job_ids_size() == 1);
  // Its lease is shorter than the down timeout (120 s by default).
  CHECK(ack.fence_after_ms() == 90'000);
  CHECK(h.core.cluster().Find("b")->state == v1::NODE_STATE_UP);
  CHECK_FALSE(h.core.cluster().Find("b")->accepts_jobs());
  CHECK(h.core.FindNode("b")->unconfirmed_kills(0) == gang);
  h.Pass();
  CHECK(h.Sent("b", DaemonMessage::kLaunch).empty());
  CHECK(h.core.FindActive(gang)->state() == v1::JOB_STATE_PENDING);

  // A report for another job confirms nothing; the old attempt's exit does.
  h.Report("b", gang + 100, JobUpdate::KIND_EXITED, 0);
  CHECK_FALSE(h.core.cluster().Find("b")->accepts_jobs());
  h.Report("b", gang, JobUpdate::KIND_EXITED, 137, /*attempt=*/0);
  CHECK(h.core.cluster().Find("b")->accepts_jobs());
  h.Pass();
  CHECK(h.Sent("b", DaemonMessage::kLaunch).size() == 1);
  CHECK(h.core.FindActive(gang)->state() == v1::JOB_STATE_STARTING);
}

TEST_CASE("fencing: a fenced exit or a refusal for an earlier attempt requeues the job, never fails it") {
  CoreHarness h;
  h.AddNode("a", 4);
  uint64_t id = h.Submit(GpuJob(2));
  h.Pass();
  h.Report("a", id, JobUpdate::KIND_STARTED);
  v1::JobUpdate fenced;
  fenced.set_job_id(id);
  fenced.set_kind(JobUpdate::KIND_EXITED);
  fenced.set_exit_code(137);
  fenced.set_fenced(true);
  fenced.set_message("killed (fenced: no word from the daemon for 1m30s)");
  h.core.JobUpdate("a", fenced, h.fx);
  h.Pass();
  REQUIRE(h.core.FindActive(id) != nullptr);
  CHECK(h.core.FindActive(id)->attempt() == 1);
  CHECK(h.Persisted(id).state() != v1::JOB_STATE_FAILED);

  // Placed again on a, whose agent says attempt 1 of it is still stopping.
  h.Pass();
  REQUIRE(h.core.FindActive(id)->state() == v1::JOB_STATE_STARTING);
  v1::JobUpdate busy;
  busy.set_job_id(id);
  busy.set_attempt(1);
  busy.set_kind(JobUpdate::KIND_LAUNCH_FAILED);
  busy.set_earlier_attempt_running(true);
  busy.set_message("attempt 1 of this job is still stopping on a");
  h.core.JobUpdate("a", busy, h.fx);
  h.Pass();
  REQUIRE(h.core.FindActive(id) != nullptr);
  CHECK(h.core.FindActive(id)->attempt() == 2);
  // Not placed on a again until the agent says attempt 1 is gone.
  CHECK_FALSE(h.core.cluster().Find("a")->accepts_jobs());
  CHECK(h.core.FindActive(id)->state() == v1::JOB_STATE_PENDING);
  h.Report("a", id, JobUpdate::KIND_EXITED, 137, /*attempt=*/1);
  CHECK(h.core.cluster().Find("a")->accepts_jobs());
  h.Pass();
  REQUIRE(h.core.FindActive(id)->state() == v1::JOB_STATE_STARTING);

  // The same refusal without the flag is a launch failure: the job fails.
  v1::JobUpdate broken = busy;
  broken.set_attempt(2);
  broken.set_earlier_attempt_running(false);
  broken.set_message("exec \"x\": No such file or directory");
  h.Pass();
  h.core.JobUpdate("a", broken, h.fx);
  CHECK(h.StateOf(id) == v1::JOB_STATE_FAILED);
}

TEST_CASE("a policy blind to links refuses a strict gang over several nodes at submit, and takes one a node holds") {
  core::CoreOptions options = CoreHarness::Options();
  options.placement_policy = "best-fit";
  CoreHarness h(options);
  h.AddNode("a", 8);
  h.AddNode("b", 8);
  v1::JobSpec gang = GpuJob(16);
  gang.set_topology(v1::TOPOLOGY_MODE_STRICT);
  auto refused = h.core.Submit(gang, "", h.fx);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(refused.status().message()),
             Catch::StartsWith("topology: strict asks for the best links a gang over several nodes can get, but this "
                               "daemon's placement policy \"best-fit\" does not weigh links"));
  v1::JobSpec one_node = GpuJob(8);
  one_node.set_topology(v1::TOPOLOGY_MODE_STRICT);
  CHECK(h.core.Submit(one_node, "", h.fx).ok());
  gang.set_topology(v1::TOPOLOGY_MODE_PREFER);
  CHECK(h.core.Submit(gang, "", h.fx).ok());
}
