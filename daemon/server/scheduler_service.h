#pragma once

#include "daemon/server/caller.h"
#include "daemon/server/job_event_hub.h"
#include "daemon/server/scheduler_calls.h"
#include "daemon/server/scheduler_loop.h"
#include "daemon/server/session_relay.h"
#include "gpusched/v1/scheduler.grpc.pb.h"

namespace gpusched::server {

// gpusched.v1.Scheduler over gRPC. The unary methods are SchedulerCalls',
// with the caller the call's transport proved; the streams (WatchJobs,
// Attach) are gRPC's alone.
class SchedulerService final : public v1::Scheduler::CallbackService {
 public:
  // `callers` says who a caller is; every call needs a user (RequireUser).
  SchedulerService(SchedulerCalls& calls, SchedulerLoop& loop, JobEventHub& hub, SessionRelay& sessions,
                   CallerPolicy callers)
      : calls_(calls), loop_(loop), hub_(hub), sessions_(sessions), callers_(std::move(callers)) {}

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
  Caller CallerOf(const grpc::CallbackServerContext* ctx) const { return IdentifyCaller(callers_, *ctx); }

  SchedulerCalls& calls_;
  SchedulerLoop& loop_;
  JobEventHub& hub_;
  SessionRelay& sessions_;
  const CallerPolicy callers_;
};

}  // namespace gpusched::server
