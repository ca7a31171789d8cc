#include "daemon/core/policy/topology_policy.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "daemon/core/placement/gpu_chooser.h"
#include "daemon/core/policy/blind_policies.h"
#include "daemon/core/policy/gang_estimate.h"
#include "daemon/core/policy/node_fit.h"
#include "daemon/core/policy/ordered_fill.h"

namespace gpusched::core::policy {
namespace {

// Estimates within this fraction count as equal, so that float noise never
// beats the best-fit rule.
constexpr double kBandwidthTolerance = 1e-6;

int Compare(double a, double b) {
  if (a > b * (1 + kBandwidthTolerance) + 1e-12) return 1;
  if (b > a * (1 + kBandwidthTolerance) + 1e-12) return -1;
  return 0;
}

struct Option {
  v1::Allocation allocation;
  GangEstimate estimate;
  int64_t free_left = 0;  // free GPUs left on the node or group it uses: less is a better fit
};

// Better by fewer nodes, then bandwidth, then fit; earlier wins a full tie
// (name order).
bool Better(const Option& a, const Option& b) {
  if (a.allocation.nodes_size() != b.allocation.nodes_size()) {
    return a.allocation.nodes_size() < b.allocation.nodes_size();
  }
  if (int c = Compare(a.estimate.bus_bandwidth_gbps, b.estimate.bus_bandwidth_gbps); c != 0) return c > 0;
  return a.free_left < b.free_left;
}

std::string Describe(const GangRequest& req, const Option& option) {
  const int nodes = option.allocation.nodes_size();
  std::string where = nodes == 1 ? "on one node"
                                 : absl::StrCat("on ", nodes, " nodes",
                                                option.estimate.span == "cluster" ? " across the cluster"
                                                                                  : absl::StrCat(" within ",
                                                                                                 option.estimate.span));
  if (req.total_gpus < 2) return absl::StrCat(req.total_gpus, " GPU ", where);
  return absl::StrCat(req.total_gpus, " GPUs ", where, " at ~",
                      absl::StrFormat("%.0f", option.estimate.bus_bandwidth_gbps), " GB/s (",
                      option.estimate.worst_link, ")");
}

class TopologyPolicy final : public PlacementPolicy {
 public:
  TopologyPolicy() : first_fit_(MakeFirstFitPolicy()) {}
  absl::string_view name() const override { return "topology"; }

  PlacementResult Place(const ClusterState& cluster, const GangRequest& req) override {
    if (req.total_gpus == 0) return PlaceCpuOnly(cluster, req);
    if (req.topology == v1::TOPOLOGY_MODE_ANY) return Stamped(cluster, first_fit_->Place(cluster, req));

    std::optional<Option> best = Search(cluster, req, /*idle=*/false);
    // First-fit's answer competes too: topology-aware never means worse.
    // Only spanning gangs need the check: where the search finds nothing,
    // first-fit finds nothing either (the search ends with every candidate
    // node in one group), and a gang that fits one node goes on one node
    // under first-fit too, where the chooser's ring is at least as fast.
    const bool spanning = best.has_value() && best->allocation.nodes_size() > 1;
    PlacementResult first = spanning ? first_fit_->Place(cluster, req) : PlacementResult::Unschedulable("not needed");
    if (first.placed()) {
      Option ff{first.allocation(), EstimateGang(cluster, first.allocation()), 0};
      if (!best.has_value() || Compare(ff.estimate.bus_bandwidth_gbps, best->estimate.bus_bandwidth_gbps) > 0) {
        best = std::move(ff);
      }
    }
    if (req.topology == v1::TOPOLOGY_MODE_STRICT) {
      std::optional<Option> ideal = Search(cluster, req, /*idle=*/true);
      // The idle-cluster search is a heuristic too: what is free now can
      // only raise the bar, never lower it.
      if (ideal.has_value() && best.has_value() && !Better(*ideal, *best)) ideal = best;
      if (ideal.has_value() &&
          (!best.has_value() || Compare(best->estimate.bus_bandwidth_gbps, ideal->estimate.bus_bandwidth_gbps) < 0 ||
           best->allocation.nodes_size() > ideal->allocation.nodes_size())) {
        return PlacementResult::Unschedulable(
            absl::StrCat("strict topology: waiting for ", Describe(req, *ideal), "; the best free now is ",
                         best.has_value() ? Describe(req, *best) : "nothing"));
      }
    }
    if (!best.has_value()) return PlacementResult::Unschedulable(WaitReason(cluster, req));
    Annotate(cluster, name(), best->allocation);
    return PlacementResult::Placed(std::move(best->allocation));
  }

 private:
  PlacementResult Stamped(const ClusterState& cluster, PlacementResult result) {
    if (!result.placed()) return result;
    v1::Allocation allocation = result.allocation();
    Annotate(cluster, "topology (any: first-fit)", allocation);
    return PlacementResult::Placed(std::move(allocation));
  }

