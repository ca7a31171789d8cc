#include "daemon/server/scheduler_service.h"

#include "daemon/server/attach_reactor.h"
#include "daemon/server/grpc_status.h"
#include "daemon/server/watch_jobs_reactor.h"

namespace gpusched::server {
namespace {

// The call's own reactor, finished with what SchedulerCalls answered.
CallDone FinishOf(grpc::ServerUnaryReactor* reactor) {
  return [reactor](const absl::Status& status) { reactor->Finish(ToGrpcStatus(status)); };
}

// An Attach call refused before it began.
class RefusedAttach final : public grpc::ServerBidiReactor<v1::AttachRequest, v1::AttachResponse> {
 public:
  explicit RefusedAttach(const absl::Status& status) { Finish(ToGrpcStatus(status)); }
  void OnDone() override { delete this; }
};

// A WatchJobs call refused before it watched anything.
class RefusedWatch final : public grpc::ServerWriteReactor<v1::JobEvent> {
 public:
  explicit RefusedWatch(const absl::Status& status) { Finish(ToGrpcStatus(status)); }
  void OnDone() override { delete this; }
};

}  // namespace

grpc::ServerUnaryReactor* SchedulerService::SubmitJob(grpc::CallbackServerContext* ctx,
                                                      const v1::SubmitJobRequest* request,
                                                      v1::SubmitJobResponse* response) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  calls_.SubmitJob(CallerOf(ctx), *request, response, FinishOf(reactor));
  return reactor;
}

grpc::ServerUnaryReactor* SchedulerService::GetJob(grpc::CallbackServerContext* ctx, const v1::GetJobRequest* request,
                                                   v1::Job* response) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  calls_.GetJob(CallerOf(ctx), *request, response, FinishOf(reactor));
  return reactor;
}

grpc::ServerUnaryReactor* SchedulerService::ListJobs(grpc::CallbackServerContext* ctx,
                                                     const v1::ListJobsRequest* request,
                                                     v1::ListJobsResponse* response) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  calls_.ListJobs(CallerOf(ctx), *request, response, FinishOf(reactor));
  return reactor;
}

grpc::ServerUnaryReactor* SchedulerService::CancelJob(grpc::CallbackServerContext* ctx,
                                                      const v1::CancelJobRequest* request,
                                                      v1::CancelJobResponse* response) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  calls_.CancelJob(CallerOf(ctx), *request, response, FinishOf(reactor));
  return reactor;
}

grpc::ServerUnaryReactor* SchedulerService::ListNodes(grpc::CallbackServerContext* ctx,
                                                      const v1::ListNodesRequest* request,
                                                      v1::ListNodesResponse* response) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  calls_.ListNodes(CallerOf(ctx), *request, response, FinishOf(reactor));
  return reactor;
}

grpc::ServerUnaryReactor* SchedulerService::DrainNode(grpc::CallbackServerContext* ctx,
                                                      const v1::DrainNodeRequest* request, v1::Node* response) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  calls_.DrainNode(CallerOf(ctx), *request, response, FinishOf(reactor));
  return reactor;
}

grpc::ServerUnaryReactor* SchedulerService::ResumeNode(grpc::CallbackServerContext* ctx,
                                                       const v1::ResumeNodeRequest* request, v1::Node* response) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  calls_.ResumeNode(CallerOf(ctx), *request, response, FinishOf(reactor));
  return reactor;
}

grpc::ServerUnaryReactor* SchedulerService::ProbeNode(grpc::CallbackServerContext* ctx,
                                                      const v1::ProbeNodeRequest* request, v1::Node* response) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  calls_.ProbeNode(CallerOf(ctx), *request, response, FinishOf(reactor));
  return reactor;
}

grpc::ServerUnaryReactor* SchedulerService::InterruptNode(grpc::CallbackServerContext* ctx,
                                                          const v1::InterruptNodeRequest* request, v1::Node* response) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  calls_.InterruptNode(CallerOf(ctx), *request, response, FinishOf(reactor));
  return reactor;
}

grpc::ServerUnaryReactor* SchedulerService::ListPools(grpc::CallbackServerContext* ctx,
                                                      const v1::ListPoolsRequest* request,
                                                      v1::ListPoolsResponse* response) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  calls_.ListPools(CallerOf(ctx), *request, response, FinishOf(reactor));
  return reactor;
}

grpc::ServerUnaryReactor* SchedulerService::HoldJob(grpc::CallbackServerContext* ctx, const v1::HoldJobRequest* request,
                                                    v1::Job* response) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  calls_.HoldJob(CallerOf(ctx), *request, response, FinishOf(reactor));
  return reactor;
}

grpc::ServerUnaryReactor* SchedulerService::ReleaseJob(grpc::CallbackServerContext* ctx,
                                                       const v1::ReleaseJobRequest* request, v1::Job* response) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  calls_.ReleaseJob(CallerOf(ctx), *request, response, FinishOf(reactor));
  return reactor;
}

grpc::ServerWriteReactor<v1::JobEvent>* SchedulerService::WatchJobs(grpc::CallbackServerContext* ctx,
                                                                    const v1::WatchJobsRequest* request) {
  // Events carry no command or environment: any user may watch any job.
  if (absl::Status s = RequireUser(CallerOf(ctx)); !s.ok()) return new RefusedWatch(s);
  return new WatchJobsReactor(hub_, *request);
}

grpc::ServerBidiReactor<v1::AttachRequest, v1::AttachResponse>* SchedulerService::Attach(
    grpc::CallbackServerContext* ctx) {
  const Caller caller = CallerOf(ctx);
  if (absl::Status s = RequireUser(caller); !s.ok()) return new RefusedAttach(s);
  return new AttachReactor(loop_, sessions_, caller);
}

}  // namespace gpusched::server
