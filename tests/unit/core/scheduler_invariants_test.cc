// Randomized runs of the core against invariants that must hold after every
// step, whatever the order of submits, cancels, exits and agent churn.

#include <catch2/catch.hpp>
#include <map>
#include <random>
#include <set>

#include "common/job_states.h"
#include "common/proto_time.h"
#include "tests/unit/core/core_harness.h"
#include "tests/unit/core/core_invariants.h"

using namespace gpusched;
using core::testing::CheckInvariants;
using core::testing::CoreHarness;
using core::testing::GpuJob;

TEST_CASE("random submit/cancel/exit/churn never double-books a GPU or splits a gang") {
  const uint32_t seed = GENERATE(1u, 2u, 3u, 4u, 5u, 6u, 7u, 8u);
  INFO("seed " << seed);
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };

  CoreHarness h;
  const std::vector<std::pair<std::string, int>> nodes = {{"n1", 8}, {"n2", 8}, {"n3", 4}, {"n4", 2}};
  for (const auto& [name, gpus] : nodes) h.AddNode(name, gpus);
  std::set<uint64_t> ids;

  for (int step = 0; step < 400; ++step) {
    h.Drain();
    switch (pick(8)) {
      case 0:
      case 1: {
        v1::JobSpec spec = pick(3) == 0 ? GpuJob(0, 2, 1 + pick(4)) : GpuJob(pick(12));
        if (pick(2) == 0) spec.set_time_limit_s(30 + pick(120));
        spec.set_priority(pick(3));
        auto outcome = h.core.Submit(spec, "", h.fx);
        if (outcome.ok()) ids.insert(outcome->job_id);
        break;
      }
      case 2: {  // report progress for a random placed job on a random node of its gang
        if (ids.empty()) break;
        uint64_t id = *std::next(ids.begin(), pick(static_cast<int>(ids.size())));
        const v1::Job* job = h.core.FindActive(id);
        if (job == nullptr || job->allocation().nodes_size() == 0) break;
        const std::string node = job->allocation().nodes(pick(job->allocation().nodes_size())).node();
        const int what = pick(3);
        h.Report(node, id,
                 what == 0 ? v1::JobUpdate::KIND_STARTED
                           : (what == 1 ? v1::JobUpdate::KIND_EXITED : v1::JobUpdate::KIND_LAUNCH_FAILED),
                 pick(2));
        break;
      }
      case 3: {
        if (ids.empty()) break;
        uint64_t id = *std::next(ids.begin(), pick(static_cast<int>(ids.size())));
        h.core.Cancel(id, "", h.fx).IgnoreError();
        break;
      }
      case 4: {  // an agent drops and comes back, having lost or kept its jobs
        const auto& [name, gpus] = nodes[pick(static_cast<int>(nodes.size()))];
        h.core.AgentDisconnected(name, h.fx);
        v1::RegisterNode reg;
        *reg.mutable_node() = core::testing::MakeNode(name, gpus);
        if (pick(2) == 0) {
          for (uint64_t id : ids) {
            const v1::Job* job = h.core.FindActive(id);
            if (job != nullptr && job->state() != v1::JOB_STATE_PENDING) reg.add_running_job_ids(id);
          }
        }
        v1::RegisterAck ack;
        h.core.AgentRegistered(reg, h.fx, ack);
        break;
      }
      default:
        // Time passes; most nodes heartbeat, now and then one stays silent
        // long enough to be NOT_RESPONDING or DOWN.
        h.clock.Advance(absl::Seconds(pick(40)));
        for (const auto& [name, gpus] : nodes) {
          if (pick(6) != 0) h.core.AgentHeartbeat(name, h.fx);
        }
        PlannedPass(h);
        break;
    }
    CheckInvariants(h, ids);
  }
}
