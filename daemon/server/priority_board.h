#pragma once

#include <cstdint>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "common/threads/mutex.h"
#include "daemon/core/pending_ranking.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::server {

// The pending jobs' priority factors as of the latest scheduling pass, for
// the read handlers: they move with the clock (age, fair share), so they
// live here rather than in SQLite.
class PriorityBoard {
 public:
  // Scheduler thread: after each pass, what changed (a pass that scored the
  // whole queue again hands all of it; else the few jobs it scored).
  void Publish(core::PendingRanking::ScoreUpdates updates);
  // Any thread: sets job.priority when the job was pending and ranked.
  void Fill(v1::Job& job) const;

 private:
  mutable Mutex mu_;
  // The last whole scoring, shared with the ranking's snapshot, and the
  // jobs scored (or no longer ranked: nullopt) since.
  std::shared_ptr<const core::PendingRanking::Scores> all_ ABSL_GUARDED_BY(mu_) =
      std::make_shared<const core::PendingRanking::Scores>();
  absl::flat_hash_map<uint64_t, std::optional<core::PriorityScore>> since_ ABSL_GUARDED_BY(mu_);
};

}  // namespace gpusched::server
