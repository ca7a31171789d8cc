#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "common/threads/mutex.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::server {

// Fans committed job events out to WatchJobs streams.
class JobEventHub {
 public:
  using Listener = std::function<void(const v1::JobEvent&)>;

  // `job_ids` empty = every job. The listener runs on the publishing thread
  // and must not block.
  uint64_t Subscribe(std::set<uint64_t> job_ids, Listener listener);
  // After this returns the listener is never called again.
  void Unsubscribe(uint64_t id);
  void Publish(const std::vector<v1::JobEvent>& events);

 private:
  struct Subscriber {
    std::set<uint64_t> job_ids;
    Listener listener;
  };
  Mutex mu_;
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<uint64_t, Subscriber> subscribers_ ABSL_GUARDED_BY(mu_);
};

}  // namespace gpusched::server
