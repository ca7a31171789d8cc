#include "daemon/core/placement_index.h"

#include <bit>

namespace gpusched::core {

void PlacementIndex::Refresh(const NodeSlot& slot) {
  scan_[slot.scan_index] = {&slot,          slot.free_mask,  slot.FreeCpus(),     slot.FreeMemMb(),
                            slot.gpu_count, slot.gpu_kind,   slot.accepts_jobs(), slot.runs_containers,
                            slot.spot,      slot.queue_mask, slot.generation,     slot.network_ids};
  std::vector<ShareableGpu>& entries = share_entries_[slot.scan_index];
  for (const ShareableGpu& e : entries) shares_.erase(e);
  entries.clear();
  if (slot.shareable_mask == 0 || !slot.accepts_jobs()) return;
  const int free_gpus = std::popcount(slot.free_mask);
  for (int p = 0; p < slot.info.gpus_size() && p < 64; ++p) {
    const int free = slot.FreeShareMilli(p);
    if (free <= 0) continue;
    entries.push_back({free, free_gpus, slot.FreePeerGbps(p), slot.scan_index, p});
    shares_.insert(entries.back());
  }
}

void PlacementIndex::Rebuild(std::map<std::string, NodeSlot>& nodes) {
  scan_.resize(nodes.size());
  shares_.clear();
  share_entries_.assign(nodes.size(), {});
  size_t i = 0;
  for (auto& [name, slot] : nodes) {
    slot.scan_index = i++;
    Refresh(slot);
  }
}

}  // namespace gpusched::core
