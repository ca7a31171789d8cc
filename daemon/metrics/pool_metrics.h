#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>

#include "daemon/core/effects.h"
#include "daemon/metrics/registry.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::metrics {

// Elastic pools: the gauges kept from the rows of their nodes (v1::Node.pool
// set), the counters and boot times from the power transitions the core
// notes (Effects::power_transitions), which also hold the steps a batch's
// rows skip (a boot that failed and was retried at once).
//
//   gpusched_pool_nodes{pool, state}            nodes by state: powered_down,
//                                               powering_up, up, powering_down,
//                                               not_responding, down
//   gpusched_pool_gpus{pool, state}             paid: GPUs of nodes that are on
//                                               (not powered down); used: held by jobs
//   gpusched_pool_resumes_total{pool}           nodes resumed (entered POWERING_UP)
//   gpusched_pool_resume_failures_total{pool}   boots that went back to POWERED_DOWN
//                                               (program failed or timed out, or no
//                                               agent registered in time)
//   gpusched_pool_suspends_total{pool}          nodes suspended (entered POWERING_DOWN)
//   gpusched_pool_suspend_failures_total{pool}  suspends that did not end POWERED_DOWN
//   gpusched_pool_boot_seconds{pool}            resume started to agent registered
//   gpusched_pool_interruptions_total{pool}     spot interruptions (a node's row
//                                               gaining a reclaim_at)
class PoolMetrics {
 public:
  explicit PoolMetrics(Registry& registry);

  void Update(const v1::Node& node);
  void Transition(const core::PowerTransition& t);
  // A job started or ended on the node (Effects::node_usage): its used GPUs.
  void UpdateUsage(const std::string& node, int64_t gpus_total, int64_t gpus_free);

 private:
  static constexpr int kStates = 6;
  struct Pool {
    std::array<Gauge*, kStates> nodes{};
    Gauge* paid = nullptr;
    Gauge* used = nullptr;
    Counter* resumes = nullptr;
    Counter* resume_failures = nullptr;
    Counter* suspends = nullptr;
    Counter* suspend_failures = nullptr;
    Histogram* boot = nullptr;
    Counter* interruptions = nullptr;
  };
  struct Tracked {
    std::string pool;
    v1::NodeState state = v1::NODE_STATE_UNSPECIFIED;
    int64_t paid = 0;
    int64_t used = 0;
    bool reclaim_due = false;  // a spot interruption's deadline is set
  };
  static int StateIndex(v1::NodeState state);
  Pool& PoolFor(const std::string& name);

  Family<Gauge>& nodes_;
  Family<Gauge>& gpus_;
  Family<Counter>& resumes_;
  Family<Counter>& resume_failures_;
  Family<Counter>& suspends_;
  Family<Counter>& suspend_failures_;
  Family<Histogram>& boot_;
  Family<Counter>& interruptions_;
  std::map<std::string, Pool> pools_;
  std::map<std::string, Tracked> tracked_;
};

}  // namespace gpusched::metrics
