#include "daemon/metrics/node_metrics.h"

#include <algorithm>

#include "common/job_states.h"

namespace gpusched::metrics {
namespace {

constexpr const char* kStateLabels[] = {"up", "not_responding", "down", "powered_down", "powering_up", "powering_down"};
constexpr const char* kGpuLabels[] = {"allocated", "free", "down", "drained", "powered_down"};

}  // namespace

NodeMetrics::NodeMetrics(Registry& registry)
    : node_state_(BuildGauge()
                      .Name("gpusched_node_state")
                      .Help("1 for the state each node is in (up, not_responding, down, powered_down, powering_up, "
                            "powering_down), 0 for the others")
                      .Register(registry)),
      gpu_part_(BuildGauge()
                    .Name("gpusched_gpu_part")
                    .Help("The part of a GPU a job holds without holding it whole: a share (kind=share) or a MIG "
                          "instance (kind=mig, its compute slices of seven)")
                    .Register(registry)) {
  auto& nodes = BuildGauge()
                    .Name("gpusched_nodes")
                    .Help(
                        "Registered nodes by state (up, not_responding, down; powered_down, powering_up, powering_down "
                        "for pool nodes)")
                    .Register(registry);
  for (int i = 0; i < kStates; ++i) nodes_[i] = &nodes.Add({{"state", kStateLabels[i]}});
  auto& gpus = BuildGauge()
                   .Name("gpusched_gpus")
                   .Help(
                       "GPUs of registered nodes: allocated to jobs, free on up nodes, down (unallocated on a "
                       "node that is not up), drained (unallocated on an up node an operator drained), or "
                       "powered_down (unallocated on an elastic pool's node that is off or changing power)")
                   .Register(registry);
  for (int i = 0; i < kGpuStates; ++i) gpus_[i] = &gpus.Add({{"state", kGpuLabels[i]}});
}

int NodeMetrics::StateIndex(v1::NodeState state) {
  switch (state) {
    case v1::NODE_STATE_UP: return 0;
    case v1::NODE_STATE_NOT_RESPONDING: return 1;
    case v1::NODE_STATE_POWERED_DOWN: return 3;
    case v1::NODE_STATE_POWERING_UP: return 4;
    case v1::NODE_STATE_POWERING_DOWN: return 5;
    default: return 2;
  }
}

std::array<int64_t, NodeMetrics::kGpuStates> NodeMetrics::CountGpus(const core::NodeUsage& usage) {
  const int64_t total = usage.gpus_total;
  const int64_t free = std::clamp<int64_t>(usage.gpus_free, 0, total);
  std::array<int64_t, kGpuStates> counts{};
  counts[kAllocated] = total - free;
  // Down wins over drained: a silent node cannot take work either way.
  // A pool node that is off is so by design: not counted as down.
  counts[IsPowerState(usage.state)          ? kPoweredDown
         : usage.state != v1::NODE_STATE_UP ? kDown
         : usage.drained                    ? kDrained
                                            : kFree] = free;
  return counts;
}

void NodeMetrics::Update(const v1::Node& node) {
  Update(node.info().name(),
         core::NodeUsage{node.info().gpus_size(), node.gpus_free(), node.state(), !node.drain_reason().empty(),
                         core::NodeUsage::PartsOf(node.info(), node.gpu_holders())});
}

void NodeMetrics::UpdateParts(const std::string& name, Tracked& t,
                              const std::vector<core::NodeUsage::PartHolder>& parts) {
  // One series per job and GPU: two MIG instances of one job on a GPU add up.
  std::map<core::NodeUsage::PartHolder, int> held;
  for (core::NodeUsage::PartHolder part : parts) {
    const int milli = part.milli;
    part.milli = 0;
    held[part] += milli;
  }
  std::map<core::NodeUsage::PartHolder, Gauge*> now;
  for (const auto& [part, milli] : held) {
    auto it = t.parts.find(part);
    Gauge* gauge = nullptr;
    if (it != t.parts.end()) {
      gauge = it->second;
      t.parts.erase(it);
    } else {
      gauge = &gpu_part_.Add({{"node", name},
                              {"gpu", std::to_string(part.gpu)},
                              {"job", std::to_string(part.job)},
                              {"kind", part.mig ? "mig" : "share"}});
    }
    gauge->Set(milli / 1000.0);
    now.emplace(part, gauge);
  }
  // What is left was let go.
  for (const auto& [part, gauge] : t.parts) gpu_part_.Remove(gauge);
  t.parts = std::move(now);
}

void NodeMetrics::Update(const std::string& name, const core::NodeUsage& usage) {
  auto [it, added] = tracked_.try_emplace(name);
  Tracked& t = it->second;
  if (added) {
    for (int i = 0; i < kStates; ++i)
      t.state_gauges[i] = &node_state_.Add({{"node", name}, {"state", kStateLabels[i]}});
  }
  const int state = StateIndex(usage.state);
  if (t.state != state) {
    if (t.state >= 0) {
      nodes_[t.state]->Decrement();
      t.state_gauges[t.state]->Set(0);
    }
    nodes_[state]->Increment();
    t.state_gauges[state]->Set(1);
    t.state = state;
  }
  const std::array<int64_t, kGpuStates> gpus = CountGpus(usage);
  for (int i = 0; i < kGpuStates; ++i) {
    const int64_t change = gpus[i] - t.gpus[i];
    if (change > 0) gpus_[i]->Increment(static_cast<double>(change));
    if (change < 0) gpus_[i]->Decrement(static_cast<double>(-change));
  }
  t.gpus = gpus;
  UpdateParts(name, t, usage.parts);
}

}  // namespace gpusched::metrics
