#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "common/threads/mutex.h"
#include "daemon/store/job_store.h"

namespace gpusched::server {

// A few threads, each with its own read-only connection to the store,
// so that GetJob/ListJobs never wait on the scheduler thread nor block a gRPC
// callback thread.
class ReadPool {
 public:
  using Read = std::function<void(store::JobReader&)>;
  // A read that waited or ran this long is logged: a client's deadline is
  // usually a few seconds, and the log should say which of the two it was.
  static constexpr std::chrono::milliseconds kSlowRead{1000};

  using OpenReader = std::function<absl::StatusOr<std::unique_ptr<store::JobReader>>()>;
  static absl::StatusOr<std::unique_ptr<ReadPool>> Open(const OpenReader& open_reader, int threads);
  ~ReadPool();
  void Post(Read read);

 private:
  ReadPool() = default;
  void Run(store::JobReader& reader);

  std::vector<std::unique_ptr<store::JobReader>> readers_;
  std::vector<std::thread> threads_;
  Mutex mu_;
  CondVar wake_;
  struct Queued {
    Read read;
    std::chrono::steady_clock::time_point posted;
  };
  std::deque<Queued> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace gpusched::server
