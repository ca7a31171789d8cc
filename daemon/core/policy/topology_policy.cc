#include "daemon/core/policy/topology_policy.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/types/span.h"
#include "daemon/core/placement/gpu_chooser.h"
#include "daemon/core/policy/blind_policies.h"
#include "daemon/core/policy/gang_estimate.h"
#include "daemon/core/policy/group_memo.h"
#include "daemon/core/policy/node_fit.h"
#include "daemon/core/policy/ordered_fill.h"
#include "daemon/core/policy/topology_ids.h"

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

// A candidate gang. Searches weigh hundreds of them per request (every
// switch group of every tier), so they stay plain parts; only the chosen one
// becomes an allocation.
struct Option {
  std::vector<GangPart> parts;
  double bandwidth_gbps = 0;  // GangBandwidthGBps(parts)
  int64_t free_left = 0;      // free GPUs left on the node or group it uses: less is a better fit
  size_t nodes() const { return parts.size(); }
};

// Better by fewer nodes, then bandwidth, then fit; earlier wins a full tie
// (name order).
bool Better(const Option& a, const Option& b) {
  if (a.nodes() != b.nodes()) return a.nodes() < b.nodes();
  if (int c = Compare(a.bandwidth_gbps, b.bandwidth_gbps); c != 0) return c > 0;
  return a.free_left < b.free_left;
}

v1::Allocation ToAllocation(const GangRequest& req, const Option& option) {
  v1::Allocation allocation;
  for (const GangPart& part : option.parts) {
    *allocation.add_nodes() = MakePart(*part.slot, req, part.positions, allocation.nodes_size());
  }
  return allocation;
}

std::string Describe(const ClusterState& cluster, const GangRequest& req, const Option& option) {
  const GangEstimate estimate = EstimateGang(cluster, ToAllocation(req, option));
  const size_t nodes = option.nodes();
  std::string where = nodes == 1 ? "on one node"
                                 : absl::StrCat("on ", nodes, " nodes",
                                                estimate.span == "cluster" ? " across the cluster"
                                                                           : absl::StrCat(" within ", estimate.span));
  if (req.total_gpus < 2) return absl::StrCat(req.total_gpus, " GPU ", where);
  return absl::StrCat(req.total_gpus, " GPUs ", where, " at ~", absl::StrFormat("%.0f", estimate.bus_bandwidth_gbps),
                      " GB/s (", estimate.worst_link, ")");
}

class TopologyPolicy final : public PlacementPolicy {
 public:
  TopologyPolicy() : first_fit_(MakeFirstFitPolicy()) {}
  absl::string_view name() const override { return "topology"; }

