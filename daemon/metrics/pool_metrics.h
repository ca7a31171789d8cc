#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>

#include "daemon/core/effects.h"
#include "gpusched/v1/types.pb.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

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
  explicit PoolMetrics(prometheus::Registry& registry);

  void Update(const v1::Node& node);
  void Transition(const core::PowerTransition& t);
  // A job started or ended on the node (Effects::node_usage): its used GPUs.
  void UpdateUsage(const std::string& node, int64_t gpus_total, int64_t gpus_free);

 private:
  static constexpr int kStates = 6;
  struct Pool {
    std::array<prometheus::Gauge*, kStates> nodes{};
    prometheus::Gauge* paid = nullptr;
    prometheus::Gauge* used = nullptr;
    prometheus::Counter* resumes = nullptr;
    prometheus::Counter* resume_failures = nullptr;
    prometheus::Counter* suspends = nullptr;
    prometheus::Counter* suspend_failures = nullptr;
    prometheus::Histogram* boot = nullptr;
    prometheus::Counter* interruptions = nullptr;
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

  prometheus::Family<prometheus::Gauge>& nodes_;
  prometheus::Family<prometheus::Gauge>& gpus_;
  prometheus::Family<prometheus::Counter>& resumes_;
  prometheus::Family<prometheus::Counter>& resume_failures_;
  prometheus::Family<prometheus::Counter>& suspends_;
  prometheus::Family<prometheus::Counter>& suspend_failures_;
  prometheus::Family<prometheus::Histogram>& boot_;
  prometheus::Family<prometheus::Counter>& interruptions_;
  std::map<std::string, Pool> pools_;
  std::map<std::string, Tracked> tracked_;
};

}  // namespace gpusched::metrics
