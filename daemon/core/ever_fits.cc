#include "daemon/core/gang_placer.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"

namespace gpusched::core {

namespace {

bool HostFits(const NodeSlot& slot, const GangRequest& req, int64_t gpus) {
  return slot.FreeGpus() >= gpus && slot.FreeCpus() >= req.CpusFor(gpus) && slot.FreeMemMb() >= req.MemFor(gpus);
}

// How many GPUs of this node, if idle, a gang of this shape could use.
int64_t UsableGpusWhenIdle(const NodeSlot& slot, const GangRequest& req) {
  int64_t usable = slot.info.gpus_size();
  if (req.cpus_per_gpu > 0) usable = std::min(usable, slot.info.cpus() / req.cpus_per_gpu);
  if (req.mem_per_gpu_mb > 0) usable = std::min(usable, slot.info.memory_mb() / req.mem_per_gpu_mb);
  return usable;
}

v1::NodeAllocation Take(const NodeSlot& slot, const GangRequest& req, int64_t gpus, int rank) {
  v1::NodeAllocation part;
  part.set_node(slot.info.name());
  part.set_address(slot.info.address());
  part.set_node_rank(rank);
  std::vector<int32_t> free = slot.FreeGpuIndices();
  for (int64_t i = 0; i < gpus; ++i) part.add_gpu_indices(free[i]);
  part.set_cpus(req.CpusFor(gpus));
  part.set_mem_mb(req.MemFor(gpus));
  return part;
}

std::vector<const NodeSlot*> UpNodes(const ClusterState& cluster) {
  std::vector<const NodeSlot*> up;
  for (const auto& [name, slot] : cluster.nodes()) {
    if (slot.up()) up.push_back(&slot);
  }
  return up;
}

// Fewest free GPUs first, then name: fills partly used nodes before idle ones.
void SortBestFit(std::vector<const NodeSlot*>& nodes) {
  std::stable_sort(nodes.begin(), nodes.end(),
                   [](const NodeSlot* a, const NodeSlot* b) { return a->FreeGpus() < b->FreeGpus(); });
}

PlacementResult PlaceCpuOnly(const std::vector<const NodeSlot*>& up, const GangRequest& req) {
  for (const NodeSlot* slot : up) {
    if (HostFits(*slot, req, 0)) {
      v1::Allocation a;
      *a.add_nodes() = Take(*slot, req, 0, 0);
      return PlacementResult::Placed(std::move(a));
    }
  }
  return PlacementResult::Unschedulable(
      absl::StrCat("waiting for a node with ", req.cpus, " free CPUs and ", req.mem_mb, " MB free memory"));
}

PlacementResult PlaceFixedShape(std::vector<const NodeSlot*> up, const GangRequest& req) {
  std::vector<const NodeSlot*> fit;
  for (const NodeSlot* slot : up) {
    if (HostFits(*slot, req, req.gpus_per_node)) fit.push_back(slot);
  }
  if (static_cast<int64_t>(fit.size()) < req.nodes) {
    return PlacementResult::Unschedulable(absl::StrCat("waiting for ", req.nodes, " nodes with ", req.gpus_per_node,
                                                       " free GPUs each (", fit.size(), " have them now)"));
  }
  SortBestFit(fit);
  v1::Allocation a;
  for (int64_t rank = 0; rank < req.nodes; ++rank) {
    *a.add_nodes() = Take(*fit[rank], req, req.gpus_per_node, static_cast<int>(rank));
  }
  return PlacementResult::Placed(std::move(a));
}

PlacementResult PlaceAnyShape(std::vector<const NodeSlot*> up, const GangRequest& req) {
  std::vector<const NodeSlot*> best_fit = up;
  SortBestFit(best_fit);
  for (const NodeSlot* slot : best_fit) {
    if (HostFits(*slot, req, req.total_gpus)) {
      v1::Allocation a;
      *a.add_nodes() = Take(*slot, req, req.total_gpus, 0);
      return PlacementResult::Placed(std::move(a));
    }
  }
  // No single node: span the fewest nodes by taking the emptiest first.
  std::stable_sort(up.begin(), up.end(),
                   [](const NodeSlot* a, const NodeSlot* b) { return a->FreeGpus() > b->FreeGpus(); });
  v1::Allocation a;
  int64_t remaining = req.total_gpus;
  int64_t free_total = 0;
  for (const NodeSlot* slot : up) {
    free_total += slot->FreeGpus();
    int64_t take = std::min(remaining, slot->FreeGpus());
    while (take > 0 && !HostFits(*slot, req, take)) --take;
    if (take == 0) continue;
    *a.add_nodes() = Take(*slot, req, take, a.nodes_size());
    remaining -= take;
    if (remaining == 0) return PlacementResult::Placed(std::move(a));
  }
  return PlacementResult::Unschedulable(absl::StrCat("waiting for ", req.total_gpus, " free GPUs (", free_total,
                                                     " free on ", up.size(), " up nodes)"));
}

}  // namespace

PlacementResult PlaceGang(const ClusterState& cluster, const GangRequest& req) {
  std::vector<const NodeSlot*> up = UpNodes(cluster);
  if (up.empty()) return PlacementResult::Unschedulable("waiting for a node: no node is up");
  if (req.total_gpus == 0) return PlaceCpuOnly(up, req);
  if (req.nodes > 0) return PlaceFixedShape(std::move(up), req);
  return PlaceAnyShape(std::move(up), req);
}

absl::Status CheckEverFits(const ClusterState& cluster, const GangRequest& req) {
  if (cluster.nodes().empty()) return absl::OkStatus();
  int64_t largest_gpus = 0, largest_cpus = 0, largest_mem = 0, usable_total = 0, nodes_that_fit = 0;
  for (const auto& [name, slot] : cluster.nodes()) {
    largest_gpus = std::max<int64_t>(largest_gpus, slot.info.gpus_size());
    largest_cpus = std::max(largest_cpus, slot.info.cpus());
    largest_mem = std::max(largest_mem, slot.info.memory_mb());
    int64_t usable = UsableGpusWhenIdle(slot, req);
    usable_total += usable;
    if (req.nodes > 0 && usable >= req.gpus_per_node) ++nodes_that_fit;
  }
  const size_t known = cluster.nodes().size();
  if (req.total_gpus == 0) {
    if (req.cpus > largest_cpus) {
      return absl::InvalidArgumentError(absl::StrCat("resources.cpus: ", req.cpus,
                                                     " CPUs on one node, but the largest node has ", largest_cpus));
    }
    if (req.mem_mb > largest_mem) {
      return absl::InvalidArgumentError(absl::StrCat("resources.mem_mb: ", req.mem_mb,
                                                     " MB on one node, but the largest node has ", largest_mem));
    }
    return absl::OkStatus();
  }
  if (req.nodes > 0) {
    if (req.gpus_per_node > largest_gpus) {
      return absl::InvalidArgumentError(absl::StrCat("resources.gpus_per_node: ", req.gpus_per_node,
                                                     " GPUs per node, but the largest node has ", largest_gpus));
    }
    if (nodes_that_fit < req.nodes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "resources.nodes: ", req.nodes, " nodes with ", req.gpus_per_node,
          " GPUs each (and their CPUs and memory), but only ", nodes_that_fit, " of ", known, " nodes could hold that"));
    }
    return absl::OkStatus();
  }
  if (req.total_gpus > usable_total) {
    return absl::InvalidArgumentError(absl::StrCat("resources.gpus: ", req.total_gpus,
                                                   " GPUs (with their CPUs and memory), but the whole cluster of ",
                                                   known, " nodes could give only ", usable_total));
  }
  return absl::OkStatus();
}

}  // namespace gpusched::core
