#include "daemon/core/queue/preemption.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "daemon/core/released_jobs.h"

namespace gpusched::core {
namespace {

// Where the policy would place the request with the candidates marked in
// `evict` gone; nothing is taken.
std::optional<v1::Allocation> PlaceWithout(ReleasedJobs& trial, PlacementPolicy& policy, const GangRequest& request,
                                           const std::vector<bool>& evict) {
  trial.Set(evict);
  PlacementResult result = policy.Place(trial.cluster(), request);
  if (!result.placed()) return std::nullopt;
  return result.allocation();
}

std::vector<bool> FirstN(size_t size, size_t n) {
  std::vector<bool> evict(size, false);
  std::fill(evict.begin(), evict.begin() + static_cast<std::ptrdiff_t>(n), true);
  return evict;
}

// The candidates grouped by node. By default first those on the nodes that
// evicting them would free the most GPUs of (whole nodes first), cheaper
// nodes first among equals: cheapest-first alone tends to free one GPU on
// each of many nodes, which a large gang can use only by spreading over all
// of them. With `least_utilized`, the nodes with the fewest GPUs in use first.
std::vector<PreemptionCandidate> ByNode(const ClusterState& cluster, const std::vector<PreemptionCandidate>& cheapest,
                                        bool least_utilized) {
  struct NodeGain {
    int64_t gpus_freed = 0;
    double cost = 0;
    std::vector<size_t> candidates;
  };
  std::map<std::string, NodeGain> nodes;
  for (size_t i = 0; i < cheapest.size(); ++i) {
    for (const v1::NodeAllocation& part : cheapest[i].allocation->nodes()) {
      NodeGain& gain = nodes[part.node()];
      gain.gpus_freed += part.gpu_indices_size();
      gain.cost += cheapest[i].gpu_seconds_lost;
      gain.candidates.push_back(i);
    }
  }
  std::vector<std::pair<std::string, NodeGain>> order(nodes.begin(), nodes.end());
  for (auto& [name, gain] : order) {
    if (const NodeSlot* slot = cluster.Find(name)) gain.gpus_freed += slot->FreeGpus();
  }
  auto used_fraction = [&](const std::string& name) {
    const NodeSlot* slot = cluster.Find(name);
    return slot == nullptr || slot->gpu_count == 0
               ? 1.0
               : 1.0 - static_cast<double>(slot->FreeGpus()) / static_cast<double>(slot->gpu_count);
  };
  std::stable_sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
    if (least_utilized) return used_fraction(a.first) < used_fraction(b.first);
    return std::tuple(-a.second.gpus_freed, a.second.cost) < std::tuple(-b.second.gpus_freed, b.second.cost);
  });
  std::vector<PreemptionCandidate> out;
  std::set<size_t> taken;
  for (const auto& [name, gain] : order) {
    for (size_t i : gain.candidates) {
      if (taken.insert(i).second) out.push_back(cheapest[i]);
    }
  }
  return out;
}

// The shortest prefix of `candidates` whose eviction lets the job be
// placed, less every victim the placement can do without.
std::optional<PreemptionPlan> PlanInOrder(ClusterState& cluster, PlacementPolicy& policy, const GangRequest& request,
                                          const std::vector<PreemptionCandidate>& candidates) {
  const size_t n = candidates.size();
  std::vector<ReleasedJobs::Job> jobs;
  jobs.reserve(n);
  for (const PreemptionCandidate& c : candidates) jobs.push_back({c.job_id, c.allocation});
  ReleasedJobs trial(cluster, std::move(jobs));
  if (!PlaceWithout(trial, policy, request, FirstN(n, n)).has_value()) return std::nullopt;
  size_t lo = 1, hi = n;  // the shortest enough prefix is in [lo, hi]
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (PlaceWithout(trial, policy, request, FirstN(n, mid)).has_value()) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  std::vector<bool> evict = FirstN(n, lo);
  // The prefix may hold gangs the placement does not need (a cheap one on a
  // node it does not use): spare them, the costliest first.
  for (size_t i = lo; i-- > 0;) {
    evict[i] = false;
    if (!PlaceWithout(trial, policy, request, evict).has_value()) evict[i] = true;
  }
  std::optional<v1::Allocation> where = PlaceWithout(trial, policy, request, evict);
  if (!where.has_value()) return std::nullopt;
  PreemptionPlan plan;
  plan.allocation = *std::move(where);
  for (size_t i = 0; i < n; ++i) {
    if (!evict[i]) continue;
    plan.victims.push_back(candidates[i].job_id);
    plan.gpu_seconds_lost += candidates[i].gpu_seconds_lost;
  }
  return plan;
}

}  // namespace

std::optional<PreemptionPlan> PlanPreemption(ClusterState& cluster, PlacementPolicy& policy, const GangRequest& request,
                                             std::vector<PreemptionCandidate> candidates) {
  if (candidates.empty()) return std::nullopt;
  std::stable_sort(
      candidates.begin(), candidates.end(), [](const PreemptionCandidate& a, const PreemptionCandidate& b) {
        return std::tuple(a.gpu_seconds_lost, a.tier, ~a.job_id) < std::tuple(b.gpu_seconds_lost, b.tier, ~b.job_id);
      });
  if (policy.preemption_order() == PreemptionOrder::kLeastUtilizedNodes) {
    return PlanInOrder(cluster, policy, request, ByNode(cluster, candidates, /*least_utilized=*/true));
  }
  std::optional<PreemptionPlan> cheapest = PlanInOrder(cluster, policy, request, candidates);
  if (!cheapest.has_value()) return std::nullopt;  // evicting them all is not enough
  std::optional<PreemptionPlan> compact =
      PlanInOrder(cluster, policy, request, ByNode(cluster, candidates, /*least_utilized=*/false));
  if (!compact.has_value()) return cheapest;
  // The placement first (fewer nodes, a faster ring: the gang runs that much
  // faster for its whole life), then the work lost; a job that asked for any
  // GPUs only minds the work lost.
  auto rank = [&](const PreemptionPlan& p) {
    const double bandwidth = request.topology == v1::TOPOLOGY_MODE_ANY ? 0 : p.allocation.est_bus_bandwidth_gbps();
    const int nodes = request.topology == v1::TOPOLOGY_MODE_ANY ? 0 : p.allocation.nodes_size();
    return std::tuple(nodes, -bandwidth, p.gpu_seconds_lost);
  };
  return rank(*compact) < rank(*cheapest) ? compact : cheapest;
}

}  // namespace gpusched::core
