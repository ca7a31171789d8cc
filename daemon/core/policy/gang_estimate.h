#pragma once

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "daemon/core/cluster_state.h"

namespace gpusched::core::policy {

// How fast a gang's ring all-reduce should run where it was placed, the
// worst link it crosses and how far it spans. One function for every policy,
// so that policies (and the simulator) are compared on the same yardstick.
struct GangEstimate {
  // GB/s per GPU the slowest hop of the ring sees; 0 for a single GPU or a
  // CPU-only job (no ring).
  double bus_bandwidth_gbps = 0;
  std::string worst_link;  // "NV18", "PXB", "SYS", "NET"; "none" without a ring
  std::string span;        // "node", "nvlink-domain D", "leaf L", "spine S", "cluster"
};

// Inter-node figures, ESTIMATES like link_bandwidth.h's, per GPU and direction:
// - same NVLink domain (multi-node NVLink): the GPU's NVLink bandwidth, as
//   NV18 of its generation (GB200 NVL72 gives every GPU its full NVLink);
// - same leaf switch: the node's NIC bandwidth shared by its GPUs; NICs of
//   unknown speed count as 200 Gb/s (HDR InfiniBand / 200GbE, what the
//   fixtures' machines ship with), a node without known NICs as one;
// - same spine: half that (a 2:1 oversubscribed fabric, the common
//   non-blocking-leaf design); across spines or unknown: a quarter.
double InterNodeBandwidthGBps(const NodeSlot& slot, absl::string_view span_kind);

// The ring bandwidth of one node's GPUs in the given order (gpu indices);
// 0 for fewer than two GPUs.
double NodeRingBandwidthGBps(const NodeSlot& slot, const v1::NodeAllocation& part, std::string* worst_link);

// One node's share of a gang as a policy weighs it, before any allocation
// is built: the GPUs' positions in slot->info.gpus, in ring order.
struct GangPart {
  const NodeSlot* slot = nullptr;
  std::vector<int> positions;
};

// An allocation's parts on the nodes the cluster knows.
std::vector<GangPart> PartsOf(const ClusterState& cluster, const v1::Allocation& allocation);

// EstimateGang's bus_bandwidth_gbps for these parts: what a policy compares
// candidate gangs by, at the price of a few table reads per GPU.
double GangBandwidthGBps(const std::vector<GangPart>& parts);

GangEstimate EstimateGang(const ClusterState& cluster, const v1::Allocation& allocation);

// Writes EstimateGang's figures and the policy's name into the allocation.
void Annotate(const ClusterState& cluster, absl::string_view policy, v1::Allocation& allocation);

}  // namespace gpusched::core::policy
