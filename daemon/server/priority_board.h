#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "common/threads/mutex.h"
#include "daemon/core/queue/priority.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::server {

// The pending jobs' priority factors of the latest scheduling pass, for the
// read handlers: they are recomputed each pass (age and fair share move with
// the clock), so they live here rather than in SQLite.
class PriorityBoard {
 public:
  using Scores = absl::flat_hash_map<uint64_t, core::PriorityScore>;

  // Scheduler thread: after each pass.
  void Publish(const std::vector<std::pair<uint64_t, core::PriorityScore>>& scores);
  // Any thread: sets job.priority when the job was pending in the last pass.
  void Fill(v1::Job& job) const;

 private:
  mutable Mutex mu_;
  std::shared_ptr<const Scores> scores_ ABSL_GUARDED_BY(mu_) = std::make_shared<const Scores>();
};

}  // namespace gpusched::server
