#pragma once

#include <cstdint>

#include "daemon/core/placement/gpu_graph.h"

namespace gpusched::core::placement {

// How well a set of GPUs serves one gang under preference rules 1 and 2 (see
// gpu_choice.h), packed into one integer so that a larger value is a better
// set and the searches compare sets with a single `<`.
struct SubsetScore {
  BandwidthLevel ring_level = 0;  // best ring bottleneck; 0 for one GPU
  BandwidthLevel pair_level = 0;  // weakest pair; 0 for one GPU
  int nic_rank = 0;               // the worst GPU's best-NIC LinkRank
  int domains_spanned = 0;        // CPU locality domains touched

  // Bits 48-63 ring, 32-47 pair, 16-31 NIC rank, 0-7 (255 - domains), so
  // that fewer domains count as better. Every field fits: levels are
  // uint16, LinkRank stays below 1001, domains below 65.
  uint64_t Packed() const {
    return (uint64_t{ring_level} << 48) | (uint64_t{pair_level} << 32) |
           (static_cast<uint64_t>(nic_rank & 0xffff) << 16) | static_cast<uint64_t>(255 - domains_spanned);
  }
};

}  // namespace gpusched::core::placement