  // CPU-only jobs: the up node with the fewest free CPUs that fits, keeping
  // large nodes whole.
  static PlacementResult PlaceCpuOnly(const ClusterState& cluster, const GangRequest& req) {
    std::vector<const NodeSlot*> order;
    for (const auto& [name, slot] : cluster.nodes()) {
      if (slot.accepts_jobs()) order.push_back(&slot);
    }
    std::stable_sort(order.begin(), order.end(),
                     [](const NodeSlot* a, const NodeSlot* b) { return a->FreeCpus() < b->FreeCpus(); });
    return FillInOrder(cluster, req, {}, {}, order);
  }

  placement::GpuChooser::TopologyId IdFor(const NodeSlot& slot) {
    // NodeSlots are stable (ClusterState keeps them in a map) and their
    // generation is unique in the process, so the pair names one topology.
    auto& cached = ids_[&slot];
    if (cached.generation != slot.generation) cached = {slot.generation, chooser_.Intern(slot.topology)};
    return cached.id;
  }

  // The node's best `k` GPUs in ring order, or empty.
  std::vector<int> Choose(const NodeSlot& slot, const GangRequest& req, int64_t k, bool idle) {
    auto choice = chooser_.Choose(IdFor(slot), CandidateMask(slot, req, idle), static_cast<int>(k));
    return choice == nullptr ? std::vector<int>{} : choice->gpus;
  }

  std::optional<Option> Search(const ClusterState& cluster, const GangRequest& req, bool idle) {
    if (req.nodes <= 1) {
      std::optional<Option> single =
          BestSingleNode(cluster, req, GpuCandidates(cluster, req, idle, req.total_gpus), idle);
      if (single.has_value() || req.nodes == 1) return single;
    }
    return BestSpanningGang(cluster, req, GpuCandidates(cluster, req, idle), idle);
  }

  // The fastest ring any kind of node of the cluster could give k GPUs: a
  // node that reaches it with no GPU to spare cannot be beaten, and the scan
  // can stop there with the answer a full scan would give.
  double BestPossibleRing(const ClusterState& cluster, int64_t k) {
    if (interned_epoch_ != cluster.topology_epoch() || interned_cluster_ != &cluster) {
      for (const NodeScan& n : cluster.scan()) IdFor(*n.slot);
      interned_epoch_ = cluster.topology_epoch();
      interned_cluster_ = &cluster;
    }
    double best = 0;
    for (size_t i = 0; i < chooser_.num_topologies(); ++i) {
      placement::GpuChooser::TopologyId id{static_cast<int>(i)};
      const placement::GpuGraph* graph = chooser_.graph(id);
      if (graph == nullptr || graph->size() < k) continue;
      const uint64_t all = graph->size() >= 64 ? ~uint64_t{0} : (uint64_t{1} << graph->size()) - 1;
      auto choice = chooser_.Choose(id, all, static_cast<int>(k));
      if (choice != nullptr) best = std::max(best, choice->ring_bandwidth_gbps);
    }
    return best;
  }

  // Nodes are compared on the chooser's cached figures (ring bandwidth, then
  // fit); only the winner is built into an allocation and estimated.
  std::optional<Option> BestSingleNode(const ClusterState& cluster, const GangRequest& req,
                                       const std::vector<const NodeSlot*>& candidates, bool idle) {
    const NodeSlot* best_slot = nullptr;
    std::shared_ptr<const placement::GpuChoice> best_choice;
    int64_t best_left = 0;
    double unbeatable = -1;  // computed once a perfect fit shows up
    for (const NodeSlot* slot : candidates) {
      const int64_t usable = UsableGpus(*slot, req, idle);
      if (usable < req.total_gpus) continue;
      auto choice = chooser_.Choose(IdFor(*slot), CandidateMask(*slot, req, idle), static_cast<int>(req.total_gpus));
      if (choice == nullptr) continue;
      const int64_t left = usable - req.total_gpus;
      if (best_slot != nullptr) {
        int c = Compare(choice->ring_bandwidth_gbps, best_choice->ring_bandwidth_gbps);
        if (c < 0 || (c == 0 && left >= best_left)) continue;
      }
      best_slot = slot;
      best_choice = std::move(choice);
      best_left = left;
      if (left == 0) {
        if (unbeatable < 0) unbeatable = BestPossibleRing(cluster, req.total_gpus);
        if (Compare(best_choice->ring_bandwidth_gbps, unbeatable) >= 0) break;
      }
    }
    if (best_slot == nullptr) return std::nullopt;
    Option option;
    *option.allocation.add_nodes() = MakePart(*best_slot, req, best_choice->gpus, 0);
    option.estimate = EstimateGang(cluster, option.allocation);
    option.free_left = best_left;
    return option;
  }

