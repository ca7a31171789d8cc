#pragma once

#include <set>
#include <string>

#include "daemon/metrics/daemon_metrics.h"
#include "daemon/server/caller.h"
#include "daemon/server/job_event_hub.h"
#include "daemon/server/read_pool.h"
#include "daemon/server/scheduler_loop.h"
#include "daemon/server/session_relay.h"
#include "daemon/server/store_health.h"
#include "gpusched/v1/scheduler.grpc.pb.h"

namespace gpusched::server {

// gpusched.v1.Scheduler. Handlers never block and hold no scheduling logic:
// writes become commands for the scheduler thread, reads go to the read pool,
// and each RPC finishes when its command's batch is durable.
class SchedulerService final : public v1::Scheduler::CallbackService {
 public:
  // `metrics` may be null (no --metrics-listen). `callers` says who a caller
  // is; every call needs a user (RequireUser). Jobs run as root only with
  // `allow_root_jobs`.
  // While `store` fails commits, every change is refused with its reason.
  SchedulerService(SchedulerLoop& loop, ReadPool& reads, JobEventHub& hub, SessionRelay& sessions,
                   const StoreHealth& store, metrics::DaemonMetrics* metrics, CallerPolicy callers,
                   bool allow_root_jobs)
      : loop_(loop),
        reads_(reads),
        hub_(hub),
        sessions_(sessions),
        store_(store),
        metrics_(metrics),
        callers_(std::move(callers)),
        allow_root_jobs_(allow_root_jobs) {}

  grpc::ServerUnaryReactor* SubmitJob(grpc::CallbackServerContext* ctx, const v1::SubmitJobRequest* request,
                                      v1::SubmitJobResponse* response) override;
  grpc::ServerUnaryReactor* GetJob(grpc::CallbackServerContext* ctx, const v1::GetJobRequest* request,
                                   v1::Job* response) override;
  grpc::ServerUnaryReactor* ListJobs(grpc::CallbackServerContext* ctx, const v1::ListJobsRequest* request,
                                     v1::ListJobsResponse* response) override;
  grpc::ServerUnaryReactor* CancelJob(grpc::CallbackServerContext* ctx, const v1::CancelJobRequest* request,
                                      v1::CancelJobResponse* response) override;
  grpc::ServerWriteReactor<v1::JobEvent>* WatchJobs(grpc::CallbackServerContext* ctx,
                                                    const v1::WatchJobsRequest* request) override;
  grpc::ServerUnaryReactor* ListNodes(grpc::CallbackServerContext* ctx, const v1::ListNodesRequest* request,
                                      v1::ListNodesResponse* response) override;
  grpc::ServerUnaryReactor* DrainNode(grpc::CallbackServerContext* ctx, const v1::DrainNodeRequest* request,
                                      v1::Node* response) override;
  grpc::ServerUnaryReactor* ResumeNode(grpc::CallbackServerContext* ctx, const v1::ResumeNodeRequest* request,
                                       v1::Node* response) override;
  grpc::ServerUnaryReactor* ProbeNode(grpc::CallbackServerContext* ctx, const v1::ProbeNodeRequest* request,
                                      v1::Node* response) override;
  grpc::ServerUnaryReactor* InterruptNode(grpc::CallbackServerContext* ctx, const v1::InterruptNodeRequest* request,
                                          v1::Node* response) override;
  grpc::ServerUnaryReactor* ListPools(grpc::CallbackServerContext* ctx, const v1::ListPoolsRequest* request,
                                      v1::ListPoolsResponse* response) override;
  grpc::ServerUnaryReactor* HoldJob(grpc::CallbackServerContext* ctx, const v1::HoldJobRequest* request,
                                    v1::Job* response) override;
  grpc::ServerUnaryReactor* ReleaseJob(grpc::CallbackServerContext* ctx, const v1::ReleaseJobRequest* request,
                                       v1::Job* response) override;
  grpc::ServerBidiReactor<v1::AttachRequest, v1::AttachResponse>* Attach(grpc::CallbackServerContext* ctx) override;

 private:
  // Answers with the committed row of a job that is no longer active.
  void ReplyFromStore(const Caller& viewer, uint64_t job_id, grpc::ServerUnaryReactor* reactor, v1::Job* out);
  Caller CallerOf(const grpc::CallbackServerContext* ctx) const { return IdentifyCaller(callers_, *ctx); }
  // Who submits `spec`, and as whom it runs: fills spec.user for a caller who
  // left it out; refuses another user's name unless the caller is an admin,
  // and root unless allow_root_jobs.
  absl::Status CheckSubmitter(const Caller& caller, v1::JobSpec& spec) const;

  SchedulerLoop& loop_;
  ReadPool& reads_;
  JobEventHub& hub_;
  SessionRelay& sessions_;
  const StoreHealth& store_;
  metrics::DaemonMetrics* const metrics_;
  const CallerPolicy callers_;
  const bool allow_root_jobs_;
};

}  // namespace gpusched::server
