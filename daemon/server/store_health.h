#pragma once

#include <atomic>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "common/threads/mutex.h"

namespace gpusched::server {

// Whether the state store takes writes right now. The committer says so
// after every commit; while commits fail (a full disk), the service refuses
// new changes with RESOURCE_EXHAUSTED and goes on serving reads, and the
// committer retries until the store takes the changes already accepted.
class StoreHealth {
 public:
  void CommitFailed(const absl::Status& why);
  // Returns whether commits had been failing until now.
  bool CommitSucceeded();
  // OK, or RESOURCE_EXHAUSTED saying why nothing new is accepted.
  absl::Status AcceptingChanges() const;
  bool failing() const { return failing_.load(std::memory_order_acquire); }

 private:
  std::atomic<bool> failing_{false};
  mutable Mutex mu_;
  absl::Status why_ ABSL_GUARDED_BY(mu_);
};

}  // namespace gpusched::server
