#pragma once

#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace gpusched::topology {

// How two devices of a node reach each other, in the classes that
// `nvidia-smi topo -m` prints (see its Legend):
//   X     self
//   NV<n> a bonded set of n NVLinks (directly or through NVSwitch; topo -m
//         does not say which, see NodeTopology::nvswitch)
//   PIX   at most a single PCIe bridge/switch
//   PXB   multiple PCIe bridges, without the PCIe host bridge
//   PHB   a PCIe host bridge (typically the CPU)
//   NODE  PCIe plus the interconnect between host bridges within a NUMA node
//   SYS   PCIe plus the SMP interconnect between NUMA nodes (QPI/UPI/xGMI);
//         older drivers print it as SOC
enum class LinkKind { kSelf, kNvLink, kPix, kPxb, kPhb, kNode, kSys };

struct Link {
  LinkKind kind = LinkKind::kSys;
  int nvlinks = 0;  // n of NV<n>; 0 unless kind == kNvLink

  friend bool operator==(const Link&, const Link&) = default;
};

// "NV12" -> {kNvLink, 12}, "PIX", "PXB", "PHB", "NODE", "SYS" (or "SOC"),
// "X" -> kSelf. Exact, case-sensitive, no surrounding whitespace. nullopt for
// anything else, including "NV0" and NV counts above 64.
std::optional<Link> ParseLink(absl::string_view text);

// The inverse of ParseLink: "NV12", "PIX", ..., "X".
std::string FormatLink(const Link& link);
std::string LinkKindName(LinkKind kind);  // "NVLink", "PIX", ..., "X"

// Placement preference: higher is better. Self > NV<n> (more links first) >
// PIX > PXB > PHB > NODE > SYS.
int LinkRank(const Link& link);

// True when `a` is strictly better than `b` for placing communicating ranks.
inline bool BetterThan(const Link& a, const Link& b) { return LinkRank(a) > LinkRank(b); }

}  // namespace gpusched::topology
