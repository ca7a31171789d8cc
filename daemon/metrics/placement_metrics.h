#pragma once

#include <map>
#include <string>
#include <utility>

#include "daemon/metrics/registry.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::metrics {

// How good the placements were, from the estimate the core records with each
// allocation (daemon/core/policy/gang_estimate.h): the bus bandwidth of the
// gang's ring and counts by how far it spans and its worst link. This is how
// an operator sees whether topology-aware placement pays off.
//
//   gpusched_placements_total{span, worst_link}
//   gpusched_placement_bus_bandwidth_bytes_per_second (histogram; gangs with a ring only)
class PlacementMetrics {
 public:
  explicit PlacementMetrics(Registry& registry);

  void Observe(const v1::Allocation& allocation);

  // "leaf leaf-01" -> "leaf": the tier, without the switch name, so that the
  // series stay few on a cluster with hundreds of switches.
  static std::string SpanTier(const std::string& span);

 private:
  Family<Counter>& placements_;
  Histogram& bandwidth_;
  std::map<std::pair<std::string, std::string>, Counter*> by_kind_;
};

}  // namespace gpusched::metrics
