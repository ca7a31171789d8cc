#pragma once

// Elastic pools for core stories: pools of fake nodes, their power
// requests, and time passing with heartbeats and passes.
#include <algorithm>
#include <string>
#include <vector>

#include "tests/unit/core/core_harness.h"

namespace gpusched::core::testing {

inline PoolSpec Pool(const std::string& name, PoolClass pool_class, double cost, std::vector<std::string> nodes,
                     int gpus = 8) {
  PoolSpec p;
  p.name = name;
  p.pool_class = pool_class;
  p.cost_per_gpu_hour = cost;
  p.nodes = std::move(nodes);
  p.max_nodes = static_cast<int>(p.nodes.size());
  p.resume_program = "/opt/resume";
  p.suspend_program = pool_class == PoolClass::kReserved ? "" : "/opt/suspend";
  p.resume_timeout = absl::Minutes(10);
  p.idle_before_suspend = absl::Minutes(5);
  p.shape = MakeNode("shape", gpus);
  return p;
}

inline CoreOptions WithPools(std::vector<PoolSpec> pools) {
  CoreOptions o = CoreHarness::Options();
  o.pools = std::move(pools);
  return o;
}

inline std::vector<PowerRequest> Requests(CoreHarness& h, PowerRequest::Kind kind) {
  std::vector<PowerRequest> out;
  for (const PowerRequest& r : h.fx.power_requests) {
    if (r.kind == kind) out.push_back(r);
  }
  return out;
}

inline v1::NodeState StateOf(CoreHarness& h, const std::string& node) { return h.core.FindNode(node)->state(); }

inline void Register(CoreHarness& h, const std::string& name, int gpus = 8) { h.AddNode(name, gpus); }

// Time passes as on a live daemon: the agents of `alive` heartbeat and a
// pass runs every 30 s.
inline void Wait(CoreHarness& h, absl::Duration d, const std::vector<std::string>& alive) {
  for (absl::Duration left = d; left > absl::ZeroDuration(); left -= absl::Seconds(30)) {
    h.clock.Advance(std::min(left, absl::Seconds(30)));
    for (const std::string& n : alive) h.core.AgentHeartbeat(n, h.fx);
    h.Pass();
  }
}

}  // namespace gpusched::core::testing
