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

// The nearest network tier all of a multi-node gang's nodes share.
struct Span {
  const char* kind = "node";  // "node", "nvlink-domain", "leaf", "spine" or "cluster"
  NetworkTier tier = kNvlinkDomainTier;
  int id = -1;  // the shared switch or domain; -1 for "node" and "cluster"
};

Span SpanOf(const std::vector<GangPart>& parts) {
  if (parts.size() <= 1) return Span{};
  static constexpr struct {
    NetworkTier tier;
    const char* name;
  } kTiers[] = {{kNvlinkDomainTier, "nvlink-domain"}, {kLeafTier, "leaf"}, {kSpineTier, "spine"}};
  for (const auto& t : kTiers) {
    const int shared = parts.front().slot->network_ids[t.tier];
    bool all = shared >= 0;
    for (const GangPart& part : parts) all = all && part.slot->network_ids[t.tier] == shared;
    if (all) return Span{t.name, t.tier, shared};
  }
  return Span{"cluster", kSpineTier, -1};
}

double RingGbps(const NodeSlot& slot, const std::vector<int>& positions) {
  const size_t k = positions.size();
  if (k < 2) return 0;
  double ring = std::numeric_limits<double>::infinity();
  // A two-GPU ring is one link used both ways; count it once.
  for (size_t i = 0; i < (k == 2 ? 1 : k); ++i) {
    const int a = positions[i];
    const int b = positions[(i + 1) % k];
    ring = std::min(ring, slot.PairGbps(a, b));
  }
  return ring;
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
  std::vector<int> positions;
  topology::Link worst{topology::LinkKind::kSelf, 0};
  for (int i = 0; i < k; ++i) {
    positions.push_back(slot.PositionOf(part.gpu_indices(i)));
    topology::Link link = slot.topology.GpuLink(positions[i], slot.PositionOf(part.gpu_indices((i + 1) % k)));
    if (worst.kind == topology::LinkKind::kSelf || topology::BetterThan(worst, link)) worst = link;
  }
  if (worst_link != nullptr) *worst_link = topology::FormatLink(worst);
  return RingGbps(slot, positions);
}

std::vector<GangPart> PartsOf(const ClusterState& cluster, const v1::Allocation& allocation) {
  std::vector<GangPart> parts;
  for (const v1::NodeAllocation& node : allocation.nodes()) {
    const NodeSlot* slot = cluster.Find(node.node());
    if (slot == nullptr) continue;
    GangPart& part = parts.emplace_back();
    part.slot = slot;
    for (int32_t index : node.gpu_indices()) part.positions.push_back(slot->PositionOf(index));
  }
  return parts;
}

double GangBandwidthGBps(const std::vector<GangPart>& parts) {
  size_t total_gpus = 0;
  for (const GangPart& part : parts) total_gpus += part.positions.size();
  if (total_gpus < 2) return 0;
  const Span span = SpanOf(parts);
  double bandwidth = std::numeric_limits<double>::infinity();
  for (const GangPart& part : parts) {
    if (part.positions.size() >= 2) bandwidth = std::min(bandwidth, RingGbps(*part.slot, part.positions));
    if (parts.size() > 1) bandwidth = std::min(bandwidth, InterNodeBandwidthGBps(*part.slot, span.kind));
  }
  return bandwidth == std::numeric_limits<double>::infinity() ? 0 : bandwidth;
}

GangEstimate EstimateGang(const ClusterState& cluster, const v1::Allocation& allocation) {
  GangEstimate estimate;
  const std::vector<GangPart> parts = PartsOf(cluster, allocation);
  const Span span = SpanOf(parts);
  estimate.span = span.id < 0 ? span.kind : absl::StrCat(span.kind, " ", cluster.NetworkName(span.tier, span.id));
  estimate.bus_bandwidth_gbps = GangBandwidthGBps(parts);
  int total_gpus = 0;
  for (const v1::NodeAllocation& part : allocation.nodes()) total_gpus += part.gpu_indices_size();
  estimate.worst_link = "none";
  if (total_gpus < 2) return estimate;
  if (allocation.nodes_size() > 1) {
    estimate.worst_link = "NET";
  } else if (!parts.empty() && parts.front().positions.size() >= 2) {
    NodeRingBandwidthGBps(*parts.front().slot, allocation.nodes(0), &estimate.worst_link);
  }
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