  PlacementResult PlaceWholeGpus(const ClusterState& cluster, const GangRequest& req) override {
    if (req.total_gpus == 0) return PlaceCpuOnly(cluster, req);
    if (req.topology == v1::TOPOLOGY_MODE_ANY) return Stamped(cluster, first_fit_->Place(cluster, req));

    // Nodes with anything to give now: scored once, for the spanning search
    // and the wait reason (filled only once a single node would not do).
    std::vector<GpuCandidate>& now = now_;
    now.clear();
    std::optional<Option> best = Search(cluster, req, /*idle=*/false, now);
    // First-fit's answer competes too: topology-aware never means worse.
    // Only spanning gangs need the check: where the search finds nothing,
    // first-fit finds nothing either (the search ends with every candidate
    // node in one group), and a gang that fits one node goes on one node
    // under first-fit too, where the chooser's ring is at least as fast.
    const bool spanning = best.has_value() && best->nodes() > 1;
    PlacementResult first = spanning ? FirstFitOver(cluster, req, now) : PlacementResult::Unschedulable("not needed");
    if (first.placed()) {
      // first-fit's answer as an Option, weighed like the search's.
      Option ff;
      ff.parts = PartsOf(cluster, first.allocation());
      ff.bandwidth_gbps = GangBandwidthGBps(ff.parts);
      if (!best.has_value() || Compare(ff.bandwidth_gbps, best->bandwidth_gbps) > 0) best = std::move(ff);
    }
    if (req.topology == v1::TOPOLOGY_MODE_STRICT) {
      std::optional<Option> ideal = Search(cluster, req, /*idle=*/true, idle_);
      // The idle-cluster search is a heuristic too: what is free now can
      // only raise the bar, never lower it.
      if (ideal.has_value() && best.has_value() && !Better(*ideal, *best)) ideal = best;
      if (ideal.has_value() && (!best.has_value() || Compare(best->bandwidth_gbps, ideal->bandwidth_gbps) < 0 ||
                                best->nodes() > ideal->nodes())) {
        return PlacementResult::Unschedulable(
            absl::StrCat("strict topology: waiting for ", Describe(cluster, req, *ideal), "; the best free now is ",
                         best.has_value() ? Describe(cluster, req, *best) : "nothing"));
      }
    }
    if (!best.has_value()) {
      if (req.nodes == 1) ScoreGpuCandidates(cluster, req, false, 1, now);  // only single nodes were searched
      return PlacementResult::Unschedulable(WaitReason(cluster, req, now));
    }
    v1::Allocation allocation = ToAllocation(req, *best);
    Annotate(cluster, name(), allocation);
    return PlacementResult::Placed(std::move(allocation));
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

  // What first-fit would place, from the candidates the spanning search
  // scored (first-fit's own, in the same name order), without scoring the
  // cluster again or estimating an allocation that only competes.
  static PlacementResult FirstFitOver(const ClusterState& cluster, const GangRequest& req,
                                      const std::vector<GpuCandidate>& candidates) {
    return FillInOrder(cluster, req, candidates, candidates, {});
  }

  // The node's best `k` of the GPUs in `mask`, in ring order, or empty.
  std::vector<int> Choose(const NodeSlot& slot, uint64_t mask, int64_t k) {
    auto choice = chooser_.Choose(ids_.Of(slot), mask, static_cast<int>(k));
    return choice == nullptr ? std::vector<int>{} : choice->gpus;
  }

  // `spanning` gets the candidates of the spanning search when it ran.
  std::optional<Option> Search(const ClusterState& cluster, const GangRequest& req, bool idle,
                               std::vector<GpuCandidate>& spanning) {
    if (req.nodes <= 1) {
      std::optional<Option> single = BestSingleNode(cluster, req, idle);
      if (single.has_value() || req.nodes == 1) return single;
    }
    ScoreGpuCandidates(cluster, req, idle, 1, spanning);
    return BestSpanningGang(cluster, req, spanning);
  }

  // The fastest ring any kind of node of the cluster could give k GPUs: a
  // node that reaches it with no GPU to spare cannot be beaten, and the scan
  // can stop there with the answer a full scan would give.
  double BestPossibleRing(const ClusterState& cluster, int64_t k) {
    ids_.InternAll(cluster);
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
  // fit), each scored as the scan reaches it: a fit that cannot be beaten
  // ends the scan.
  std::optional<Option> BestSingleNode(const ClusterState& cluster, const GangRequest& req, bool idle) {
    const NodeSlot* best_slot = nullptr;
    std::shared_ptr<const placement::GpuChoice> best_choice;
    int64_t best_left = 0;
    double unbeatable = -1;  // computed once a perfect fit shows up
    const EligibleByKind eligible(cluster, req);
    GpuCandidate c;
    for (const NodeScan& n : cluster.scan()) {
      if (!ScoreGpuCandidate(n, req, eligible, idle, req.total_gpus, c)) continue;
      const NodeSlot* slot = c.slot;
      auto choice = chooser_.Choose(ids_.Of(*slot), c.mask, static_cast<int>(req.total_gpus));
      if (choice == nullptr) continue;
      const int64_t left = c.usable - req.total_gpus;
      if (best_slot != nullptr) {
        const int order = Compare(choice->ring_bandwidth_gbps, best_choice->ring_bandwidth_gbps);
        if (order < 0 || (order == 0 && left >= best_left)) continue;
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
    option.parts.push_back({best_slot, best_choice->gpus});
    option.bandwidth_gbps = GangBandwidthGBps(option.parts);
    option.free_left = best_left;
    return option;
  }

  // Fewest nodes first; among gangs of that many nodes, the lowest tier
  // (NVLink domain, leaf, spine, anywhere) some group of which can hold it;
  // within the tier, the best group by bandwidth, then fit.
  std::optional<Option> BestSpanningGang(const ClusterState& cluster, const GangRequest& req,
                                         const std::vector<GpuCandidate>& candidates) {
    // A wider tier only wins with fewer nodes: once a gang has as few as
    // any could, the wider tiers are not searched (a fixed shape always has
    // req.nodes, so its first tier that holds it wins).
    int64_t most_usable = 1;
    for (const GpuCandidate& c : candidates) most_usable = std::max(most_usable, c.usable);
    const size_t fewest_possible = req.nodes > 0
                                       ? static_cast<size_t>(req.nodes)
                                       : static_cast<size_t>((req.total_gpus + most_usable - 1) / most_usable);
    auto settled = [&](const std::optional<Option>& best) {
      return best.has_value() && best->nodes() <= fewest_possible;
    };
    std::optional<Option> best;
    std::vector<GpuCandidate>& grouped = grouped_;
    std::vector<size_t>& starts = group_starts_;
    size_t memo_index = 0;  // groups of every tier, then "anywhere", numbered for the memo
    gangs_.Prepare(static_cast<size_t>(cluster.NetworkIdCount(kNvlinkDomainTier) + cluster.NetworkIdCount(kLeafTier) +
                                       cluster.NetworkIdCount(kSpineTier)) +
                   1);
    for (NetworkTier tier : {kNvlinkDomainTier, kLeafTier, kSpineTier}) {
      const size_t first_index = memo_index;
      memo_index += static_cast<size_t>(cluster.NetworkIdCount(tier));
      if (settled(best)) return best;
      GroupBy(candidates, tier, cluster.NetworkIdCount(tier), grouped, starts);
      const Option* in_tier = nullptr;
      for (size_t g = 0; g + 1 < starts.size(); ++g) {
        const std::optional<Option>& option = RememberedGang(
            first_index + g, req, absl::MakeConstSpan(grouped.data() + starts[g], starts[g + 1] - starts[g]));
        if (option.has_value() && (in_tier == nullptr || Better(*option, *in_tier))) in_tier = &*option;
      }
      if (in_tier != nullptr && (!best.has_value() || Fewer(*in_tier, *best))) best = *in_tier;
    }
    if (settled(best)) return best;
    const std::optional<Option>& anywhere = RememberedGang(memo_index, req, candidates);
    if (anywhere.has_value() && (!best.has_value() || Fewer(*anywhere, *best))) best = *anywhere;
    return best;
  }

  // FormGang, worked out once per group state and shape (GroupMemo).
  const std::optional<Option>& RememberedGang(size_t index, const GangRequest& req,
                                              absl::Span<const GpuCandidate> group) {
    if (const std::optional<Option>* known = gangs_.Find(index, req, group)) return *known;
    return gangs_.Remember(index, req, group, FormGang(req, group));
  }

  static bool Fewer(const Option& a, const Option& b) { return a.nodes() < b.nodes(); }

  // The candidates under each switch (or domain) of `tier`, in scan order,
  // as one array: group g is grouped[starts[g], starts[g + 1]). Nodes of no
  // known switch are left out.
  static void GroupBy(const std::vector<GpuCandidate>& candidates, NetworkTier tier, size_t groups,
                      std::vector<GpuCandidate>& grouped, std::vector<size_t>& starts) {
    starts.assign(groups + 1, 0);
    for (const GpuCandidate& c : candidates) {
      if (c.network_ids[tier] >= 0) ++starts[c.network_ids[tier] + 1];
    }
    for (size_t g = 0; g < groups; ++g) starts[g + 1] += starts[g];
    grouped.resize(starts[groups]);
    std::vector<size_t> next(starts.begin(), starts.end() - 1);
    for (const GpuCandidate& c : candidates) {
      if (c.network_ids[tier] >= 0) grouped[next[c.network_ids[tier]]++] = c;
    }
  }

  // Fewest nodes of `group`, best fit for the last part; nullopt when the
  // group cannot hold the gang.
  std::optional<Option> FormGang(const GangRequest& req, absl::Span<const GpuCandidate> group) {
    int64_t group_free = 0;
    for (const GpuCandidate& c : group) group_free += c.usable;
    if (group_free < req.total_gpus) return std::nullopt;
    std::vector<std::pair<const GpuCandidate*, int64_t>> parts;
    if (req.nodes > 0) {
      // Fixed shape: the nodes whose best part rings fastest (the gang is as
      // fast as its slowest part), then those with the fewest usable GPUs
      // that still hold a part, so that emptier nodes stay whole.
      struct Ranked {
        double ring_gbps;
        int64_t usable;
        const GpuCandidate* candidate;
      };
      std::vector<Ranked> ranked;
      for (const GpuCandidate& c : group) {
        if (c.usable < req.gpus_per_node) continue;
        auto choice = chooser_.Choose(ids_.Of(*c.slot), c.mask, static_cast<int>(req.gpus_per_node));
        if (choice != nullptr) ranked.push_back({choice->ring_bandwidth_gbps, c.usable, &c});
      }
      if (static_cast<int64_t>(ranked.size()) < req.nodes) return std::nullopt;
      std::stable_sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) {
        if (int c = Compare(a.ring_gbps, b.ring_gbps); c != 0) return c > 0;
        return a.usable < b.usable;
      });
      for (int64_t i = 0; i < req.nodes; ++i) parts.emplace_back(ranked[i].candidate, req.gpus_per_node);
    } else {
      // Fewest nodes: the emptiest ones whole, then the last part on the
      // node that fits it most tightly.
      std::vector<const GpuCandidate*> nodes;
      for (const GpuCandidate& c : group) nodes.push_back(&c);
      std::stable_sort(nodes.begin(), nodes.end(),
                       [](const GpuCandidate* a, const GpuCandidate* b) { return a->usable > b->usable; });
      int64_t remaining = req.total_gpus;
      size_t next = 0;
      while (next < nodes.size() && remaining > nodes[next]->usable) {
        parts.emplace_back(nodes[next], nodes[next]->usable);
        remaining -= nodes[next]->usable;
        ++next;
      }
      if (next == nodes.size()) return std::nullopt;
      size_t tightest = next;
      for (size_t i = next; i < nodes.size() && nodes[i]->usable >= remaining; ++i) tightest = i;
      parts.emplace_back(nodes[tightest], remaining);
    }
    Option option;
    for (const auto& [candidate, take] : parts) {
      std::vector<int> gpus = Choose(*candidate->slot, candidate->mask, take);
      if (static_cast<int64_t>(gpus.size()) != take) return std::nullopt;
      option.parts.push_back({candidate->slot, std::move(gpus)});
    }
    option.bandwidth_gbps = GangBandwidthGBps(option.parts);
    option.free_left = group_free - req.total_gpus;
    return option;
  }

  placement::GpuChooser chooser_;
  TopologyIds ids_{chooser_};
  // Scratch space of Place, kept between calls: candidates now and on the
  // idle cluster, and the spanning search's grouping of them.
  std::vector<GpuCandidate> now_, idle_, grouped_;
  std::vector<size_t> group_starts_;
  // FormGang's answers by group and shape, while the group stays as it was.
  GroupMemo<std::optional<Option>> gangs_;
  std::unique_ptr<PlacementPolicy> first_fit_;
};

}  // namespace

std::unique_ptr<PlacementPolicy> MakeTopologyPolicy() { return std::make_unique<TopologyPolicy>(); }

}  // namespace gpusched::core::policy
