#include "cli/grpc_client.h"

#include <grpcpp/grpcpp.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "cli/errors.h"
#include "common/io/tls/connect_failure_hint.h"
#include "common/io/tls/grpc_credentials.h"
#include "common/replica_addresses.h"
#include "gpusched/v1/scheduler.grpc.pb.h"

namespace gpusched::cli {
namespace {

class GrpcSchedulerClient final : public SchedulerClient {
 public:
  explicit GrpcSchedulerClient(const DaemonEndpoint& endpoint)
      : replicas_(endpoint.address),
        tls_material_(endpoint.tls),
        tls_(endpoint.tls.has_value()),
        channels_(replicas_.size()),
        stubs_(replicas_.size()) {}

  absl::StatusOr<v1::SubmitJobResponse> SubmitJob(const v1::SubmitJobRequest& request) override {
    return Unary<v1::SubmitJobResponse>(&v1::Scheduler::Stub::SubmitJob, request);
  }

  absl::StatusOr<v1::Job> GetJob(uint64_t job_id) override {
    v1::GetJobRequest request;
    request.set_job_id(job_id);
    return Unary<v1::Job>(&v1::Scheduler::Stub::GetJob, request);
  }

  absl::StatusOr<v1::ListJobsResponse> ListJobs(const v1::ListJobsRequest& request) override {
    return Unary<v1::ListJobsResponse>(&v1::Scheduler::Stub::ListJobs, request);
  }

  absl::StatusOr<v1::CancelJobResponse> CancelJob(const v1::CancelJobRequest& request) override {
    return Unary<v1::CancelJobResponse>(&v1::Scheduler::Stub::CancelJob, request);
  }

  absl::StatusOr<v1::ListNodesResponse> ListNodes(const v1::ListNodesRequest& request) override {
    return Unary<v1::ListNodesResponse>(&v1::Scheduler::Stub::ListNodes, request);
  }

  absl::StatusOr<v1::Node> DrainNode(const v1::DrainNodeRequest& request) override {
    return Unary<v1::Node>(&v1::Scheduler::Stub::DrainNode, request);
  }

  absl::StatusOr<v1::Node> ResumeNode(const v1::ResumeNodeRequest& request) override {
    return Unary<v1::Node>(&v1::Scheduler::Stub::ResumeNode, request);
  }

  absl::StatusOr<v1::Node> ProbeNode(const v1::ProbeNodeRequest& request) override {
    return Unary<v1::Node>(&v1::Scheduler::Stub::ProbeNode, request);
  }

  absl::StatusOr<v1::Node> InterruptNode(const v1::InterruptNodeRequest& request) override {
    return Unary<v1::Node>(&v1::Scheduler::Stub::InterruptNode, request);
  }

  absl::StatusOr<v1::ListPoolsResponse> ListPools() override {
    return Unary<v1::ListPoolsResponse>(&v1::Scheduler::Stub::ListPools, v1::ListPoolsRequest());
  }

  absl::StatusOr<v1::Job> HoldJob(const v1::HoldJobRequest& request) override {
    return Unary<v1::Job>(&v1::Scheduler::Stub::HoldJob, request);
  }

  absl::StatusOr<v1::Job> ReleaseJob(const v1::ReleaseJobRequest& request) override {
    return Unary<v1::Job>(&v1::Scheduler::Stub::ReleaseJob, request);
  }

  absl::Status WatchJobs(const v1::WatchJobsRequest& request, absl::Duration timeout,
                         const std::function<bool(const v1::JobEvent&)>& on_event) override {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
    std::unique_ptr<grpc::ClientReader<v1::JobEvent>> reader = stub().WatchJobs(&context, request);
    v1::JobEvent event;
    bool stopped = false;
    while (reader->Read(&event)) {
      if (!on_event(event)) {
        stopped = true;
        context.TryCancel();
        while (reader->Read(&event)) {
        }
        break;
      }
    }
    grpc::Status status = reader->Finish();
    if (stopped || status.ok()) return absl::OkStatus();
    // Our own deadline on a connected channel is the normal end of a bounded watch.
    if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED && Connected()) {
      return absl::OkStatus();
    }
    return Convert(status);
  }

