#pragma once

#include <cstdint>
#include <vector>

#include "daemon/core/cluster_state.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::core {

// Some of a list of placed jobs let go of their resources in the cluster, for
// trial placements: which jobs must end or be evicted before a waiting job
// fits (backfill's reservation, preemption). Such a search tries a few dozen
// sets out of thousands of jobs, each close to the one before (a bisection,
// then sparing one job at a time), so a change releases and takes back only
// the jobs that differ from the set before. The cluster is as it was once
// this is gone.
class ReleasedJobs {
 public:
  struct Job {
    uint64_t id = 0;
    const v1::Allocation* allocation = nullptr;
  };

  // Nothing is released yet. Placed jobs hold disjoint resources, so any
  // subset of them can be held at once, and the order of changes does not
  // matter.
  ReleasedJobs(ClusterState& cluster, std::vector<Job> jobs);
  ~ReleasedJobs();
  ReleasedJobs(const ReleasedJobs&) = delete;
  ReleasedJobs& operator=(const ReleasedJobs&) = delete;

  // Exactly the jobs marked in `released` (one entry per job) are released.
  void Set(const std::vector<bool>& released);
  // Exactly the first `count` jobs are released.
  void SetFirst(size_t count);

  // The cluster as it stands with the jobs released, for trial placements.
  ClusterState& cluster() { return cluster_; }

 private:
  void Change(size_t i, bool release);

  ClusterState& cluster_;
  std::vector<Job> jobs_;
  std::vector<bool> released_;
};

}  // namespace gpusched::core
