// Randomized runs with the queue policy in play: queues on disjoint nodes, a
// higher tier that preempts, a queue that demotes its long jobs for its fresh
// ones, arrays with a running limit, holds and
// dependencies, jobs with CPU and memory requests and time limits, the
// reservations backfill makes and run times learned as jobs end. After every
// step the accounting invariants hold (core_invariants.h) and so do the
// queue's own rules.

#include <catch2/catch.hpp>
#include <map>
#include <random>
#include <set>

#include "common/job_states.h"
#include "daemon/core/queue/attained_service.h"
#include "tests/unit/core/core_harness.h"
#include "tests/unit/core/core_invariants.h"

using namespace gpusched;
using core::testing::CheckInvariants;
using core::testing::CoreHarness;
using core::testing::GpuJob;

namespace {

core::CoreOptions ThreeQueues() {
  core::CoreOptions o = CoreHarness::Options();
  core::QueueSpec batch = core::QueueSpec::Named("batch");
  batch.nodes = "n[1-2]";
  // Its long jobs may be preempted by its fresh ones (within a run): 10 s
  // per GPU.
  batch.demote_after_s = 10;
  core::QueueSpec side = core::QueueSpec::Named("side");
  side.nodes = "n[3-4]";
  core::QueueSpec urgent = core::QueueSpec::Named("urgent", 1);  // every node; preempts the others
  o.queues.queues = {batch, side, urgent};
  REQUIRE(o.queues.Compile().ok());
  o.head_blocks_after = absl::Minutes(10);  // reached within a run, so the bound is exercised too
  return o;
}

// What the runs check beyond the accounting, from what the core shows.
void CheckQueueRules(const CoreHarness& h, const std::set<uint64_t>& ids) {
  std::map<uint64_t, int> placed_tasks;  // by array
  for (uint64_t id : ids) {
    const v1::Job* job = h.core.FindActive(id);
    if (job == nullptr) continue;
    INFO("job " << id << " " << v1::JobState_Name(job->state()) << ": " << job->reason());
    if (job->held()) CHECK(job->state() == v1::JOB_STATE_PENDING);
    if (job->stop_cause() == v1::STOP_CAUSE_DEMOTED) {
      CHECK(job->spec().queue() == "batch");
      // Stopped only once past its own threshold (10 s per GPU).
      static const core::QueuePolicy queues = ThreeQueues().queues;
      CHECK(core::AttainedService(*job, h.clock.Now()) >= core::DemoteAfter(*job, *queues.Find("batch")));
    }
    if (job->state() == v1::JOB_STATE_PENDING) continue;
    for (const auto& part : job->allocation().nodes()) {
      if (job->spec().queue() == "batch") CHECK((part.node() == "n1" || part.node() == "n2"));
      if (job->spec().queue() == "side") CHECK((part.node() == "n3" || part.node() == "n4"));
    }
    if (job->array().max_running() > 0) {
      CHECK(++placed_tasks[job->array().array_id()] <= job->array().max_running());
    }
    // Placed only once what it depends on has ended COMPLETED.
    for (const v1::Dependency& d : job->spec().dependencies()) {
      auto it = h.fx.jobs.find(d.job_id());
      REQUIRE(it != h.fx.jobs.end());
      CHECK(it->second.state() == v1::JOB_STATE_COMPLETED);
    }
  }
}

}  // namespace

TEST_CASE("random queues, tiers, arrays, holds and dependencies keep every resource accounted") {
  const uint32_t seed = GENERATE(11u, 12u, 13u, 14u, 15u, 16u);
  INFO("seed " << seed);
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  const char* const queues[] = {"batch", "side", "urgent"};

  CoreHarness h(ThreeQueues());
  const std::vector<std::pair<std::string, int>> nodes = {{"n1", 8}, {"n2", 8}, {"n3", 4}, {"n4", 4}};
  for (const auto& [name, gpus] : nodes) h.AddNode(name, gpus);
  std::set<uint64_t> ids;
  auto any_id = [&]() { return *std::next(ids.begin(), pick(static_cast<int>(ids.size()))); };

  for (int step = 0; step < 400; ++step) {
    h.Drain();
    switch (pick(10)) {
      case 0:
      case 1: {
        v1::JobSpec spec = pick(4) == 0 ? GpuJob(0, 2, 1 + pick(4)) : GpuJob(pick(10));
        spec.set_queue(queues[pick(3)]);
        spec.set_user(pick(2) == 0 ? "alice" : "bob");
        spec.set_name(pick(2) == 0 ? "train" : "eval");
        if (spec.resources().gpus() > 0) {
          spec.mutable_resources()->set_cpus_per_gpu(pick(9));
          spec.mutable_resources()->set_mem_per_gpu_mb(1024 * pick(9));
        } else {
          spec.mutable_resources()->set_cpus(1 + pick(16));
          spec.mutable_resources()->set_mem_mb(1024 * pick(64));
        }
        if (pick(2) == 0) spec.set_time_limit_s(30 + pick(300));
        if (pick(5) == 0) spec.set_hold(true);
        if (pick(4) == 0 && !ids.empty()) {
          v1::Dependency* d = spec.add_dependencies();
          d->set_kind(v1::DEPENDENCY_KIND_AFTER_OK);
          d->set_job_id(any_id());
        }
        const bool array = pick(5) == 0;
        auto outcome = array ? h.core.SubmitArray(spec, "0-5%2", "", h.fx) : h.core.Submit(spec, "", h.fx);
        if (outcome.ok()) {
          for (uint64_t id = outcome->job_id; id < outcome->job_id + (array ? 6 : 1); ++id) ids.insert(id);
        }
        break;
      }
      case 2:
      case 3:
      case 4: {  // progress for a random placed job on a random node of its gang
        std::vector<uint64_t> placed;
        for (uint64_t id : ids) {
          const v1::Job* job = h.core.FindActive(id);
          if (job != nullptr && job->allocation().nodes_size() > 0) placed.push_back(id);
        }
        if (placed.empty()) break;
        const uint64_t id = placed[static_cast<size_t>(pick(static_cast<int>(placed.size())))];
        const v1::Job* job = h.core.FindActive(id);
        const std::string node = job->allocation().nodes(pick(job->allocation().nodes_size())).node();
        const int attempt = job->attempt();
        const int what = pick(3);
        h.Report(node, id,
                 what == 0 ? v1::JobUpdate::KIND_STARTED
                           : (what == 1 ? v1::JobUpdate::KIND_EXITED : v1::JobUpdate::KIND_LAUNCH_FAILED),
                 pick(3) == 0 ? 1 : 0, attempt);
        break;
      }
      case 5: {
        if (ids.empty()) break;
        const uint64_t id = any_id();
        if (pick(2) == 0) {
          h.core.Hold(id, h.fx).IgnoreError();
        } else {
          h.core.Release(id, h.fx).IgnoreError();
        }
        break;
      }
      case 6: {
        if (ids.empty() || pick(3) != 0) break;
        h.core.Cancel(any_id(), "", h.fx).IgnoreError();
        break;
      }
      default:
        h.clock.Advance(absl::Seconds(pick(60)));
        for (const auto& [name, gpus] : nodes) h.core.AgentHeartbeat(name, h.fx);
        PlannedPass(h);
        break;
    }
    CheckInvariants(h, ids);
    CheckQueueRules(h, ids);
  }
}
