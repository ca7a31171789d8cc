#include "daemon/core/policy/mig_placement.h"

#include <algorithm>
#include <bit>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "daemon/core/policy/node_fit.h"

namespace gpusched::core::policy {
namespace {

int FreeInstancesOf(const NodeSlot& slot, int pos) {
  return static_cast<int>(std::count(slot.mig_owner[pos].begin(), slot.mig_owner[pos].end(), uint64_t{0}));
}

}  // namespace

std::vector<std::pair<int, int>> FreeMigInstances(const NodeSlot& slot, const std::string& profile, uint64_t eligible) {
  std::vector<std::tuple<int, int, int>> found;  // (free instances on the GPU, position, instance)
  for (uint64_t bits = slot.mig_mask & eligible; bits != 0; bits &= bits - 1) {
    const int p = std::countr_zero(bits);
    const v1::GpuInfo& gpu = slot.info.gpus(p);
    const int free_here = FreeInstancesOf(slot, p);
    for (int k = 0; k < gpu.mig_instances_size() && k < static_cast<int>(slot.mig_owner[p].size()); ++k) {
      if (slot.mig_owner[p][k] == 0 && absl::EqualsIgnoreCase(gpu.mig_instances(k).profile(), profile)) {
        found.emplace_back(free_here, p, k);
      }
    }
  }
  std::sort(found.begin(), found.end());
  std::vector<std::pair<int, int>> out;
  for (const auto& [free_here, p, k] : found) out.emplace_back(p, k);
  return out;
}

PlacementResult PlaceMigSlices(const ClusterState& cluster, const GangRequest& request) {
  const EligibleByKind eligible(cluster, request);
  const NodeSlot* best = nullptr;
  std::vector<std::pair<int, int>> best_instances;
  size_t most_free = 0;
  for (const NodeScan& n : cluster.scan()) {
    if (!n.up || !QueueMayUse(n, request) || n.slot->mig_mask == 0) continue;
    if (n.free_cpus < request.CpusFor(request.total_gpus) || n.free_mem_mb < request.MemFor(request.total_gpus))
      continue;
    std::vector<std::pair<int, int>> instances = FreeMigInstances(*n.slot, request.mig_profile, eligible.Of(n));
    most_free = std::max(most_free, instances.size());
    if (static_cast<int64_t>(instances.size()) < request.total_gpus) continue;
    // Name order breaks ties: the scan is in name order and only a smaller
    // leftover replaces the best.
    if (best == nullptr || instances.size() < best_instances.size()) {
      best = n.slot;
      best_instances = std::move(instances);
    }
  }
  if (best == nullptr) {
    return PlacementResult::Unschedulable(
        absl::StrCat("waits for ", request.total_gpus, " MIG instance", request.total_gpus == 1 ? "" : "s", " of ",
                     request.mig_profile, " on one node with the CPUs and memory for ",
                     request.total_gpus == 1 ? "it" : "them", "; the most free on any such node now is ", most_free));
  }
  v1::Allocation allocation;
  v1::NodeAllocation& part = *allocation.add_nodes();
  part = MakePart(*best, request, {}, 0);
  part.set_cpus(request.CpusFor(request.total_gpus));
  part.set_mem_mb(request.MemFor(request.total_gpus));
  part.set_gpu_share_mode(v1::GPU_SHARE_MODE_MIG);
  for (int64_t i = 0; i < request.total_gpus; ++i) {
    const auto [p, k] = best_instances[static_cast<size_t>(i)];
    const v1::MigInstance& instance = best->info.gpus(p).mig_instances(k);
    v1::MigSlice& slice = *part.add_mig_slices();
    slice.set_gpu_index(best->info.gpus(p).index());
    slice.set_mig_index(instance.index());
    slice.set_uuid(instance.uuid());
    slice.set_profile(instance.profile());
  }
  allocation.set_policy("mig best-fit");
  allocation.set_span("node");
  return PlacementResult::Placed(std::move(allocation));
}

}  // namespace gpusched::core::policy
