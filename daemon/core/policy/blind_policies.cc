#include "daemon/core/policy/blind_policies.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "daemon/core/policy/gang_estimate.h"
#include "daemon/core/policy/node_fit.h"
#include "daemon/core/policy/ordered_fill.h"

namespace gpusched::core::policy {
namespace {

using NodeOrder =
    std::function<void(const GangRequest&, std::vector<GpuCandidate>& single, std::vector<GpuCandidate>& spanning)>;

// Stable sort on a key computed once per node: the keys are not free and
// clusters have thousands of nodes. What is sorted is (key, position), small
// and with no ties, rather than the candidates themselves.
template <typename Key>
void SortBy(std::vector<GpuCandidate>& nodes, Key key) {
  std::vector<std::pair<decltype(key(nodes.front())), uint32_t>> keyed;
  keyed.reserve(nodes.size());
  for (uint32_t i = 0; i < nodes.size(); ++i) keyed.emplace_back(key(nodes[i]), i);
  std::sort(keyed.begin(), keyed.end());
  std::vector<GpuCandidate> sorted;
  sorted.reserve(nodes.size());
  for (const auto& [k, i] : keyed) sorted.push_back(nodes[i]);
  nodes = std::move(sorted);
}

double Utilization(const GpuCandidate& c) {
  const int total = c.slot->info.gpus_size();
  return total == 0 ? 1.0 : 1.0 - static_cast<double>(c.slot->FreeGpus()) / total;
}

// A policy is a name and a node order; the fill is shared.
class OrderedPolicy final : public PlacementPolicy {
 public:
  OrderedPolicy(absl::string_view name, NodeOrder order, PreemptionOrder preemption = PreemptionOrder::kBestPlacement)
      : name_(name), order_(std::move(order)), preemption_(preemption) {}
  absl::string_view name() const override { return name_; }
  bool weighs_links() const override { return false; }
  PreemptionOrder preemption_order() const override { return preemption_; }

  PlacementResult PlaceWholeGpus(const ClusterState& cluster, const GangRequest& req) override {
    std::vector<const NodeSlot*> cpu_order;
    if (req.total_gpus == 0) {
      for (const auto& [name, slot] : cluster.nodes()) {
        if (slot.accepts_jobs()) cpu_order.push_back(&slot);
      }
    }
    std::vector<GpuCandidate> single =
        req.total_gpus == 0 ? std::vector<GpuCandidate>{} : ScoreGpuCandidates(cluster, req);
    std::vector<GpuCandidate> spanning = single;
    order_(req, single, spanning);
    PlacementResult result = FillInOrder(cluster, req, single, spanning, cpu_order);
    if (!result.placed()) return result;
    v1::Allocation allocation = result.allocation();
    Annotate(cluster, name_, allocation);
    return PlacementResult::Placed(std::move(allocation));
  }

 private:
  std::string name_;
  NodeOrder order_;
  PreemptionOrder preemption_;
};

}  // namespace

std::unique_ptr<PlacementPolicy> MakeFirstFitPolicy() {
  // Candidates already come in name order.
  return std::make_unique<OrderedPolicy>("first-fit", [](const GangRequest&, auto&, auto&) {});
}

std::unique_ptr<PlacementPolicy> MakeBestFitPolicy() {
  return std::make_unique<OrderedPolicy>(
      "best-fit",
      [](const GangRequest& req, auto& single, auto& spanning) {
        if (single.empty()) return;
        SortBy(single, [](const GpuCandidate& c) { return c.usable; });
        // A fixed shape fills the fullest nodes that still hold a part; a gang
        // of any shape takes the emptiest first, to span as few as possible.
        SortBy(spanning, [&](const GpuCandidate& c) { return req.nodes > 0 ? c.usable : -c.usable; });
      },
      PreemptionOrder::kLeastUtilizedNodes);
}

std::unique_ptr<PlacementPolicy> MakeSpreadPolicy() {
  return std::make_unique<OrderedPolicy>("spread", [](const GangRequest&, auto& single, auto& spanning) {
    if (single.empty()) return;
    SortBy(single, Utilization);
    spanning = single;  // both start as the same candidates, in the same order
  });
}

}  // namespace gpusched::core::policy
