// The metrics are kept from Effects alone; this drives the real scheduling
// core through random submits, starts, exits, cancels and node failures and
// checks after every pass that they agree with what the core itself holds.
#include <catch2/catch.hpp>
#include <map>
#include <optional>
#include <random>
#include <vector>

#include "daemon/metrics/daemon_metrics.h"
#include "tests/unit/core/core_harness.h"
#include "tests/unit/metrics/metrics_test_util.h"

namespace gpusched::metrics {
namespace {

using core::testing::CoreHarness;
using core::testing::GpuJob;
using testing::Value;

TEST_CASE("job and GPU metrics agree with the core after every pass") {
  const uint32_t seed = GENERATE(1u, 2u, 3u, 4u);
  std::mt19937 rng(seed);
  CoreHarness h;
  DaemonMetrics m;
  const std::vector<std::string> names = {"a", "b", "c"};
  for (const std::string& name : names) h.AddNode(name, 4);
  std::vector<uint64_t> submitted;  // every job ever submitted

  auto pass = [&] {
    h.Pass();
    m.Apply(h.fx);
    h.fx = core::Effects();
  };
  // A copy: reports and cancels change (and may forget) the core's own.
  auto random_active = [&]() -> std::optional<v1::Job> {
    std::vector<const v1::Job*> active;
    for (uint64_t id : submitted) {
      if (const v1::Job* job = h.core.FindActive(id)) active.push_back(job);
    }
    if (active.empty()) return std::nullopt;
    return *active[std::uniform_int_distribution<size_t>(0, active.size() - 1)(rng)];
  };
  pass();

  for (int step = 0; step < 300; ++step) {
    const int action = std::uniform_int_distribution<int>(0, 10)(rng);
    const std::optional<v1::Job> job = random_active();
    if (action <= 3) {
      auto outcome = h.core.Submit(GpuJob(std::uniform_int_distribution<int>(1, 6)(rng)), "", h.fx);
      if (outcome.ok()) submitted.push_back(outcome->job_id);
    } else if (action <= 5 || action == 7) {
      // The agents report progress for a placed job on all of its nodes.
      if (job.has_value() && job->state() == v1::JOB_STATE_STARTING) {
        for (const auto& part : job->allocation().nodes())
          h.Report(part.node(), job->id(), v1::JobUpdate::KIND_STARTED);
      } else if (job.has_value() && job->state() == v1::JOB_STATE_RUNNING) {
        for (const auto& part : job->allocation().nodes()) {
          h.Report(part.node(), job->id(), v1::JobUpdate::KIND_EXITED, action == 7 ? 1 : 0);
        }
      }
    } else if (action == 6) {
      // A job already being stopped may refuse; either way the books must agree.
      if (job.has_value()) static_cast<void>(h.core.Cancel(job->id(), "test", h.fx));
    } else if (action == 8) {
      // One node goes silent past node_down_after; the others keep beating.
      const std::string& lost = names[std::uniform_int_distribution<size_t>(0, names.size() - 1)(rng)];
      h.core.AgentDisconnected(lost, h.fx);
      h.clock.Advance(absl::Minutes(5));
      for (const std::string& name : names) {
        if (name != lost) h.core.AgentHeartbeat(name, h.fx);
      }
    } else if (action == 9) {
      for (const std::string& name : names) h.AddNode(name, 4);  // agents (re)register
    } else {
      // An operator drains a node, or resumes it.
      const std::string& node = names[std::uniform_int_distribution<size_t>(0, names.size() - 1)(rng)];
      if (h.core.cluster().Find(node)->drain_reason.empty()) {
        static_cast<void>(h.core.DrainNode(node, "maintenance", h.fx));
      } else {
        static_cast<void>(h.core.ResumeNode(node, h.fx));
      }
    }
    pass();

    INFO("seed " << seed << " step " << step << " action " << action);
    // Jobs: what the core still holds, by state; every job ever submitted is
    // either still held or counted as finished.
    std::map<v1::JobState, int> active;
    for (uint64_t id : submitted) {
      if (const v1::Job* held = h.core.FindActive(id)) ++active[held->state()];
    }
    double in_queue = 0;
    for (v1::JobState state : {v1::JOB_STATE_PENDING, v1::JOB_STATE_STARTING, v1::JOB_STATE_RUNNING}) {
      const double depth = Value(*m.registry(), "gpusched_jobs", {{"state", StateLabel(state)}, {"queue", "default"}});
      CHECK(depth == active[state]);
      in_queue += depth;
    }
    double finished = 0;
    for (const auto& sample : gpusched::testing::ParseMetricsText(testing::Scrape(*m.registry()))) {
      if (sample.name == "gpusched_jobs_finished_total") finished += sample.value;
    }
    CHECK(Value(*m.registry(), "gpusched_jobs_submitted_total", {{"queue", "default"}}) ==
          static_cast<double>(submitted.size()));
    CHECK(in_queue + finished == static_cast<double>(submitted.size()));

    // GPUs: the core's own node views.
    double allocated = 0, free = 0, down = 0, drained = 0;
    for (const v1::Node& node : h.core.Nodes()) {
      allocated += static_cast<double>(node.info().gpus_size() - node.gpus_free());
      double& bucket = node.state() != v1::NODE_STATE_UP ? down : node.drain_reason().empty() ? free : drained;
      bucket += static_cast<double>(node.gpus_free());
    }
    CHECK(Value(*m.registry(), "gpusched_gpus", {{"state", "drained"}}) == drained);
    CHECK(Value(*m.registry(), "gpusched_gpus", {{"state", "allocated"}}) == allocated);
    CHECK(Value(*m.registry(), "gpusched_gpus", {{"state", "free"}}) == free);
    CHECK(Value(*m.registry(), "gpusched_gpus", {{"state", "down"}}) == down);
  }
}

}  // namespace
}  // namespace gpusched::metrics
