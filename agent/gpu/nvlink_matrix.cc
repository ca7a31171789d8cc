#include "agent/gpu/nvlink_matrix.h"

#include <algorithm>
#include <set>

namespace gpusched::agent {
namespace {

struct SwitchSide {
  int links = 0;
  bool any_unaddressed = false;
  std::set<PciAddress> switches;
};

SwitchSide SwitchLinksOf(const GpuNvLinks& gpu) {
  SwitchSide side;
  for (const NvLinkEnd& end : gpu.links) {
    if (end.peer != NvLinkPeer::kSwitch) continue;
    ++side.links;
    if (end.remote.has_value()) {
      side.switches.insert(*end.remote);
    } else {
      side.any_unaddressed = true;
    }
  }
  return side;
}

bool ShareSwitches(const SwitchSide& a, const SwitchSide& b) {
  if (a.links == 0 || b.links == 0) return false;
  if (a.any_unaddressed || b.any_unaddressed) return true;
  return std::any_of(a.switches.begin(), a.switches.end(),
                     [&](const PciAddress& s) { return b.switches.count(s) > 0; });
}

}  // namespace

NvLinkMatrix BuildNvLinkMatrix(const std::vector<GpuNvLinks>& gpus) {
  NvLinkMatrix m;
  m.num_gpus = static_cast<int>(gpus.size());
  m.links.assign(static_cast<size_t>(m.num_gpus) * m.num_gpus, 0);
  auto cell = [&](int i, int j) -> int& { return m.links[static_cast<size_t>(i) * m.num_gpus + j]; };

  for (int i = 0; i < m.num_gpus; ++i) {
    for (const NvLinkEnd& end : gpus[i].links) {
      if (end.peer != NvLinkPeer::kGpu && end.peer != NvLinkPeer::kUnknown) continue;
      if (!end.remote.has_value()) continue;
      for (int j = 0; j < m.num_gpus; ++j) {
        if (j != i && gpus[j].address == end.remote) ++cell(i, j);
      }
    }
  }

  std::vector<SwitchSide> sides;
  sides.reserve(gpus.size());
  for (const GpuNvLinks& gpu : gpus) {
    sides.push_back(SwitchLinksOf(gpu));
    if (sides.back().links > 0) m.nvswitch = true;
  }
  for (int i = 0; i < m.num_gpus; ++i) {
    for (int j = 0; j < m.num_gpus; ++j) {
      if (i == j || gpus[i].fabric != gpus[j].fabric) continue;
      if (ShareSwitches(sides[i], sides[j])) cell(i, j) += std::min(sides[i].links, sides[j].links);
    }
  }
  return m;
}

}  // namespace gpusched::agent
