#pragma once

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "daemon/core/gang_request.h"
#include "daemon/core/policy/node_fit.h"

namespace gpusched::core::policy {

// What a search worked out for one group of candidate nodes (a switch, an
// NVLink domain) and one gang shape. The answer depends on nothing else:
// each node's identity and topology (its slot and generation) and what it
// offers (mask, usable GPUs). Between two placements of a pass only the
// groups whose nodes changed need working out again; on an empty cluster
// that is one group in a hundred.
//
// A few shapes per group, the least recently used replaced: bounded memory,
// and a miss costs a comparison, not an allocation.
template <typename Value>
class GroupMemo {
 public:
  // Room for groups 0 to `groups` - 1. Before a search, not during one: it
  // may move every entry.
  void Prepare(size_t groups) {
    if (slots_.size() < groups) slots_.resize(groups);
  }

  // The value remembered for group `index` (< Prepare's `groups`) with
  // `req`'s shape over `group`, or null. Valid until the next Remember for
  // the same index, or Prepare.
  const Value* Find(size_t index, const GangRequest& req, absl::Span<const GpuCandidate> group) {
    ++clock_;
    for (Entry& e : slots_[index]) {
      if (e.used != 0 && e.Matches(req, group)) {
        e.used = clock_;
        return &e.value;
      }
    }
    return nullptr;
  }

  // Remembers `value` for the arguments of the last (missed) Find of `index`.
  const Value& Remember(size_t index, const GangRequest& req, absl::Span<const GpuCandidate> group, Value value) {
    std::array<Entry, kShapesPerGroup>& slot = slots_[index];
    Entry* oldest = &slot[0];
    for (Entry& e : slot) {
      if (e.used < oldest->used) oldest = &e;
    }
    oldest->Set(req, group);
    oldest->value = std::move(value);
    oldest->used = clock_;
    return oldest->value;
  }

 private:
  static constexpr size_t kShapesPerGroup = 4;
  struct Member {
    const NodeSlot* slot;
    uint64_t generation;
    uint64_t mask;
    int64_t usable;
  };
  struct Entry {
    uint64_t used = 0;  // 0: empty
    int64_t total_gpus = 0;
    int64_t nodes = 0;
    int64_t gpus_per_node = 0;
    std::vector<Member> members;
    Value value{};

    bool Matches(const GangRequest& req, absl::Span<const GpuCandidate> group) const {
      if (req.total_gpus != total_gpus || req.nodes != nodes || req.gpus_per_node != gpus_per_node ||
          group.size() != members.size()) {
        return false;
      }
      for (size_t i = 0; i < group.size(); ++i) {
        const GpuCandidate& c = group[i];
        const Member& m = members[i];
        if (c.slot != m.slot || c.generation != m.generation || c.mask != m.mask || c.usable != m.usable) {
          return false;
        }
      }
      return true;
    }
    void Set(const GangRequest& req, absl::Span<const GpuCandidate> group) {
      total_gpus = req.total_gpus;
      nodes = req.nodes;
      gpus_per_node = req.gpus_per_node;
      members.clear();
      for (const GpuCandidate& c : group) members.push_back({c.slot, c.generation, c.mask, c.usable});
    }
  };

  std::vector<std::array<Entry, kShapesPerGroup>> slots_;
  uint64_t clock_ = 0;
};

}  // namespace gpusched::core::policy
