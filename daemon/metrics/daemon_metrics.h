#pragma once

#include <memory>
#include <vector>

#include "absl/time/time.h"
#include "daemon/core/effects.h"
#include "daemon/metrics/job_metrics.h"
#include "daemon/metrics/node_metrics.h"
#include "daemon/metrics/pool_metrics.h"
#include "daemon/metrics/registry.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::metrics {

// gpuschedd's Prometheus metrics. The scheduling core knows nothing of them:
// they are measured around its calls and kept from what it returns (the
// Effects of each pass), so that `simulate` and the tests run the same core.
//
// Threads: Restore and Apply on the scheduler thread only (they keep
// per-job and per-node books); the Observe methods from any thread; the
// registry is read by the HTTP endpoint's thread (the series in registry.h
// are atomic or locked inside).
//
//   gpusched_submit_duration_seconds           SubmitJob, arrival to durable reply
//   gpusched_scheduling_pass_duration_seconds  one SchedulerCore::Schedule call
// plus JobMetrics', PlacementMetrics', NodeMetrics' and PoolMetrics' series.
class DaemonMetrics {
 public:
  DaemonMetrics();

  std::shared_ptr<Registry> registry() const { return registry_; }

  // Start-up: the unfinished jobs the store recovered, and the nodes as the
  // core restored them (all waiting for their agents).
  // The arrays' records too: the tasks they stand for are pending.
  void RestoreJobs(const std::vector<v1::Job>& jobs, const std::vector<JobArrayRecord>& arrays = {});
  void RestoreNodes(const std::vector<v1::Node>& nodes);
  // After a pass, before its effects are handed to the committer.
  void Apply(const core::Effects& fx);

  void ObserveSubmit(absl::Duration latency) { submit_.Observe(absl::ToDoubleSeconds(latency)); }
  void ObservePass(absl::Duration duration) { pass_.Observe(absl::ToDoubleSeconds(duration)); }

 private:
  std::shared_ptr<Registry> registry_;
  Histogram& submit_;
  Histogram& pass_;
  JobMetrics jobs_;
  NodeMetrics nodes_;
  PoolMetrics pools_;
};

}  // namespace gpusched::metrics
