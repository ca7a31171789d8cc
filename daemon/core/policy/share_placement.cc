#include "daemon/core/policy/share_placement.h"

#include <algorithm>
#include <optional>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "daemon/core/policy/node_fit.h"

namespace gpusched::core::policy {
namespace {

struct NodeChoice {
  const NodeSlot* slot = nullptr;
  std::vector<int> positions;
  int64_t leftover_milli = 0;     // free share the chosen GPUs keep after the job
  int64_t fresh_gpus = 0;         // chosen GPUs nobody shared before
  auto Key() const { return std::tuple(leftover_milli, fresh_gpus, slot->info.name()); }
};

// The request's GPUs on one node, tightest first; nullopt when fewer than
// request.total_gpus GPUs there can take the share.
std::optional<NodeChoice> ChooseOnNode(const NodeSlot& slot, const GangRequest& request, int& most_fitting) {
  const uint64_t eligible = EligibleGpus(slot, request);
  std::vector<std::pair<int, int>> fitting;  // (free share after, position)
  for (int p = 0; p < slot.info.gpus_size() && p < 64; ++p) {
    if ((eligible >> p & 1) == 0) continue;
    const int free = slot.FreeShareMilli(p);
    if (free < request.gpu_share_milli) continue;
    if (slot.FreeShareMemMb(p) < ShareMemMb(request, slot.info.gpus(p).memory_mb())) continue;
    fitting.emplace_back(free - request.gpu_share_milli, p);
  }
  most_fitting = std::max(most_fitting, static_cast<int>(fitting.size()));
  if (static_cast<int64_t>(fitting.size()) < request.total_gpus) return std::nullopt;
  std::sort(fitting.begin(), fitting.end());
  NodeChoice choice;
  choice.slot = &slot;
  for (int64_t i = 0; i < request.total_gpus; ++i) {
    const auto [left, p] = fitting[i];
    choice.positions.push_back(p);
    choice.leftover_milli += left;
    choice.fresh_gpus += slot.gpu_owner[p] == 0 ? 1 : 0;
  }
  std::sort(choice.positions.begin(), choice.positions.end());
  return choice;
}

}  // namespace

int64_t ShareMemMb(const GangRequest& request, int64_t gpu_memory_mb) {
  if (request.gpu_mem_limit_mb > 0) return request.gpu_mem_limit_mb;
  return gpu_memory_mb * request.gpu_share_milli / 1000;
}

PlacementResult PlaceShares(const ClusterState& cluster, const GangRequest& request) {
  std::optional<NodeChoice> best;
  int most_fitting = 0;
  bool any_shared_gpu = false;
  for (const NodeScan& n : cluster.scan()) {
    const NodeSlot& slot = *n.slot;
    for (int p = 0; p < slot.info.gpus_size() && !any_shared_gpu; ++p) any_shared_gpu = slot.Shareable(p);
    if (!n.up || !QueueMayUse(slot, request)) continue;
    const int64_t gpus = request.total_gpus;
    if (slot.FreeCpus() < request.CpusFor(gpus) || slot.FreeMemMb() < request.MemFor(gpus)) continue;
    std::optional<NodeChoice> choice = ChooseOnNode(slot, request, most_fitting);
    if (choice && (!best || choice->Key() < best->Key())) best = std::move(choice);
  }
  const std::string want = absl::StrCat(request.total_gpus, request.total_gpus == 1 ? " GPU" : " GPUs", " with ",
                                        request.gpu_share_milli / 10.0, "% free");
  if (!best) {
    if (!any_shared_gpu) {
      return PlacementResult::Unschedulable(
          absl::StrCat("waits for ", want, ": no node shares its GPUs (agent gpu_share_mode)"));
    }
    return PlacementResult::Unschedulable(absl::StrCat(
        "waits for ", want, " and the memory with it on one node with the CPUs and memory for it; the most any such "
        "node has now is ", most_fitting));
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
  allocation.set_policy("share best-fit");
  allocation.set_span("node");
  return PlacementResult::Placed(std::move(allocation));
}

}  // namespace gpusched::core::policy
