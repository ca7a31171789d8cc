#include "daemon/metrics/placement_metrics.h"

namespace gpusched::metrics {
namespace {

// GB/s of a ring all-reduce per GPU, from PCIe across sockets (a few) to
// NVSwitch on Blackwell (~900): each bucket about twice the one before.
Histogram::BucketBoundaries BandwidthBuckets() {
  Histogram::BucketBoundaries buckets;
  for (double gbps : {1.0, 2.5, 5.0, 10.0, 20.0, 40.0, 80.0, 160.0, 320.0, 640.0, 1280.0})
    buckets.push_back(gbps * 1e9);
  return buckets;
}

}  // namespace

PlacementMetrics::PlacementMetrics(Registry& registry)
    : placements_(BuildCounter()
                      .Name("gpusched_placements_total")
                      .Help("Gangs placed, by how far they span (node, nvlink-domain, leaf, spine, cluster) and the "
                            "slowest link their ring crosses (NV18, PXB, SYS, NET; none without a ring)")
                      .Register(registry)),
      bandwidth_(BuildHistogram()
                     .Name("gpusched_placement_bus_bandwidth_bytes_per_second")
                     .Help("Estimated ring all-reduce bus bandwidth per GPU of each placed gang with two or more GPUs")
                     .Register(registry)
                     .Add({}, BandwidthBuckets())) {}

std::string PlacementMetrics::SpanTier(const std::string& span) {
  if (span.empty()) return "unknown";
  return span.substr(0, span.find(' '));
}

void PlacementMetrics::Observe(const v1::Allocation& allocation) {
  const std::string worst = allocation.worst_link().empty() ? "none" : allocation.worst_link();
  auto key = std::make_pair(SpanTier(allocation.span()), worst);
  auto it = by_kind_.find(key);
  if (it == by_kind_.end()) {
    Counter* counter = &placements_.Add({{"span", key.first}, {"worst_link", key.second}});
    it = by_kind_.emplace(std::move(key), counter).first;
  }
  it->second->Increment();
  if (allocation.est_bus_bandwidth_gbps() > 0) bandwidth_.Observe(allocation.est_bus_bandwidth_gbps() * 1e9);
}

}  // namespace gpusched::metrics
