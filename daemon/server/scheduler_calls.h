#pragma once

#include <functional>

#include "absl/status/status.h"
#include "daemon/metrics/daemon_metrics.h"
#include "daemon/server/caller.h"
#include "daemon/server/read_pool.h"
#include "daemon/server/scheduler_loop.h"
#include "daemon/server/store_health.h"
#include "gpusched/v1/scheduler.pb.h"

namespace gpusched::server {

// How a unary call ends: called once, from whichever thread finished it.
// The response is sent only when the status is OK.
using CallDone = std::function<void(const absl::Status&)>;

// gpusched.v1.Scheduler's unary methods, whatever carried the call: gRPC
// (SchedulerService) or the CLI's local calls on the Unix socket
// (LocalCallServer). Each method is handed who the transport proved the
// caller to be; `request` and `response` must stay alive until `done` is
// called. Methods never block and hold no scheduling logic: writes become
// commands for the scheduler thread, reads go to the read pool, and a
// change is answered once its batch is durable.
class SchedulerCalls {
 public:
  // `metrics` may be null (no --metrics-listen). Every call needs a user
  // (RequireUser). Jobs run as root only with `allow_root_jobs`. While
  // `store` fails commits, every change is refused with its reason.
  SchedulerCalls(SchedulerLoop& loop, ReadPool& reads, const StoreHealth& store, metrics::DaemonMetrics* metrics,
                 bool allow_root_jobs)
      : loop_(loop), reads_(reads), store_(store), metrics_(metrics), allow_root_jobs_(allow_root_jobs) {}

  void SubmitJob(const Caller& caller, const v1::SubmitJobRequest& request, v1::SubmitJobResponse* response,
                 CallDone done);
  void GetJob(const Caller& caller, const v1::GetJobRequest& request, v1::Job* response, CallDone done);
  void ListJobs(const Caller& caller, const v1::ListJobsRequest& request, v1::ListJobsResponse* response,
                CallDone done);
  void CancelJob(const Caller& caller, const v1::CancelJobRequest& request, v1::CancelJobResponse* response,
                 CallDone done);
  void ListNodes(const Caller& caller, const v1::ListNodesRequest& request, v1::ListNodesResponse* response,
                 CallDone done);
  void DrainNode(const Caller& caller, const v1::DrainNodeRequest& request, v1::Node* response, CallDone done);
  void ResumeNode(const Caller& caller, const v1::ResumeNodeRequest& request, v1::Node* response, CallDone done);
  void ProbeNode(const Caller& caller, const v1::ProbeNodeRequest& request, v1::Node* response, CallDone done);
  void InterruptNode(const Caller& caller, const v1::InterruptNodeRequest& request, v1::Node* response, CallDone done);
  void ListPools(const Caller& caller, const v1::ListPoolsRequest& request, v1::ListPoolsResponse* response,
                 CallDone done);
  void HoldJob(const Caller& caller, const v1::HoldJobRequest& request, v1::Job* response, CallDone done);
  void ReleaseJob(const Caller& caller, const v1::ReleaseJobRequest& request, v1::Job* response, CallDone done);

 private:
  // Answers with the committed row of a job that is no longer active.
  void ReplyFromStore(const Caller& viewer, uint64_t job_id, v1::Job* out, CallDone done);
  // Who submits `spec`, and as whom it runs: fills spec.user for a caller who
  // left it out; refuses another user's name unless the caller is an admin,
  // and root unless allow_root_jobs.
  absl::Status CheckSubmitter(const Caller& caller, v1::JobSpec& spec) const;

  SchedulerLoop& loop_;
  ReadPool& reads_;
  const StoreHealth& store_;
  metrics::DaemonMetrics* const metrics_;
  const bool allow_root_jobs_;
};

}  // namespace gpusched::server
