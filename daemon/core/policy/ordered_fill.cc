#include "daemon/core/policy/ordered_fill.h"

#include <algorithm>
#include <bit>

#include "absl/strings/str_cat.h"
#include "daemon/core/policy/node_fit.h"

namespace gpusched::core::policy {
namespace {

PlacementResult PlaceCpuOnly(const std::vector<const NodeSlot*>& order, const GangRequest& req) {
  for (const NodeSlot* slot : order) {
    if (!CpuJobFits(*slot, req)) continue;
    v1::Allocation a;
    *a.add_nodes() = MakePart(*slot, req, {}, 0);
    return PlacementResult::Placed(std::move(a));
  }
  return PlacementResult::Unschedulable(
      absl::StrCat("waiting for a node with ", req.cpus, " free CPUs and ", req.mem_mb, " MB free memory"));
}

std::string RequestedKind(const GangRequest& req) {
  std::string kind;
  if (!req.gpu_model.empty()) absl::StrAppend(&kind, " ", req.gpu_model);
  if (req.gpu_memory_mb > 0) absl::StrAppend(&kind, " (>= ", req.gpu_memory_mb, " MB)");
  return kind;
}

std::string Plural(int64_t n, const char* one, const char* many) { return absl::StrCat(n, " ", n == 1 ? one : many); }

}  // namespace

std::string WaitReason(const ClusterState& cluster, const GangRequest& req) {
  return WaitReason(cluster, req, ScoreGpuCandidates(cluster, req));
}

std::string WaitReason(const ClusterState& cluster, const GangRequest& req,
                       const std::vector<GpuCandidate>& candidates) {
  size_t up = 0, up_elsewhere = 0;
  for (const NodeScan& n : cluster.scan()) {
    if (n.up) ++(!QueueMayUse(n, req) ? up_elsewhere : up);
  }
  if (up == 0) {
    return up_elsewhere == 0 ? "waiting for a node: no node is up" : "waiting for a node: no node of its queue is up";
  }
  int64_t free_total = 0;
  int64_t nodes_with_part = 0;
  for (const GpuCandidate& c : candidates) {
    free_total += c.usable;
    if (req.nodes > 0 && c.usable >= req.gpus_per_node) ++nodes_with_part;
  }
  if (req.nodes > 0) {
    return absl::StrCat("waiting for ", Plural(req.nodes, "node", "nodes"), " with ", req.gpus_per_node, " free",
                        RequestedKind(req), req.gpus_per_node == 1 ? " GPU" : " GPUs", " each (", nodes_with_part,
                        nodes_with_part == 1 ? " has" : " have", " them now)");
  }
  return absl::StrCat("waiting for ", req.total_gpus, " free", RequestedKind(req),
                      req.total_gpus == 1 ? " GPU" : " GPUs", " (", free_total, " free on ",
                      Plural(static_cast<int64_t>(up), "up node", "up nodes"), ")");
}

PlacementResult FillInOrder(const ClusterState& cluster, const GangRequest& req,
                            const std::vector<GpuCandidate>& single_node_order,
                            const std::vector<GpuCandidate>& spanning_order,
                            const std::vector<const NodeSlot*>& cpu_order) {
  if (req.total_gpus == 0) return PlaceCpuOnly(cpu_order, req);
  const int64_t per_node = req.nodes > 0 ? req.gpus_per_node : req.total_gpus;
  if (req.nodes <= 1) {
    for (const GpuCandidate& c : single_node_order) {
      if (c.usable < per_node) continue;
      v1::Allocation a;
      *a.add_nodes() = MakePart(*c.slot, req, LowestPositions(c.mask, per_node), 0);
      return PlacementResult::Placed(std::move(a));
    }
    if (req.nodes == 1) return PlacementResult::Unschedulable(WaitReason(cluster, req, single_node_order));
    // What a policy blind to links can honour of --topology strict: a job
    // one node could hold waits for one node instead of being split.
    if (req.topology == v1::TOPOLOGY_MODE_STRICT) {
      const bool one_node_holds_it =
          std::any_of(single_node_order.begin(), single_node_order.end(),
                      [&](const GpuCandidate& c) { return c.slot->info.gpus_size() >= per_node; });
      if (one_node_holds_it) {
        GangRequest one_node = req;
        one_node.nodes = 1;
        one_node.gpus_per_node = per_node;
        return PlacementResult::Unschedulable(WaitReason(cluster, one_node, single_node_order));
      }
    }
  }
  v1::Allocation a;
  int64_t remaining = req.total_gpus;
  for (const GpuCandidate& c : spanning_order) {
    int64_t take = std::min(remaining, c.usable);
    if (req.nodes > 0) take = take >= req.gpus_per_node ? req.gpus_per_node : 0;
    if (take <= 0) continue;
    *a.add_nodes() = MakePart(*c.slot, req, LowestPositions(c.mask, take), a.nodes_size());
    remaining -= take;
    if (remaining == 0) return PlacementResult::Placed(std::move(a));
  }
  return PlacementResult::Unschedulable(WaitReason(cluster, req, spanning_order));
}

}  // namespace gpusched::core::policy
