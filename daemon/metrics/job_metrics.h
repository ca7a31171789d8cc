#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "common/job_array_record.h"
#include "daemon/metrics/placement_metrics.h"
#include "daemon/metrics/registry.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::metrics {

// Jobs as the queue sees them, kept from the latest version of every changed
// job the core hands out (Effects::jobs), so that nothing has to walk the
// queue: each change moves one job between states.
//
//   gpusched_jobs{state, queue}                   gauge: pending, starting, running
//   gpusched_jobs_submitted_total{queue}
//   gpusched_jobs_started_total{queue}            placed (again, after a requeue)
//   gpusched_jobs_finished_total{state, queue}    completed, failed, cancelled, timeout, node_fail
//   gpusched_job_wait_seconds                     histogram: submit until every rank runs
// and the placement of every start (PlacementMetrics).
class JobMetrics {
 public:
  explicit JobMetrics(Registry& registry);

  // A job the store recovered at start-up: counted where it is, not as a
  // new submit or start.
  void Restore(const v1::Job& job);
  // The latest version of a job that changed.
  void Update(const v1::Job& job);
  // The latest record of a job array (restored or changed): the tasks it
  // still stands for are pending jobs in the gauge. They count as submitted
  // once made jobs (Update), when the gauge moves them from here to there.
  void UpdateArray(const JobArrayRecord& record);

  size_t active_jobs() const { return active_.size(); }

 private:
  struct Tracked {
    v1::JobState state = v1::JOB_STATE_UNSPECIFIED;
    std::string queue;
    int attempt = 0;
  };

  Gauge& Depth(v1::JobState state, const std::string& queue);
  Counter& PerQueue(Family<Counter>& family, std::map<std::string, Counter*>& cache, const std::string& queue);
  Counter& Finished(v1::JobState state, const std::string& queue);

  Family<Gauge>& jobs_;
  Family<Counter>& submitted_;
  Family<Counter>& started_;
  Family<Counter>& finished_;
  Family<Counter>& requeued_;
  Histogram& wait_;
  PlacementMetrics placements_;

  absl::flat_hash_map<uint64_t, Tracked> active_;
  struct UnmadeTasks {
    int64_t count = 0;
    std::string queue;
  };
  absl::flat_hash_map<uint64_t, UnmadeTasks> arrays_;  // by array id
  // Label lookups in a Family compare and lock; these run on the
  // scheduler thread, so each series is looked up once.
  std::map<std::pair<int, std::string>, Gauge*> depth_;
  std::map<std::string, Counter*> submitted_by_queue_;
  std::map<std::string, Counter*> started_by_queue_;
  std::map<std::string, Counter*> requeued_by_queue_;
  std::map<std::pair<int, std::string>, Counter*> finished_by_state_;
};

// "pending", "node_fail": a job state as a label value.
std::string StateLabel(v1::JobState state);

}  // namespace gpusched::metrics
