#include "daemon/core/placement_index.h"

#include <algorithm>
#include <bit>
#include <iterator>

namespace gpusched::core {

void PlacementIndex::Refresh(const NodeSlot& slot) {
  const size_t i = slot.scan_index;
  scan_[i] = {&slot,          slot.free_mask,  slot.FreeCpus(),     slot.FreeMemMb(),
              slot.gpu_count, slot.gpu_kind,   slot.accepts_jobs(), slot.runs_containers,
              slot.spot,      slot.queue_mask, slot.generation,     slot.network_ids};
  if (!is_stale_[i]) {
    is_stale_[i] = true;
    stale_.push_back(i);
  }
}

std::vector<ShareableGpu> PlacementIndex::EntriesOf(size_t scan_index) const {
  std::vector<ShareableGpu> entries;
  const NodeSlot& slot = *scan_[scan_index].slot;
  if (slot.shareable_mask == 0 || !slot.accepts_jobs()) return entries;
  const int free_gpus = std::popcount(slot.free_mask);
  for (int p = 0; p < slot.info.gpus_size() && p < 64; ++p) {
    const int free = slot.FreeShareMilli(p);
    if (free <= 0) continue;
    entries.push_back({free, free_gpus, slot.FreePeerGbps(p), scan_index, p});
  }
  return entries;
}

const std::set<ShareableGpu>& PlacementIndex::shares() const {
  for (size_t i : stale_) {
    is_stale_[i] = false;
    std::vector<ShareableGpu> now = EntriesOf(i);
    std::vector<ShareableGpu>& held = share_entries_[i];
    // Both lists are in position order, one entry per position at most.
    auto h = held.begin();
    auto n = now.begin();
    while (h != held.end() || n != now.end()) {
      if (n == now.end() || (h != held.end() && h->position < n->position)) {
        shares_.erase(*h++);
      } else if (h == held.end() || n->position < h->position) {
        shares_.insert(*n++);
      } else {
        if (*h != *n) {
          shares_.erase(*h);
          shares_.insert(*n);
        }
        ++h;
        ++n;
      }
    }
    held = std::move(now);
  }
  stale_.clear();
  return shares_;
}

void PlacementIndex::Insert(std::map<std::string, NodeSlot>& nodes, std::map<std::string, NodeSlot>::iterator added) {
  const size_t at = added == nodes.begin() ? 0 : std::prev(added)->second.scan_index + 1;
  for (auto it = std::next(added); it != nodes.end(); ++it) ++it->second.scan_index;
  added->second.scan_index = at;
  scan_.insert(scan_.begin() + static_cast<std::ptrdiff_t>(at), NodeScan{});
  is_stale_.insert(is_stale_.begin() + static_cast<std::ptrdiff_t>(at), false);
  for (size_t& i : stale_) i += i >= at ? 1 : 0;
  share_entries_.insert(share_entries_.begin() + static_cast<std::ptrdiff_t>(at), std::vector<ShareableGpu>{});
  for (size_t i = at + 1; i < share_entries_.size(); ++i) {
    for (ShareableGpu& entry : share_entries_[i]) entry.scan_index = i;
  }
  // Renumbering keeps the set's order: scan indices only move up, and the
  // ones that move all move past the ones that do not.
  std::set<ShareableGpu> renumbered;
  for (ShareableGpu entry : shares_) {
    entry.scan_index += entry.scan_index >= at ? 1 : 0;
    renumbered.insert(renumbered.end(), entry);
  }
  shares_ = std::move(renumbered);
  Refresh(added->second);
}

void PlacementIndex::Rebuild(std::map<std::string, NodeSlot>& nodes) {
  scan_.resize(nodes.size());
  shares_.clear();
  share_entries_.assign(nodes.size(), {});
  stale_.clear();
  is_stale_.assign(nodes.size(), false);
  size_t i = 0;
  for (auto& [name, slot] : nodes) {
    slot.scan_index = i++;
    Refresh(slot);
  }
}

}  // namespace gpusched::core
