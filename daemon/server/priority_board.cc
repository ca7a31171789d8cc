#include "daemon/server/priority_board.h"

#include "common/threads/mutex.h"

namespace gpusched::server {

void PriorityBoard::Publish(const std::vector<std::pair<uint64_t, core::PriorityScore>>& scores) {
  // Built outside the lock: readers only ever hold it to take the pointer.
  auto fresh = std::make_shared<const Scores>(scores.begin(), scores.end());
  MutexLock lock(&mu_);
  scores_ = std::move(fresh);
}

void PriorityBoard::Fill(v1::Job& job) const {
  std::shared_ptr<const Scores> scores;
  {
    MutexLock lock(&mu_);
    scores = scores_;
  }
  if (job.state() != v1::JOB_STATE_PENDING) return;
  auto it = scores->find(job.id());
  if (it != scores->end()) *job.mutable_priority() = it->second.ToProto();
}

}  // namespace gpusched::server
