#include "daemon/core/policy/share_placement.h"

#include <algorithm>
#include <bit>
#include <optional>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/share_mode_name.h"
#include "daemon/core/policy/node_fit.h"

namespace gpusched::core::policy {
namespace {

struct NodeChoice {
  const NodeSlot* slot = nullptr;
  std::vector<int> positions;
  v1::GpuShareMode mode = v1::GPU_SHARE_MODE_TIMESLICE;  // the chosen GPUs' (all alike)
  int64_t leftover_milli = 0;                            // free share the chosen GPUs keep after the job
  int64_t fresh_gpus = 0;                                // chosen GPUs nobody shared before
  int free_gpus = 0;                                     // whole GPUs free on the node before the job
  int64_t peer_gbps = 0;                                 // the chosen GPUs' NodeSlot::FreePeerGbps
  auto Key() const { return std::tuple(leftover_milli, fresh_gpus, free_gpus, peer_gbps, slot->info.name()); }
  // Spread's order: the most share left, on the node with the most whole
  // GPUs free, then the most peer bandwidth left, then node name order.
  auto SpreadKey() const { return std::tuple(-leftover_milli, -free_gpus, -peer_gbps, slot->info.name()); }
  bool Before(const NodeChoice& other, bool spread) const {
    return spread ? SpreadKey() < other.SpreadKey() : Key() < other.Key();
  }
};

// Whether the GPU at `pos` is shared the way the job asks and, under MPS,
// serves no other user's jobs now.
bool ModeSuits(const NodeSlot& slot, int pos, const GangRequest& request) {
  const v1::GpuShareMode mode = slot.ShareMode(pos);
  if (request.gpu_sharing != v1::GPU_SHARE_MODE_UNSPECIFIED && mode != request.gpu_sharing) return false;
  return mode != v1::GPU_SHARE_MODE_MPS || slot.gpu_owner[pos] != kSharedGpuOwner ||
         slot.gpu_shares[pos].mps_user == request.user;
}

// Whether the GPU at `pos` could take the share now: shared the right way,
// with the share and the memory with it free.
bool ShareFits(const NodeSlot& slot, int pos, const GangRequest& request) {
  return ModeSuits(slot, pos, request) && slot.FreeShareMilli(pos) >= request.gpu_share_milli &&
         slot.FreeShareMemMb(pos) >= ShareMemMb(request, slot.info.gpus(pos).memory_mb());
}

// The share on the GPU at `pos` alone, which ShareFits.
NodeChoice OneGpuChoice(const NodeSlot& slot, int pos, const GangRequest& request) {
  NodeChoice choice;
  choice.slot = &slot;
  choice.positions = {pos};
  choice.mode = slot.ShareMode(pos);
  choice.leftover_milli = slot.FreeShareMilli(pos) - request.gpu_share_milli;
  choice.fresh_gpus = slot.gpu_owner[pos] == 0 ? 1 : 0;
  choice.free_gpus = std::popcount(slot.free_mask);
  choice.peer_gbps = slot.FreePeerGbps(pos);
  return choice;
}

// The request's GPUs on one node, tightest first (with `spread`, those
// with the most share free), all shared one way (MPS or time-slicing: a job
// is held to its limits on all of its GPUs or on none); nullopt when fewer
// than request.total_gpus GPUs there can take the share.
std::optional<NodeChoice> ChooseOnNode(const NodeSlot& slot, const GangRequest& request, uint64_t eligible,
                                       int& most_fitting, bool spread = false) {
  std::optional<NodeChoice> best;
  for (v1::GpuShareMode mode : {v1::GPU_SHARE_MODE_TIMESLICE, v1::GPU_SHARE_MODE_MPS}) {
    std::vector<std::tuple<int, int64_t, int>> fitting;  // (free share after, FreePeerGbps, position)
    for (uint64_t bits = eligible & slot.SharedMask(mode); bits != 0; bits &= bits - 1) {
      const int p = std::countr_zero(bits);
      if (!ShareFits(slot, p, request)) continue;
      fitting.emplace_back(slot.FreeShareMilli(p) - request.gpu_share_milli, slot.FreePeerGbps(p), p);
    }
    most_fitting = std::max(most_fitting, static_cast<int>(fitting.size()));
    if (static_cast<int64_t>(fitting.size()) < request.total_gpus) continue;
    if (spread) {
      // The most share free first, then the most free peers, then position.
      std::sort(fitting.begin(), fitting.end(), [](const auto& a, const auto& b) {
        return std::tuple(-std::get<0>(a), -std::get<1>(a), std::get<2>(a)) <
               std::tuple(-std::get<0>(b), -std::get<1>(b), std::get<2>(b));
      });
    } else {
      std::sort(fitting.begin(), fitting.end());
    }
    NodeChoice choice;
    choice.slot = &slot;
    choice.mode = mode;
    choice.free_gpus = std::popcount(slot.free_mask);
    for (int64_t i = 0; i < request.total_gpus; ++i) {
      const auto [left, peers, p] = fitting[i];
      choice.positions.push_back(p);
      choice.leftover_milli += left;
      choice.peer_gbps += peers;
      choice.fresh_gpus += slot.gpu_owner[p] == 0 ? 1 : 0;
    }
    std::sort(choice.positions.begin(), choice.positions.end());
    if (!best || choice.Before(*best, spread)) best = std::move(choice);
  }
  return best;
}

// Whether the node of `n` can host the request's CPUs and memory and its
// queue may use it.
bool NodeSuits(const NodeScan& n, const GangRequest& request) {
  return n.up && QueueMayUse(n, request) && n.free_cpus >= request.CpusFor(request.total_gpus) &&
         n.free_mem_mb >= request.MemFor(request.total_gpus);
}

// A share of one GPU: the first GPU of the share index, from the share's
// size up, whose node suits the job. The index is in best-fit order.
std::optional<NodeChoice> ChooseOneGpu(const ClusterState& cluster, const GangRequest& request,
                                       const EligibleByKind& eligible) {
  for (auto it = cluster.share_index().lower_bound({request.gpu_share_milli, 0, 0, 0, 0});
       it != cluster.share_index().end(); ++it) {
    const NodeScan& n = cluster.scan()[it->scan_index];
    if (!NodeSuits(n, request) || (eligible.Of(n) >> it->position & 1) == 0) continue;
    if (!ShareFits(*n.slot, it->position, request)) continue;
    return OneGpuChoice(*n.slot, it->position, request);
  }
  return std::nullopt;
}

// Spread's share of one GPU: the first GPU of the share index from the top
// (the most share free, then the node with the most whole GPUs free; among
// equals, best fit's order reversed) whose node suits the job.
std::optional<NodeChoice> ChooseMostFreeGpu(const ClusterState& cluster, const GangRequest& request,
                                            const EligibleByKind& eligible) {
  for (auto it = cluster.share_index().rbegin(); it != cluster.share_index().rend(); ++it) {
    if (it->free_milli < request.gpu_share_milli) break;
    const NodeScan& n = cluster.scan()[it->scan_index];
    if (!NodeSuits(n, request) || (eligible.Of(n) >> it->position & 1) == 0) continue;
    if (!ShareFits(*n.slot, it->position, request)) continue;
    return OneGpuChoice(*n.slot, it->position, request);
  }
  return std::nullopt;
}

// The node's shared GPUs as the FGD measure sees them, with what is free of
// its CPUs and memory, and how many of its other GPUs are free.
sharing::PackNode PackViewOf(const NodeSlot& slot) {
  sharing::PackNode node;
  node.cpu_capacity_milli = slot.cpus_total * 1000;
  node.cpu_free_milli = slot.FreeCpus() * 1000;
  node.memory_free_mib = slot.FreeMemMb();
  for (uint64_t bits = slot.shareable_mask; bits != 0; bits &= bits - 1) {
    node.gpu_free_milli.push_back(slot.FreeShareMilli(std::countr_zero(bits)));
  }
  node.unshared_free_gpus = std::popcount(slot.FreeMask() & ~slot.shareable_mask & ~slot.mig_mask);
  return node;
}

// The node's view once the choice is taken, from `now`, its view before.
sharing::PackNode ViewAfter(const NodeChoice& choice, const GangRequest& request, const sharing::PackNode& now) {
  const NodeSlot& slot = *choice.slot;
  sharing::PackNode node = now;
  for (int p : choice.positions) {
    // Its entry in gpu_free_milli: the shared GPUs below it come first.
    const int k = std::popcount(slot.shareable_mask & ((uint64_t{1} << p) - 1));
    node.gpu_free_milli[k] -= request.gpu_share_milli;
  }
  node.cpu_free_milli -= request.CpusFor(request.total_gpus) * 1000;
  node.memory_free_mib -= request.MemFor(request.total_gpus);
  return node;
}

// Every GPU of the node a share of one GPU could take now.
void OneGpuChoices(const NodeSlot& slot, const GangRequest& request, uint64_t eligible, std::vector<NodeChoice>& out) {
  for (uint64_t bits = eligible & slot.shareable_mask; bits != 0; bits &= bits - 1) {
    const int p = std::countr_zero(bits);
    if (ShareFits(slot, p, request)) out.push_back(OneGpuChoice(slot, p, request));
  }
}

// FGD: the choice, over every node, that grows the expected fragmentation
// least; best fit among equals. With fill-fgd's waste measure, the choice
// that grows its node's likely waste least first.
std::optional<NodeChoice> ChooseByFragmentation(const ClusterState& cluster, const GangRequest& request,
                                                const EligibleByKind& eligible, const ShareWeighing& weighing,
                                                int& most_fitting) {
  const sharing::TaskMix& mix = weighing.mix;
  std::optional<std::tuple<int64_t, int64_t, NodeChoice>> best;
  std::vector<NodeChoice> choices;
  for (const NodeScan& n : cluster.scan()) {
    if (!NodeSuits(n, request) || n.slot->SharedMask(request.gpu_sharing) == 0) continue;
    choices.clear();
    if (request.total_gpus == 1) {
      OneGpuChoices(*n.slot, request, eligible.Of(n), choices);
      most_fitting = std::max(most_fitting, static_cast<int>(std::min<size_t>(choices.size(), 1)));
    } else if (std::optional<NodeChoice> choice = ChooseOnNode(*n.slot, request, eligible.Of(n), most_fitting)) {
      choices.push_back(*std::move(choice));
    }
    if (choices.empty()) continue;
    // The node as it is, weighed once for all of its choices.
    const sharing::PackNode now = PackViewOf(*n.slot);
    const int64_t fragment_before = sharing::FragmentSum(now, mix);
    const double waste_before = weighing.waste ? weighing.waste->Of(now) : 0;
    for (NodeChoice& choice : choices) {
      const sharing::PackNode after = ViewAfter(choice, request, now);
      const int64_t waste_growth =
          weighing.waste ? sharing::NodeWaste::Growth(waste_before, weighing.waste->Of(after)) : 0;
      const int64_t growth = sharing::FragmentSum(after, mix) - fragment_before;
      if (!best || std::tuple(waste_growth, growth, choice.Key()) <
                       std::tuple(std::get<0>(*best), std::get<1>(*best), std::get<2>(*best).Key())) {
        best.emplace(waste_growth, growth, std::move(choice));
      }
    }
  }
  if (!best) return std::nullopt;
  return std::move(std::get<2>(*best));
}

}  // namespace

int64_t ShareMemMb(const GangRequest& request, int64_t gpu_memory_mb) {
  if (request.gpu_mem_limit_mb > 0) return request.gpu_mem_limit_mb;
  return gpu_memory_mb * request.gpu_share_milli / 1000;
}

PlacementResult PlaceShares(const ClusterState& cluster, const GangRequest& request, const ShareWeighing& weighing) {
  const EligibleByKind eligible(cluster, request);
  std::optional<NodeChoice> best;
  int most_fitting = 0;
  const bool spread = weighing.packing == SharePacking::kSpread;
  if (weighing.packing == SharePacking::kFgd || weighing.packing == SharePacking::kFillFgd) {
    best = ChooseByFragmentation(cluster, request, eligible, weighing, most_fitting);
  } else if (request.total_gpus == 1) {
    best = spread ? ChooseMostFreeGpu(cluster, request, eligible) : ChooseOneGpu(cluster, request, eligible);
  } else {
    for (const NodeScan& n : cluster.scan()) {
      if (!NodeSuits(n, request) || n.slot->SharedMask(request.gpu_sharing) == 0) continue;
      std::optional<NodeChoice> choice = ChooseOnNode(*n.slot, request, eligible.Of(n), most_fitting, spread);
      if (choice && (!best || choice->Before(*best, spread))) best = std::move(choice);
    }
  }
  const std::string want = absl::StrCat(request.total_gpus, request.total_gpus == 1 ? " GPU" : " GPUs", " with ",
                                        request.gpu_share_milli / 10.0, "% free");
  if (!best) {
    if (!cluster.any_shareable_gpu()) {
      return PlacementResult::Unschedulable(
          absl::StrCat("waits for ", want, ": no node shares its GPUs (agent gpu_share_mode)"));
    }
    const std::string how = request.gpu_sharing == v1::GPU_SHARE_MODE_UNSPECIFIED
                                ? ""
                                : absl::StrCat(" shared by ", ShareModeName(request.gpu_sharing));
    return PlacementResult::Unschedulable(absl::StrCat(
        "waits for ", want, how, " and the memory with it on one node with the CPUs and memory for it",
        request.total_gpus > 1 ? ", all shared one way" : "", "; the most any such node has now is ", most_fitting));
  }
  v1::Allocation allocation;
  v1::NodeAllocation& part = *allocation.add_nodes();
  part = MakePart(*best->slot, request, best->positions, 0);
  part.set_gpu_share_milli(request.gpu_share_milli);
  // One limit for all of the job's GPUs: the smallest GPU's, which each
  // chosen GPU has free (each was checked for its own, no smaller, need).
  int64_t mem = -1;
  for (int p : best->positions) {
    const int64_t need = ShareMemMb(request, best->slot->info.gpus(p).memory_mb());
    mem = mem < 0 ? need : std::min(mem, need);
  }
  part.set_gpu_mem_limit_mb(mem);
  part.set_gpu_share_mode(best->mode);
  if (best->mode == v1::GPU_SHARE_MODE_MPS) part.set_mps_user(request.user);
  allocation.set_policy(absl::StrCat("share ", SharePackingName(weighing.packing)));
  allocation.set_span("node");
  return PlacementResult::Placed(std::move(allocation));
}

}  // namespace gpusched::core::policy
