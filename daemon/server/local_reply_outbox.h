#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "common/threads/mutex.h"

namespace gpusched::server {

// Where local calls' replies wait for the Unix listener's thread, which
// alone writes to its connections. A call finishes on whichever thread ran
// it (the scheduler's, the committer's, a reader's) and may finish after
// the listener is gone: the calls share the outbox with it, and what is
// posted once it is closed is dropped.
class LocalReplyOutbox {
 public:
  static absl::StatusOr<std::shared_ptr<LocalReplyOutbox>> Create();
  ~LocalReplyOutbox();
  LocalReplyOutbox(const LocalReplyOutbox&) = delete;
  LocalReplyOutbox& operator=(const LocalReplyOutbox&) = delete;

  // Any thread: `frame` for connection `connection`, and the listener woken.
  void Post(uint64_t connection, std::string frame);
  // Wakes the listener without a reply (to stop it).
  void Wake();
  // The listener's: readable when something was posted or Wake was called.
  int wake_fd() const { return wake_fd_; }
  // The listener's: what was posted since, in order; clears the wake.
  std::vector<std::pair<uint64_t, std::string>> TakeAll();
  // The listener's, as it stops: later posts are dropped.
  void Close();

 private:
  explicit LocalReplyOutbox(int wake_fd) : wake_fd_(wake_fd) {}

  const int wake_fd_;  // an eventfd
  Mutex mu_;
  std::vector<std::pair<uint64_t, std::string>> posted_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace gpusched::server
