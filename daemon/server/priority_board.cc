#include "daemon/server/priority_board.h"

#include <utility>

#include "common/threads/mutex.h"

namespace gpusched::server {

void PriorityBoard::Publish(core::PendingRanking::ScoreUpdates updates) {
  if (updates.all == nullptr && updates.changed.empty()) return;
  MutexLock lock(&mu_);
  if (updates.all != nullptr) {
    all_ = std::move(updates.all);
    since_.clear();
  }
  for (auto& [id, score] : updates.changed) {
    // A job no longer ranked needs a mark only where the whole copy has it.
    if (!score.has_value() && !all_->contains(id)) {
      since_.erase(id);
    } else {
      since_[id] = std::move(score);
    }
  }
}

void PriorityBoard::Fill(v1::Job& job) const {
  if (job.state() != v1::JOB_STATE_PENDING) return;
  std::optional<core::PriorityScore> score;
  {
    MutexLock lock(&mu_);
    if (auto it = since_.find(job.id()); it != since_.end()) {
      score = it->second;
    } else if (auto at = all_->find(job.id()); at != all_->end()) {
      score = at->second;
    }
  }
  if (score.has_value()) *job.mutable_priority() = score->ToProto();
}

}  // namespace gpusched::server
