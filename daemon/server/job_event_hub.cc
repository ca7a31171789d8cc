#include "daemon/server/job_event_hub.h"

#include "common/threads/mutex.h"

namespace gpusched::server {

uint64_t JobEventHub::Subscribe(std::set<uint64_t> job_ids, Listener listener) {
  MutexLock lock(&mu_);
  const uint64_t id = next_id_++;
  subscribers_[id] = Subscriber{std::move(job_ids), std::move(listener)};
  return id;
}

void JobEventHub::Unsubscribe(uint64_t id) {
  MutexLock lock(&mu_);
  subscribers_.erase(id);
}

void JobEventHub::Publish(const std::vector<v1::JobEvent>& events) {
  if (events.empty()) return;
  MutexLock lock(&mu_);
  for (const auto& [id, sub] : subscribers_) {
    for (const v1::JobEvent& event : events) {
      if (sub.job_ids.empty() || sub.job_ids.contains(event.job_id())) sub.listener(event);
    }
  }
}

}  // namespace gpusched::server
