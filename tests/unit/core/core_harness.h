#pragma once

// Drives a SchedulerCore the way the daemon's scheduler thread does, with a
// manual clock, and keeps what it asked of the agents.

#include <string>
#include <vector>

#include "common/clock.h"
#include "daemon/core/scheduler_core.h"
#include "tests/unit/core/test_cluster.h"

namespace gpusched::core::testing {

class CoreHarness {
 public:
  CoreHarness() : core(clock, Options()) {}
  explicit CoreHarness(CoreOptions options) : core(clock, std::move(options)) {}

  static CoreOptions Options() {
    CoreOptions o;
    o.kill_grace = absl::Seconds(5);
    return o;
  }

  // A node whose agent registers `gpus` GPUs, shared the way `sharing` says
  // (agent gpu_share_mode).
  void AddNode(const std::string& name, int gpus, v1::GpuShareMode sharing = v1::GPU_SHARE_MODE_EXCLUSIVE) {
    v1::RegisterNode reg;
    *reg.mutable_node() = MakeNode(name, gpus);
    if (sharing != v1::GPU_SHARE_MODE_EXCLUSIVE) {
      for (v1::GpuInfo& gpu : *reg.mutable_node()->mutable_gpus()) gpu.set_share_mode(sharing);
    }
    v1::RegisterAck ack;
    core.AgentRegistered(reg, fx, ack);
  }

  uint64_t Submit(v1::JobSpec spec, const std::string& request_id = "") {
    auto outcome = core.Submit(std::move(spec), request_id, fx);
    REQUIRE(outcome.ok());
    return outcome->job_id;
  }

  // One pass, as the scheduler thread runs after each batch of commands.
  void Pass() {
    core.Tick(fx);
    core.Schedule(fx);
  }

  void Report(const std::string& node, uint64_t job, v1::JobUpdate::Kind kind, int exit_code = 0, int attempt = 0) {
    v1::JobUpdate update;
    update.set_job_id(job);
    update.set_attempt(attempt);
    update.set_kind(kind);
    update.set_exit_code(exit_code);
    update.set_log_dir("/logs/job-" + std::to_string(job));
    core.JobUpdate(node, update, fx);
  }

  // Every node of the job's gang reports it started, as their agents would.
  // The allocation is copied first: each report rewrites the persisted job.
  void StartOnAllNodes(uint64_t job, int attempt = 0) {
    const v1::Allocation allocation = Persisted(job).allocation();
    for (const auto& part : allocation.nodes()) Report(part.node(), job, v1::JobUpdate::KIND_STARTED, 0, attempt);
  }

  // Nodes "a" and "b" with 4 GPUs each, and a gang of `per_node` GPUs on both, RUNNING.
  uint64_t RunningGangOnAAndB(int per_node) {
    AddNode("a", 4);
    AddNode("b", 4);
    uint64_t id = Submit(GpuJob(0, 2, per_node));
    Pass();
    Report("a", id, v1::JobUpdate::KIND_STARTED);
    Report("b", id, v1::JobUpdate::KIND_STARTED);
    return id;
  }

  // The state the job would be persisted with (the latest write), or the
  // state of the array task its array's latest record stands for.
  v1::JobState StateOf(uint64_t job) const {
    auto it = fx.jobs.find(job);
    if (it == fx.jobs.end()) return ArrayTaskView(job).state();
    return it->second.state();
  }
  const v1::Job& Persisted(uint64_t job) const { return fx.jobs.at(job); }
  // The job as readers show it: persisted, or the array task its array's
  // latest record stands for.
  v1::Job Shown(uint64_t job) const {
    auto it = fx.jobs.find(job);
    return it == fx.jobs.end() ? ArrayTaskView(job) : it->second;
  }
  // An array task as readers show it from the array's latest record, while
  // the record stands for it (it is not a job yet).
  v1::Job ArrayTaskView(uint64_t job) const {
    for (const auto& [array_id, record] : fx.arrays) {
      if (!record.Covers(job)) continue;
      auto indices = ArrayRecordIndices(record);
      REQUIRE(indices.ok());
      const auto position = static_cast<int32_t>(job - array_id);
      return ArrayRecordTask(record, position, (*indices)[position]);
    }
    FAIL("job " << job << " is neither persisted nor stood for by an array record");
    return {};
  }

  // Messages of one kind sent to a node since the last Drain.
  std::vector<v1::DaemonMessage> Sent(const std::string& node, v1::DaemonMessage::KindCase kind) const {
    std::vector<v1::DaemonMessage> out;
    for (const auto& c : fx.agent_commands) {
      if (c.node == node && c.message.kind_case() == kind) out.push_back(c.message);
    }
    return out;
  }
  void Drain() { fx.agent_commands.clear(); }

  ManualClock clock{absl::FromUnixSeconds(1'700'000'000)};
  SchedulerCore core;
  Effects fx;
};

}  // namespace gpusched::core::testing
