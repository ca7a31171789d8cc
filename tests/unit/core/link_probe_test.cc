// The daemon's side of the NCCL probe: link calibrations drain and undrain
// nodes and steer placement; a failed gang preflight drains the node and
// sends the job back to the queue.
#include <catch2/catch.hpp>

#include "daemon/core/probe_verdict.h"
#include "tests/unit/core/core_harness.h"

namespace gpusched::core::testing {
namespace {

// Four H100s with no known links: every pair SYS, estimated at 32.5 GB/s
// (Gen5 PCIe 50 GB/s x 0.65).
constexpr double kSysEstimate = 32.5;

v1::NodeProbe Calibration(int gpus, double busbw, int slow_a = -1, int slow_b = -1, double slow_busbw = 0) {
  v1::NodeProbe probe;
  probe.set_nccl_version("2.21.5");
  for (int a = 0; a < gpus; ++a) {
    for (int b = a + 1; b < gpus; ++b) {
      v1::GpuPairBandwidth* pair = probe.add_pairs();
      pair->set_gpu_a(a);
      pair->set_gpu_b(b);
      pair->set_busbw_gbps(a == slow_a && b == slow_b ? slow_busbw : busbw);
    }
  }
  return probe;
}

topology::NodeTopology H100s(int gpus) {
  topology::NodeTopology topo(gpus, 0);
  for (auto& gpu : topo.gpus()) gpu.model = "NVIDIA H100 80GB HBM3";
  return topo;
}

const NodeSlot& Slot(const CoreHarness& h, const std::string& name) { return *h.core.cluster().Find(name); }

// Nodes a and b of 4 GPUs, and a gang of `per_node` GPUs on each with a
// preflight and --requeue no, placed.
uint64_t PreflightGangOnAAndB(CoreHarness& h, int per_node) {
  h.AddNode("a", 4);
  h.AddNode("b", 4);
  v1::JobSpec spec = GpuJob(2 * per_node, 2, per_node);
  spec.set_preflight(true);
  spec.set_requeue(false);
  const uint64_t job = h.Submit(spec);
  h.Pass();
  return job;
}

TEST_CASE("CalibrationFailure names the worst pair below the threshold, against the daemon's own estimate") {
  const topology::NodeTopology topo = H100s(4);
  v1::NodeProbe healthy = Calibration(4, 28);
  CHECK(CalibrationFailure(topo, healthy, 0.5) == "");

  v1::NodeProbe slow = Calibration(4, 28, 1, 2, 5);
  slow.mutable_pairs(0)->set_busbw_gbps(15);        // 0-1 is below half too, but less so than 1-2
  slow.mutable_pairs(0)->set_estimated_gbps(1000);  // what the agent claims does not count
  CHECK(CalibrationFailure(topo, slow, 0.5) == "GPUs 1-2 (SYS) measured 5.0 GB/s, below 50% of the 32.5 GB/s estimate");
  CHECK(CalibrationFailure(topo, slow, 0) == "");  // comparisons off

  v1::NodeProbe failed;
  failed.set_error("GPUs 0-3: ncclCommInitAll: unhandled cuda error");
  CHECK(CalibrationFailure(topo, failed, 0) ==
        "the link calibration failed: GPUs 0-3: ncclCommInitAll: unhandled cuda error");

  v1::NodeProbe none;
  none.set_unavailable("no NCCL probe configured (--nccl-probe)");
  CHECK(CalibrationFailure(topo, none, 0.5) == "");

  // Figures for GPUs the node does not have are stale, not a verdict.
  v1::NodeProbe stale = Calibration(6, 28, 4, 5, 1);
  CHECK(CalibrationFailure(topo, stale, 0.5) == "");
}

TEST_CASE("PreflightFor asks for a share of the ring estimate of the node's GPUs, and nothing for one GPU") {
  const topology::NodeTopology topo = H100s(4);
  v1::NodeAllocation part;
  part.add_gpu_indices(2);
  CHECK_FALSE(PreflightFor(topo, part, 0.5).has_value());
  part.add_gpu_indices(3);
  part.add_gpu_indices(0);
  auto preflight = PreflightFor(topo, part, 0.5);
  REQUIRE(preflight.has_value());
  CHECK(preflight->expected_busbw_gbps() == Approx(kSysEstimate));
  CHECK(preflight->min_busbw_gbps() == Approx(kSysEstimate / 2));
}

TEST_CASE("An agent calibrating on start keeps its node from jobs until the figures are in") {
  CoreHarness h;
  v1::RegisterNode reg;
  *reg.mutable_node() = MakeNode("a", 4);
  reg.set_probe_pending(true);
  v1::RegisterAck ack;
  h.core.AgentRegistered(reg, h.fx, ack);
  CHECK(Slot(h, "a").drain_reason == "NCCL probe: measuring links (the agent calibrates them as it starts)");
  uint64_t job = h.Submit(GpuJob(2));
  h.Pass();
  CHECK(h.StateOf(job) == v1::JOB_STATE_PENDING);

  h.core.NodeProbed("a", Calibration(4, 28), h.fx);
  CHECK(Slot(h, "a").drain_reason.empty());
  CHECK(h.fx.nodes.at("a").info().probe().pairs_size() == 6);  // persisted with the node
  h.Pass();
  CHECK(h.StateOf(job) == v1::JOB_STATE_STARTING);
}

TEST_CASE("A calibration far below the link class drains the node; one that passes lifts only the probe's drain") {
  CoreHarness h;
  h.AddNode("a", 4);
  h.core.NodeProbed("a", Calibration(4, 28, 0, 3, 4), h.fx);
  CHECK(Slot(h, "a").drain_reason ==
        "NCCL probe: GPUs 0-3 (SYS) measured 4.0 GB/s, below 50% of the 32.5 GB/s estimate");

  // Its agent reconnects with the same figures: still drained.
  v1::RegisterNode reg;
  *reg.mutable_node() = MakeNode("a", 4);
  *reg.mutable_node()->mutable_probe() = Calibration(4, 28, 0, 3, 4);
  v1::RegisterAck ack;
  h.core.AgentRegistered(reg, h.fx, ack);
  CHECK_FALSE(Slot(h, "a").drain_reason.empty());

  h.core.NodeProbed("a", Calibration(4, 28), h.fx);
  CHECK(Slot(h, "a").drain_reason.empty());

  // An operator's drain is the operator's to lift.
  REQUIRE(h.core.DrainNode("a", "replace GPU 3", h.fx).ok());
  h.core.NodeProbed("a", Calibration(4, 28, 0, 3, 4), h.fx);
  CHECK(Slot(h, "a").drain_reason == "replace GPU 3");
  h.core.NodeProbed("a", Calibration(4, 28), h.fx);
  CHECK(Slot(h, "a").drain_reason == "replace GPU 3");
  CHECK(Slot(h, "a").drain_kind == v1::DRAIN_KIND_OPERATOR);
}

TEST_CASE("Who drained a node is its drain kind, not its text: an operator's drain that reads like the probe's stays") {
  CoreHarness h;
  h.AddNode("a", 4);
  REQUIRE(h.core.DrainNode("a", "NCCL probe: I am checking this one myself", h.fx).ok());
  h.core.NodeProbed("a", Calibration(4, 28), h.fx);  // a calibration that passes
  CHECK(Slot(h, "a").drain_reason == "NCCL probe: I am checking this one myself");
  CHECK(Slot(h, "a").drain_kind == v1::DRAIN_KIND_OPERATOR);
  CHECK(h.fx.nodes.at("a").drain_kind() == v1::DRAIN_KIND_OPERATOR);  // persisted with the row

  // Rows stored before drains had a kind are read by their text, once.
  v1::Node legacy_probe = h.fx.nodes.at("a");
  legacy_probe.clear_drain_kind();
  legacy_probe.set_drain_reason("NCCL probe: GPUs 0-3 (SYS) measured 4.0 GB/s, below 50% of the 32.5 GB/s estimate");
  legacy_probe.mutable_info()->set_name("old-probe");
  v1::Node legacy_operator = legacy_probe;
  legacy_operator.set_drain_reason("bad fan");
  legacy_operator.mutable_info()->set_name("old-operator");
  CoreHarness after;
  after.core.Restore({}, {legacy_probe, legacy_operator}, 0, {});
  CHECK(Slot(after, "old-probe").drain_kind == v1::DRAIN_KIND_LINK_PROBE);
  CHECK(Slot(after, "old-operator").drain_kind == v1::DRAIN_KIND_OPERATOR);
}

TEST_CASE("gpusched nodes probe: only an idle, up node; the agent is asked and the node held until it answers") {
  CoreHarness h;
  h.AddNode("a", 4);
  CHECK(h.core.ProbeNode("zz", h.fx).status().code() == absl::StatusCode::kNotFound);
  uint64_t job = h.Submit(GpuJob(2));
  h.Pass();
  auto busy = h.core.ProbeNode("a", h.fx);
  CHECK(busy.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(std::string(busy.status().message()).find("runs job(s) " + std::to_string(job)) != std::string::npos);
  h.Report("a", job, v1::JobUpdate::KIND_STARTED);
  h.Report("a", job, v1::JobUpdate::KIND_EXITED);
  h.Drain();

  auto node = h.core.ProbeNode("a", h.fx);
  REQUIRE(node.ok());
  CHECK(node->drain_reason() == "NCCL probe: measuring links (gpusched nodes probe)");
  CHECK(h.Sent("a", v1::DaemonMessage::kProbe).size() == 1);
  v1::NodeProbe none;
  none.set_unavailable("no NCCL probe configured (--nccl-probe)");
  h.core.NodeProbed("a", none, h.fx);
  CHECK(Slot(h, "a").drain_reason.empty());

  h.core.AgentDisconnected("a", h.fx);
  CHECK(h.core.ProbeNode("a", h.fx).status().code() == absl::StatusCode::kFailedPrecondition);
}

TEST_CASE("Placement counts a pair measured slower than its siblings at its share of them") {
  CoreHarness h;
  h.AddNode("a", 4);
  // Every pair alike on paper; measured, 0-1 is slower than the rest (but
  // above the drain threshold): a 2-GPU job gets another pair, which counts
  // at the estimate (28 GB/s is as good as this class measures here).
  h.core.NodeProbed("a", Calibration(4, 28, 0, 1, 20), h.fx);
  REQUIRE(Slot(h, "a").drain_reason.empty());
  uint64_t job = h.Submit(GpuJob(2));
  h.Pass();
  const v1::Allocation& alloc = h.Persisted(job).allocation();
  REQUIRE(alloc.nodes_size() == 1);
  std::vector<int> gpus(alloc.nodes(0).gpu_indices().begin(), alloc.nodes(0).gpu_indices().end());
  std::sort(gpus.begin(), gpus.end());
  CHECK(gpus != std::vector<int>{0, 1});
  CHECK(alloc.est_bus_bandwidth_gbps() == Approx(kSysEstimate));
}

TEST_CASE("A failed preflight drains the node and requeues the job, whatever its requeue setting") {
  CoreHarness h;
  h.AddNode("a", 4);
  h.AddNode("b", 4);
  REQUIRE(h.core.DrainNode("b", "maintenance", h.fx).ok());
  v1::JobSpec spec = GpuJob(2);
  spec.set_preflight(true);
  spec.set_requeue(false);
  uint64_t job = h.Submit(spec);
  h.Pass();
  auto launches = h.Sent("a", v1::DaemonMessage::kLaunch);
  REQUIRE(launches.size() == 1);
  REQUIRE(launches[0].launch().has_preflight());
  CHECK(launches[0].launch().preflight().min_busbw_gbps() == Approx(kSysEstimate / 2));

  v1::JobUpdate failed;
  failed.set_job_id(job);
  failed.set_kind(v1::JobUpdate::KIND_PREFLIGHT_FAILED);
  failed.set_message("NCCL all-reduce over GPUs 0,1: 3.0 GB/s bus bandwidth, below the 16.2 GB/s needed");
  failed.set_preflight_busbw_gbps(3);
  h.core.JobUpdate("a", failed, h.fx);
  CHECK(Slot(h, "a").drain_reason ==
        "NCCL preflight: job " + std::to_string(job) +
            ": NCCL all-reduce over GPUs 0,1: 3.0 GB/s bus bandwidth, below the 16.2 GB/s needed");
  CHECK(h.StateOf(job) == v1::JOB_STATE_PENDING);
  CHECK(h.Persisted(job).attempt() == 1);
  CHECK(h.Persisted(job).reason().find("requeued for attempt 2: preflight failed on a: NCCL all-reduce") == 0);

  REQUIRE(h.core.ResumeNode("b", h.fx).ok());
  h.Drain();
  h.Pass();
  REQUIRE(h.Sent("b", v1::DaemonMessage::kLaunch).size() == 1);
  v1::JobUpdate started;
  started.set_job_id(job);
  started.set_attempt(1);
  started.set_kind(v1::JobUpdate::KIND_STARTED);
  started.set_preflight_busbw_gbps(27.5);
  h.core.JobUpdate("b", started, h.fx);
  CHECK(h.StateOf(job) == v1::JOB_STATE_RUNNING);
  CHECK(h.Persisted(job).allocation().nodes(0).preflight_busbw_gbps() == Approx(27.5));
}

TEST_CASE("A gang stopping for a failed preflight, stored before stop causes, is still requeued after a restart") {
  CoreHarness h;
  const uint64_t job = PreflightGangOnAAndB(h, 2);
  v1::JobUpdate failed;
  failed.set_job_id(job);
  failed.set_kind(v1::JobUpdate::KIND_PREFLIGHT_FAILED);
  failed.set_message("NCCL all-reduce over GPUs 0,1: 3.0 GB/s bus bandwidth, below the 16.2 GB/s needed");
  h.core.JobUpdate("a", failed, h.fx);
  v1::Job stopping = h.Persisted(job);
  REQUIRE(stopping.stopping_as() != v1::JOB_STATE_UNSPECIFIED);  // b's part is still being stopped
  CHECK(stopping.stop_cause() == v1::STOP_CAUSE_PREFLIGHT_FAILED);
  CHECK(stopping.reason().rfind("preflight failed on a: ", 0) == 0);
  // As an older daemon stored it: the cause only in the reason's words.
  stopping.clear_stop_cause();
  stopping.set_reason("stopping: " + stopping.reason());
  std::vector<v1::Node> rows;
  for (const auto& [name, row] : h.fx.nodes) rows.push_back(row);

  CoreHarness after;
  after.core.Restore({stopping}, rows, job, {});
  const v1::Job* restored = after.core.FindActive(job);
  REQUIRE(restored != nullptr);
  CHECK(restored->stop_cause() == v1::STOP_CAUSE_PREFLIGHT_FAILED);
  CHECK(restored->reason().rfind("preflight failed on a: ", 0) == 0);
  // Each node's agent says its part is gone.
  after.Report("a", job, v1::JobUpdate::KIND_EXITED, 143);
  after.Report("b", job, v1::JobUpdate::KIND_EXITED, 143);
  CHECK(after.StateOf(job) == v1::JOB_STATE_PENDING);  // requeued despite --requeue no
}

TEST_CASE("A job without preflight is launched without one; a queue can ask for it") {
  CoreOptions options = CoreHarness::Options();
  options.queues = QueuePolicy::Default();
  options.queues.queues.front().preflight = true;
  CoreHarness h(options);
  h.AddNode("a", 4);
  uint64_t job = h.Submit(GpuJob(2));
  CHECK(h.Persisted(job).spec().preflight());
  h.Pass();
  REQUIRE(h.Sent("a", v1::DaemonMessage::kLaunch).size() == 1);
  CHECK(h.Sent("a", v1::DaemonMessage::kLaunch)[0].launch().has_preflight());

  CoreHarness plain;
  plain.AddNode("a", 4);
  plain.Submit(GpuJob(2));
  plain.Pass();
  CHECK_FALSE(plain.Sent("a", v1::DaemonMessage::kLaunch)[0].launch().has_preflight());
}

}  // namespace
}  // namespace gpusched::core::testing

namespace gpusched::core::testing {
namespace {

TEST_CASE(
    "A calibration is judged once: the same one again neither re-drains a resumed node nor lifts a preflight's drain") {
  CoreHarness h;
  h.AddNode("a", 4);
  v1::NodeProbe slow = Calibration(4, 28, 0, 3, 4);
  h.core.NodeProbed("a", slow, h.fx);
  REQUIRE_FALSE(Slot(h, "a").drain_reason.empty());
  REQUIRE(h.core.ResumeNode("a", h.fx).ok());  // the operator knows better

  v1::RegisterNode reg;
  *reg.mutable_node() = MakeNode("a", 4);
  *reg.mutable_node()->mutable_probe() = slow;  // the agent's last calibration, again
  v1::RegisterAck ack;
  h.core.AgentRegistered(reg, h.fx, ack);
  CHECK(Slot(h, "a").drain_reason.empty());
  CHECK(Slot(h, "a").info.probe().pairs_size() == 6);  // kept

  v1::NodeProbe healthy = Calibration(4, 28);
  healthy.mutable_time()->set_seconds(100);
  h.core.NodeProbed("a", healthy, h.fx);
  v1::JobSpec spec = GpuJob(2);
  spec.set_preflight(true);
  uint64_t job = h.Submit(spec);
  h.Pass();
  v1::JobUpdate failed;
  failed.set_job_id(job);
  failed.set_kind(v1::JobUpdate::KIND_PREFLIGHT_FAILED);
  failed.set_message("NCCL all-reduce over GPUs 0,1 failed: NCCL error");
  h.core.JobUpdate("a", failed, h.fx);
  const std::string preflight_drain = Slot(h, "a").drain_reason;
  CHECK(preflight_drain.find("NCCL preflight: job ") == 0);
  *reg.mutable_node()->mutable_probe() = healthy;
  h.core.AgentRegistered(reg, h.fx, ack);  // carrying the calibration already judged
  CHECK(Slot(h, "a").drain_reason == preflight_drain);

  // A new calibration that passes is new evidence.
  healthy.mutable_time()->set_seconds(200);
  h.core.NodeProbed("a", healthy, h.fx);
  CHECK(Slot(h, "a").drain_reason.empty());
}

TEST_CASE("A preflight failure after another node of the gang started leaves the requeue to the job's setting") {
  CoreHarness h;
  const uint64_t job = PreflightGangOnAAndB(h, 4);
  h.Report("a", job, v1::JobUpdate::KIND_STARTED);
  v1::JobUpdate failed;
  failed.set_job_id(job);
  failed.set_kind(v1::JobUpdate::KIND_PREFLIGHT_FAILED);
  failed.set_message("NCCL all-reduce over GPUs 0,1,2,3: 3.0 GB/s bus bandwidth, below the 16.2 GB/s needed");
  h.core.JobUpdate("b", failed, h.fx);
  h.Report("a", job, v1::JobUpdate::KIND_EXITED, 143);
  CHECK(h.StateOf(job) == v1::JOB_STATE_NODE_FAIL);
  CHECK(h.Persisted(job).reason().find("preflight failed on b: ") == 0);
}

TEST_CASE("A start reported for an attempt given up on is answered with a kill of that attempt") {
  CoreHarness h;
  uint64_t job = h.RunningGangOnAAndB(2);
  h.clock.Advance(absl::Minutes(3));
  h.Pass();  // both silent, so DOWN: the gang is given up on and requeued as attempt 1
  REQUIRE(h.Persisted(job).attempt() == 1);
  h.Drain();
  h.Report("b", job, v1::JobUpdate::KIND_STARTED, 0, /*attempt=*/0);  // nothing new for the current attempt
  h.Report("b", 999, v1::JobUpdate::KIND_STARTED);                    // and an unknown job
  auto kills = h.Sent("b", v1::DaemonMessage::kKill);
  REQUIRE(kills.size() == 2);
  CHECK(kills[0].kill().job_id() == job);
  CHECK(kills[0].kill().attempt() == 0);
  CHECK(kills[1].kill().job_id() == 999);
}

}  // namespace
}  // namespace gpusched::core::testing
