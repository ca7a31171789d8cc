#include "daemon/core/policy/gang_estimate.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "common/topology/link_bandwidth.h"

namespace gpusched::core::policy {
namespace {

constexpr double kAssumedNicGbps = 200;
constexpr double kSpineFactor = 0.5;
constexpr double kClusterFactor = 0.25;

topology::GpuGeneration Generation(const NodeSlot& slot) {
  return slot.info.gpus_size() == 0 ? topology::GpuGeneration::kUnknown
                                    : topology::GpuGenerationFromModel(slot.info.gpus(0).model());
}

double NicBandwidthPerGpu(const NodeSlot& slot) {
  double gbps = 0;
  for (const topology::NicInfo& nic : slot.topology.nics()) {
    gbps += nic.link_speed_gbps > 0 ? nic.link_speed_gbps : kAssumedNicGbps;
  }
  if (gbps == 0) gbps = kAssumedNicGbps;
  const int gpus = std::max(1, slot.info.gpus_size());
  return gbps / 8.0 / gpus;
}

// The span of a multi-node gang: the nearest network tier all its nodes share.
std::string Span(const ClusterState& cluster, const v1::Allocation& allocation, std::string* kind) {
  if (allocation.nodes_size() <= 1) {
    *kind = "node";
    return "node";
  }
  static constexpr struct {
    NetworkTier tier;
    const char* name;
  } kTiers[] = {{kNvlinkDomainTier, "nvlink-domain"}, {kLeafTier, "leaf"}, {kSpineTier, "spine"}};
  for (const auto& t : kTiers) {
    int shared = -2;
    for (const v1::NodeAllocation& part : allocation.nodes()) {
      const NodeSlot* slot = cluster.Find(part.node());
      int id = slot == nullptr ? -1 : slot->network_ids[t.tier];
      if (id < 0 || (shared != -2 && id != shared)) {
        shared = -1;
        break;
      }
      shared = id;
    }
    if (shared >= 0) {
      *kind = t.name;
      return absl::StrCat(t.name, " ", cluster.NetworkName(t.tier, shared));
    }
  }
  *kind = "cluster";
  return "cluster";
}

}  // namespace

double InterNodeBandwidthGBps(const NodeSlot& slot, absl::string_view span_kind) {
  if (span_kind == "nvlink-domain") {
    return topology::EstimatedLinkBandwidthGBps({topology::LinkKind::kNvLink, 18}, Generation(slot));
  }
  const double leaf = NicBandwidthPerGpu(slot);
  if (span_kind == "leaf") return leaf;
  if (span_kind == "spine") return leaf * kSpineFactor;
  return leaf * kClusterFactor;
}

double NodeRingBandwidthGBps(const NodeSlot& slot, const v1::NodeAllocation& part, std::string* worst_link) {
  const int k = part.gpu_indices_size();
  if (k < 2) return 0;
  double ring = std::numeric_limits<double>::infinity();
  topology::Link worst{topology::LinkKind::kSelf, 0};
  for (int i = 0; i < k; ++i) {
    int a = slot.PositionOf(part.gpu_indices(i));
    int b = slot.PositionOf(part.gpu_indices((i + 1) % k));
    // A two-GPU ring is one link used both ways; count it once.
    if (k == 2 && i == 1) break;
    ring = std::min(ring, topology::EstimatedGpuPairBandwidthGBps(slot.topology, a, b));
    topology::Link link = slot.topology.GpuLink(a, b);
    if (worst.kind == topology::LinkKind::kSelf || topology::BetterThan(worst, link)) worst = link;
  }
  if (worst_link != nullptr) *worst_link = topology::FormatLink(worst);
  return ring;
}

GangEstimate EstimateGang(const ClusterState& cluster, const v1::Allocation& allocation) {
  GangEstimate estimate;
  std::string kind;
  estimate.span = Span(cluster, allocation, &kind);
  int total_gpus = 0;
  for (const v1::NodeAllocation& part : allocation.nodes()) total_gpus += part.gpu_indices_size();
  if (total_gpus < 2) {
    estimate.worst_link = "none";
    return estimate;
  }
  double bandwidth = std::numeric_limits<double>::infinity();
  std::string worst = "none";
  topology::Link worst_link{topology::LinkKind::kSelf, 0};
  for (const v1::NodeAllocation& part : allocation.nodes()) {
    const NodeSlot* slot = cluster.Find(part.node());
    if (slot == nullptr) continue;
    std::string part_worst;
    if (part.gpu_indices_size() >= 2) {
      bandwidth = std::min(bandwidth, NodeRingBandwidthGBps(*slot, part, &part_worst));
      auto parsed = topology::ParseLink(part_worst);
      if (parsed && (worst_link.kind == topology::LinkKind::kSelf || topology::BetterThan(worst_link, *parsed))) {
        worst_link = *parsed;
        worst = part_worst;
      }
    }
    if (allocation.nodes_size() > 1) bandwidth = std::min(bandwidth, InterNodeBandwidthGBps(*slot, kind));
  }
  estimate.bus_bandwidth_gbps = bandwidth == std::numeric_limits<double>::infinity() ? 0 : bandwidth;
  estimate.worst_link = allocation.nodes_size() > 1 ? "NET" : worst;
  return estimate;
}

void Annotate(const ClusterState& cluster, absl::string_view policy, v1::Allocation& allocation) {
  GangEstimate estimate = EstimateGang(cluster, allocation);
  allocation.set_est_bus_bandwidth_gbps(estimate.bus_bandwidth_gbps);
  allocation.set_worst_link(estimate.worst_link);
  allocation.set_span(estimate.span);
  allocation.set_policy(std::string(policy));
}

}  // namespace gpusched::core::policy
