#pragma once

#include <cstdint>
#include <deque>

#include "absl/base/thread_annotations.h"
#include "common/threads/mutex.h"
#include "daemon/server/job_event_hub.h"
#include "gpusched/v1/scheduler.pb.h"
#include "grpcpp/support/server_callback.h"

namespace gpusched::server {

// Streams committed job events to one WatchJobs caller. A caller that falls
// too far behind is cut off with RESOURCE_EXHAUSTED rather than letting the
// daemon buffer without bound.
class WatchJobsReactor final : public grpc::ServerWriteReactor<v1::JobEvent> {
 public:
  WatchJobsReactor(JobEventHub& hub, const v1::WatchJobsRequest& request);

  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  static constexpr size_t kMaxBacklog = 100000;

  void Enqueue(const v1::JobEvent& event);
  void FinishOnce(const grpc::Status& status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  JobEventHub& hub_;
  uint64_t subscription_ = 0;
  Mutex mu_;
  std::deque<v1::JobEvent> backlog_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace gpusched::server
