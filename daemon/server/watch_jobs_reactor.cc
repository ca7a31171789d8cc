#include "daemon/server/watch_jobs_reactor.h"

#include <set>

#include "common/threads/mutex.h"

namespace gpusched::server {

WatchJobsReactor::WatchJobsReactor(JobEventHub& hub, const v1::WatchJobsRequest& request) : hub_(hub) {
  std::set<uint64_t> ids(request.job_ids().begin(), request.job_ids().end());
  subscription_ = hub_.Subscribe(std::move(ids), [this](const v1::JobEvent& event) { Enqueue(event); });
  // The watch is in place (v1::WatchJobs): job_id 0, no state.
  Enqueue(v1::JobEvent());
}

void WatchJobsReactor::Enqueue(const v1::JobEvent& event) {
  MutexLock lock(&mu_);
  if (finished_) return;
  if (backlog_.size() >= kMaxBacklog) {
    FinishOnce(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, "watcher fell too far behind; watch again"));
    return;
  }
  backlog_.push_back(event);
  if (!writing_) {
    writing_ = true;
    StartWrite(&backlog_.front());
  }
}

void WatchJobsReactor::OnWriteDone(bool ok) {
  MutexLock lock(&mu_);
  backlog_.pop_front();
  writing_ = false;
  if (!ok) {
    FinishOnce(grpc::Status(grpc::StatusCode::CANCELLED, "watcher went away"));
    return;
  }
  if (!backlog_.empty() && !finished_) {
    writing_ = true;
    StartWrite(&backlog_.front());
  }
}

void WatchJobsReactor::OnCancel() {
  MutexLock lock(&mu_);
  FinishOnce(grpc::Status::CANCELLED);
}

void WatchJobsReactor::FinishOnce(const grpc::Status& status) {
  if (finished_) return;
  finished_ = true;
  Finish(status);
}

void WatchJobsReactor::OnDone() {
  hub_.Unsubscribe(subscription_);
  delete this;
}

}  // namespace gpusched::server
