#include "daemon/metrics/replica_metrics.h"

namespace gpusched::metrics {

ReplicaMetrics::ReplicaMetrics()
    : registry_(std::make_shared<Registry>()),
      active_(BuildGauge()
                  .Name("gpusched_replica_active")
                  .Help("1 on the active gpuschedd replica, 0 on a standby")
                  .Register(*registry_)
                  .Add({})),
      epoch_(BuildGauge()
                 .Name("gpusched_leader_epoch")
                 .Help("The leader epoch this replica last saw; it grows by one at each change of leader")
                 .Register(*registry_)
                 .Add({})),
      takeovers_(BuildCounter()
                     .Name("gpusched_replica_takeovers_total")
                     .Help("Times this replica became the active one")
                     .Register(*registry_)
                     .Add({})) {}

void ReplicaMetrics::Standby(int64_t leader_epoch) {
  active_.Set(0);
  epoch_.Set(static_cast<double>(leader_epoch));
}

void ReplicaMetrics::Active(int64_t epoch) {
  active_.Set(1);
  epoch_.Set(static_cast<double>(epoch));
  takeovers_.Increment();
}

}  // namespace gpusched::metrics
