#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "absl/time/time.h"
#include "gpusched/v1/agent.pb.h"

namespace gpusched::agent {

// The final reports (EXITED, LAUNCH_FAILED) of the jobs this node ran lately.
// The protocol has no acknowledgement of a report, so they are sent again after
// every registration and answer a repeated LaunchJob or KillJob; bounded in
// count and age. Not thread-safe: the JobRunner's lock guards it.
class RecentExits {
 public:
  explicit RecentExits(size_t max_entries = 1000, absl::Duration max_age = absl::Hours(1));

  // Replaces an earlier report of the same job.
  void Add(const v1::JobUpdate& report, absl::Time now);
  std::optional<v1::JobUpdate> Find(uint64_t job_id, absl::Time now);
  // Oldest first.
  std::vector<v1::JobUpdate> All(absl::Time now);

 private:
  struct Entry {
    absl::Time added;
    v1::JobUpdate report;
  };
  void Prune(absl::Time now);

  size_t max_entries_;
  absl::Duration max_age_;
  std::deque<Entry> entries_;
};

}  // namespace gpusched::agent
