#pragma once

#include <cstdint>
#include <memory>

#include "daemon/metrics/registry.h"

namespace gpusched::metrics {

// A replica's part in a daemon on PostgreSQL, served beside the daemon's
// own metrics when active and alone while a standby:
//
//   gpusched_replica_active              1 on the active replica, 0 on a standby
//   gpusched_leader_epoch                the leader epoch this replica last saw (one more per change of leader)
//   gpusched_replica_takeovers_total     times this replica became the active one
//
// Alert when sum(gpusched_replica_active) is 0: no replica schedules.
class ReplicaMetrics {
 public:
  ReplicaMetrics();
  std::shared_ptr<Registry> registry() const { return registry_; }

  void Standby(int64_t leader_epoch);
  void Active(int64_t epoch);

 private:
  std::shared_ptr<Registry> registry_;
  Gauge& active_;
  Gauge& epoch_;
  Counter& takeovers_;
};

}  // namespace gpusched::metrics
