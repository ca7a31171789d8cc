#include "daemon/metrics/pool_metrics.h"

#include <algorithm>

namespace gpusched::metrics {
namespace {

constexpr const char* kStateLabels[] = {"powered_down", "powering_up", "up", "powering_down", "not_responding", "down"};

// Cloud GPU nodes boot in one to fifteen minutes; bare metal over IPMI in
// five to twenty.
Histogram::BucketBoundaries BootBuckets() { return {5, 15, 30, 60, 120, 180, 300, 600, 900, 1200, 1800, 3600}; }

}  // namespace

PoolMetrics::PoolMetrics(Registry& registry)
    : nodes_(BuildGauge()
                 .Name("gpusched_pool_nodes")
                 .Help("Nodes of each elastic pool by power state")
                 .Register(registry)),
      gpus_(BuildGauge()
                .Name("gpusched_pool_gpus")
                .Help("GPUs of each elastic pool: paid (on nodes that are not powered down) and used (held by jobs)")
                .Register(registry)),
      resumes_(BuildCounter()
                   .Name("gpusched_pool_resumes_total")
                   .Help("Nodes the daemon resumed (each entry into POWERING_UP)")
                   .Register(registry)),
      resume_failures_(BuildCounter()
                           .Name("gpusched_pool_resume_failures_total")
                           .Help("Boots that went back to POWERED_DOWN: the resume program failed or timed out, or "
                                 "the node's agent did not register within resume_timeout")
                           .Register(registry)),
      suspends_(BuildCounter()
                    .Name("gpusched_pool_suspends_total")
                    .Help("Nodes the daemon suspended (each entry into POWERING_DOWN)")
                    .Register(registry)),
      suspend_failures_(BuildCounter()
                            .Name("gpusched_pool_suspend_failures_total")
                            .Help("Suspends that did not end POWERED_DOWN (the suspend program failed)")
                            .Register(registry)),
      boot_(BuildHistogram()
                .Name("gpusched_pool_boot_seconds")
                .Help("From a node's resume to its agent registering with its GPUs")
                .Register(registry)),
      interruptions_(BuildCounter()
                         .Name("gpusched_pool_interruptions_total")
                         .Help("Spot interruptions of the pool's nodes (gpusched nodes interrupt)")
                         .Register(registry)) {}

int PoolMetrics::StateIndex(v1::NodeState state) {
  switch (state) {
    case v1::NODE_STATE_POWERED_DOWN: return 0;
    case v1::NODE_STATE_POWERING_UP: return 1;
    case v1::NODE_STATE_UP: return 2;
    case v1::NODE_STATE_POWERING_DOWN: return 3;
    case v1::NODE_STATE_NOT_RESPONDING: return 4;
    default: return 5;
  }
}

PoolMetrics::Pool& PoolMetrics::PoolFor(const std::string& name) {
  auto [it, fresh] = pools_.try_emplace(name);
  Pool& p = it->second;
  if (fresh) {
    for (int i = 0; i < kStates; ++i) p.nodes[i] = &nodes_.Add({{"pool", name}, {"state", kStateLabels[i]}});
    p.paid = &gpus_.Add({{"pool", name}, {"state", "paid"}});
    p.used = &gpus_.Add({{"pool", name}, {"state", "used"}});
    p.resumes = &resumes_.Add({{"pool", name}});
    p.resume_failures = &resume_failures_.Add({{"pool", name}});
    p.suspends = &suspends_.Add({{"pool", name}});
    p.suspend_failures = &suspend_failures_.Add({{"pool", name}});
    p.boot = &boot_.Add({{"pool", name}}, BootBuckets());
    p.interruptions = &interruptions_.Add({{"pool", name}});
  }
  return p;
}

void PoolMetrics::Transition(const core::PowerTransition& t) {
  if (t.pool.empty() || t.from == t.to) return;
  Pool& pool = PoolFor(t.pool);
  if (t.to == v1::NODE_STATE_POWERING_UP) pool.resumes->Increment();
  if (t.to == v1::NODE_STATE_POWERING_DOWN) pool.suspends->Increment();
  if (t.from == v1::NODE_STATE_POWERING_UP && t.to == v1::NODE_STATE_POWERED_DOWN) pool.resume_failures->Increment();
  if (t.from == v1::NODE_STATE_POWERING_UP && t.to == v1::NODE_STATE_UP) {
    pool.boot->Observe(absl::ToDoubleSeconds(t.in_from));
  }
  if (t.from == v1::NODE_STATE_POWERING_DOWN && t.to != v1::NODE_STATE_POWERED_DOWN) pool.suspend_failures->Increment();
}

void PoolMetrics::Update(const v1::Node& node) {
  if (node.pool().empty()) return;
  Pool& pool = PoolFor(node.pool());
  auto [it, fresh] = tracked_.try_emplace(node.info().name());
  Tracked& t = it->second;
  t.pool = node.pool();
  const v1::NodeState state = node.state();
  if (!fresh && t.state != state) pool.nodes[StateIndex(t.state)]->Decrement();
  if (fresh || t.state != state) pool.nodes[StateIndex(state)]->Increment();
  t.state = state;
  // A notice for a node that had none; one restored with the daemon was
  // counted by the daemon before it.
  if (!fresh && !t.reclaim_due && node.has_reclaim_at()) pool.interruptions->Increment();
  t.reclaim_due = node.has_reclaim_at();
  const int64_t gpus = node.info().gpus_size();
  const int64_t paid = state == v1::NODE_STATE_POWERED_DOWN ? 0 : gpus;
  pool.paid->Increment(static_cast<double>(paid - t.paid));
  t.paid = paid;
  UpdateUsage(node.info().name(), gpus, node.gpus_free());
}

void PoolMetrics::UpdateUsage(const std::string& node, int64_t gpus_total, int64_t gpus_free) {
  auto it = tracked_.find(node);
  if (it == tracked_.end()) return;
  Tracked& t = it->second;
  const int64_t used = gpus_total - std::clamp<int64_t>(gpus_free, 0, gpus_total);
  PoolFor(t.pool).used->Increment(static_cast<double>(used - t.used));
  t.used = used;
}

}  // namespace gpusched::metrics
