#include "daemon/core/released_jobs.h"

#include <utility>

namespace gpusched::core {

ReleasedJobs::ReleasedJobs(ClusterState& cluster, std::vector<Job> jobs)
    : cluster_(cluster), jobs_(std::move(jobs)), released_(jobs_.size(), false) {}

ReleasedJobs::~ReleasedJobs() { SetFirst(0); }

void ReleasedJobs::Set(const std::vector<bool>& released) {
  for (size_t i = 0; i < jobs_.size(); ++i) Change(i, released[i]);
}

void ReleasedJobs::SetFirst(size_t count) {
  for (size_t i = 0; i < jobs_.size(); ++i) Change(i, i < count);
}

void ReleasedJobs::Change(size_t i, bool release) {
  if (released_[i] == release) return;
  const Job& job = jobs_[i];
  if (release) {
    cluster_.Release(job.id, *job.allocation);
  } else {
    // Taking back what was released with nothing else changed in between.
    cluster_.Allocate(job.id, *job.allocation).IgnoreError();
  }
  released_[i] = release;
}

}  // namespace gpusched::core