  absl::StatusOr<std::unique_ptr<AttachStream>> Attach() override {
    class Stream final : public AttachStream {
     public:
      Stream(v1::Scheduler::Stub& stub, std::function<absl::Status(const grpc::Status&)> convert)
          : convert_(std::move(convert)), stream_(stub.Attach(&context_)) {}
      bool Write(const v1::AttachRequest& request) override { return stream_->Write(request); }
      bool Read(v1::AttachResponse* response) override { return stream_->Read(response); }
      void WritesDone() override { stream_->WritesDone(); }
      absl::Status Finish() override { return convert_(stream_->Finish()); }
      void Cancel() override { context_.TryCancel(); }

     private:
      std::function<absl::Status(const grpc::Status&)> convert_;
      grpc::ClientContext context_;  // no deadline: a session lasts as long as its user wants
      std::unique_ptr<grpc::ClientReaderWriter<v1::AttachRequest, v1::AttachResponse>> stream_;
    };
    return std::unique_ptr<AttachStream>(
        std::make_unique<Stream>(stub(), [this](const grpc::Status& status) { return Convert(status); }));
  }

 private:
  // With several addresses (the replicas of a daemon on PostgreSQL), a
  // call that finds no one or a standby goes on to the replica the standby
  // names, else the next; each address is tried once. A submit is safe to
  // send again: its request id makes it one job.
  template <typename Response, typename Request, typename Method>
  absl::StatusOr<Response> Unary(Method method, const Request& request) {
    grpc::Status status;
    for (size_t tried = 0; tried < replicas_.size(); ++tried) {
      grpc::ClientContext context;
      context.set_deadline(absl::ToChronoTime(absl::Now() + kRpcTimeout));
      Response response;
      status = (stub().*method)(&context, request, &response);
      if (status.ok()) return response;
      if (status.error_code() != grpc::StatusCode::UNAVAILABLE || tried + 1 == replicas_.size()) break;
      replicas_.FailedWith(context.GetServerTrailingMetadata());
    }
    return Convert(status);
  }

  v1::Scheduler::Stub& stub() {
    const size_t i = replicas_.current_index();
    if (stubs_[i] == nullptr) {
      channels_[i] = grpc::CreateChannel(replicas_.current(), tls::ChannelCredentials(tls_material_));
      stubs_[i] = v1::Scheduler::NewStub(channels_[i]);
    }
    return *stubs_[i];
  }

  bool Connected() {
    const auto& channel = channels_[replicas_.current_index()];
    return channel != nullptr && channel->GetState(false) == GRPC_CHANNEL_READY;
  }

  // UNAVAILABLE or DEADLINE_EXCEEDED while the channel never got a connection
  // means nobody answered, or the TLS handshake failed (then the hint says
  // why); the same codes on a live connection are the daemon's own answer and
  // keep its message.
  absl::Status Convert(const grpc::Status& status) {
    const auto code = status.error_code();
    if ((code == grpc::StatusCode::UNAVAILABLE || code == grpc::StatusCode::DEADLINE_EXCEEDED) && !Connected()) {
      return UnreachableError(replicas_.current(), tls::TlsConnectHint(status.error_message(), tls_));
    }
    if (code == grpc::StatusCode::DEADLINE_EXCEEDED) {
      return absl::DeadlineExceededError(absl::StrCat("gpuschedd at ", replicas_.current(), " did not answer within ",
                                                      absl::FormatDuration(kRpcTimeout)));
    }
    // gRPC and absl share the canonical code numbers.
    return absl::Status(static_cast<absl::StatusCode>(code), status.error_message());
  }

  ReplicaAddresses replicas_;
  std::optional<tls::TlsMaterial> tls_material_;
  bool tls_;
  std::vector<std::shared_ptr<grpc::Channel>> channels_;  // per address, made at first use
  std::vector<std::unique_ptr<v1::Scheduler::Stub>> stubs_;
};

}  // namespace

std::unique_ptr<SchedulerClient> MakeGrpcSchedulerClient(const DaemonEndpoint& endpoint) {
  return std::make_unique<GrpcSchedulerClient>(endpoint);
}

}  // namespace gpusched::cli