  // Fewest nodes first; among gangs of that many nodes, the lowest tier
  // (NVLink domain, leaf, spine, anywhere) some group of which can hold it;
  // within the tier, the best group by bandwidth, then fit.
  std::optional<Option> BestSpanningGang(const ClusterState& cluster, const GangRequest& req,
                                         const std::vector<const NodeSlot*>& candidates, bool idle) {
    std::optional<Option> best;
    for (NetworkTier tier : {kNvlinkDomainTier, kLeafTier, kSpineTier}) {
      std::vector<std::vector<const NodeSlot*>> groups(cluster.NetworkIdCount(tier));
      for (const NodeSlot* slot : candidates) {
        if (slot->network_ids[tier] >= 0) groups[slot->network_ids[tier]].push_back(slot);
      }
      std::optional<Option> in_tier;
      for (const auto& group : groups) {
        std::optional<Option> option = FormGang(cluster, req, group, idle);
        if (option.has_value() && (!in_tier.has_value() || Better(*option, *in_tier))) in_tier = std::move(option);
      }
      if (in_tier.has_value() && (!best.has_value() || Fewer(*in_tier, *best))) best = std::move(in_tier);
    }
    std::optional<Option> anywhere = FormGang(cluster, req, candidates, idle);
    if (anywhere.has_value() && (!best.has_value() || Fewer(*anywhere, *best))) best = std::move(anywhere);
    return best;
  }

  static bool Fewer(const Option& a, const Option& b) {
    return a.allocation.nodes_size() < b.allocation.nodes_size();
  }

  // Fewest nodes of `group`, best fit for the last part; nullopt when the
  // group cannot hold the gang.
  std::optional<Option> FormGang(const ClusterState& cluster, const GangRequest& req,
                                 const std::vector<const NodeSlot*>& group, bool idle) {
    struct Usable {
      int64_t gpus;
      const NodeSlot* slot;
    };
    std::vector<Usable> nodes;
    int64_t group_free = 0;
    for (const NodeSlot* slot : group) {
      int64_t usable = UsableGpus(*slot, req, idle);
      group_free += usable;
      if (usable > 0) nodes.push_back({usable, slot});
    }
    if (group_free < req.total_gpus) return std::nullopt;
    std::vector<std::pair<const NodeSlot*, int64_t>> parts;
    if (req.nodes > 0) {
      // Fixed shape: the nodes whose best part rings fastest (the gang is as
      // fast as its slowest part), then those with the fewest usable GPUs
      // that still hold a part, so that emptier nodes stay whole.
      struct Ranked {
        double ring_gbps;
        int64_t usable;
        const NodeSlot* slot;
      };
      std::vector<Ranked> ranked;
      for (const Usable& n : nodes) {
        if (n.gpus < req.gpus_per_node) continue;
        auto choice = chooser_.Choose(IdFor(*n.slot), CandidateMask(*n.slot, req, idle),
                                      static_cast<int>(req.gpus_per_node));
        if (choice != nullptr) ranked.push_back({choice->ring_bandwidth_gbps, n.gpus, n.slot});
      }
      if (static_cast<int64_t>(ranked.size()) < req.nodes) return std::nullopt;
      std::stable_sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) {
        if (int c = Compare(a.ring_gbps, b.ring_gbps); c != 0) return c > 0;
        return a.usable < b.usable;
      });
      for (int64_t i = 0; i < req.nodes; ++i) parts.emplace_back(ranked[i].slot, req.gpus_per_node);
    } else {
      // Fewest nodes: the emptiest ones whole, then the last part on the
      // node that fits it most tightly.
      std::stable_sort(nodes.begin(), nodes.end(), [](const Usable& a, const Usable& b) { return a.gpus > b.gpus; });
      int64_t remaining = req.total_gpus;
      size_t next = 0;
      while (next < nodes.size() && remaining > nodes[next].gpus) {
        parts.emplace_back(nodes[next].slot, nodes[next].gpus);
        remaining -= nodes[next].gpus;
        ++next;
      }
      if (next == nodes.size()) return std::nullopt;
      size_t tightest = next;
      for (size_t i = next; i < nodes.size() && nodes[i].gpus >= remaining; ++i) tightest = i;
      parts.emplace_back(nodes[tightest].slot, remaining);
    }
    Option option;
    for (const auto& [slot, take] : parts) {
      std::vector<int> gpus = Choose(*slot, req, take, idle);
      if (static_cast<int64_t>(gpus.size()) != take) return std::nullopt;
      *option.allocation.add_nodes() = MakePart(*slot, req, gpus, option.allocation.nodes_size());
    }
    option.estimate = EstimateGang(cluster, option.allocation);
    option.free_left = group_free - req.total_gpus;
    return option;
  }

  struct CachedId {
    uint64_t generation = 0;
    placement::GpuChooser::TopologyId id;
  };
  placement::GpuChooser chooser_;
  absl::flat_hash_map<const NodeSlot*, CachedId> ids_;
  // Every node of this cluster at this epoch has been interned: the chooser
  // knows all of its kinds.
  uint64_t interned_epoch_ = 0;
  const ClusterState* interned_cluster_ = nullptr;
  std::unique_ptr<PlacementPolicy> first_fit_;
};

}  // namespace

std::unique_ptr<PlacementPolicy> MakeTopologyPolicy() { return std::make_unique<TopologyPolicy>(); }

}  // namespace gpusched::core::policy
