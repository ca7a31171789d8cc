#include "cli/direct_client.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "cli/errors.h"
#include "cli/grpc_client.h"
#include "cli/h2_unary_call.h"
#include "common/io/tls/connect_failure_hint.h"
#include "common/replica_addresses.h"

namespace gpusched::cli {
namespace {

class DirectSchedulerClient final : public SchedulerClient {
 public:
  DirectSchedulerClient(DaemonEndpoint endpoint, ClientFactory streams)
      : endpoint_(std::move(endpoint)),
        streams_factory_(std::move(streams)),
        replicas_(endpoint_.address),
        connections_(replicas_.size()) {}

  absl::StatusOr<v1::SubmitJobResponse> SubmitJob(const v1::SubmitJobRequest& request) override {
    return Unary<v1::SubmitJobResponse>("SubmitJob", request);
  }
  absl::StatusOr<v1::Job> GetJob(uint64_t job_id) override {
    v1::GetJobRequest request;
    request.set_job_id(job_id);
    return Unary<v1::Job>("GetJob", request);
  }
  absl::StatusOr<v1::ListJobsResponse> ListJobs(const v1::ListJobsRequest& request) override {
    return Unary<v1::ListJobsResponse>("ListJobs", request);
  }
  absl::StatusOr<v1::CancelJobResponse> CancelJob(const v1::CancelJobRequest& request) override {
    return Unary<v1::CancelJobResponse>("CancelJob", request);
  }
  absl::StatusOr<v1::ListNodesResponse> ListNodes(const v1::ListNodesRequest& request) override {
    return Unary<v1::ListNodesResponse>("ListNodes", request);
  }
  absl::StatusOr<v1::Node> DrainNode(const v1::DrainNodeRequest& request) override {
    return Unary<v1::Node>("DrainNode", request);
  }
  absl::StatusOr<v1::Node> ResumeNode(const v1::ResumeNodeRequest& request) override {
    return Unary<v1::Node>("ResumeNode", request);
  }
  absl::StatusOr<v1::Node> ProbeNode(const v1::ProbeNodeRequest& request) override {
    return Unary<v1::Node>("ProbeNode", request);
  }
  absl::StatusOr<v1::Node> InterruptNode(const v1::InterruptNodeRequest& request) override {
    return Unary<v1::Node>("InterruptNode", request);
  }
  absl::StatusOr<v1::ListPoolsResponse> ListPools() override {
    return Unary<v1::ListPoolsResponse>("ListPools", v1::ListPoolsRequest());
  }
  absl::StatusOr<v1::Job> HoldJob(const v1::HoldJobRequest& request) override {
    return Unary<v1::Job>("HoldJob", request);
  }
  absl::StatusOr<v1::Job> ReleaseJob(const v1::ReleaseJobRequest& request) override {
    return Unary<v1::Job>("ReleaseJob", request);
  }

  absl::Status WatchJobs(const v1::WatchJobsRequest& request, absl::Duration timeout,
                         const std::function<bool(const v1::JobEvent&)>& on_event) override {
    return streams().WatchJobs(request, timeout, on_event);
  }
  absl::StatusOr<std::unique_ptr<AttachStream>> Attach() override { return streams().Attach(); }

 private:
  // Like the gRPC client's: with several replicas, a call that finds no
  // one or a standby goes on to the replica the standby names, else the
  // next; each address is tried once.
  template <typename Response>
  absl::StatusOr<Response> Unary(const char* method, const google::protobuf::MessageLite& request) {
    const std::string path = absl::StrCat(kSchedulerServicePath, method);
    const std::string bytes = request.SerializeAsString();
    absl::Status status;
    for (size_t tried = 0; tried < replicas_.size(); ++tried) {
      absl::StatusOr<UnaryReply> reply = CallCurrent(path, bytes);
      if (reply.ok() && reply->status.ok()) {
        Response response;
        if (!response.ParseFromString(reply->response)) {
          return absl::InternalError(absl::StrCat("gpuschedd's answer to ", method, " does not parse"));
        }
        return response;
      }
      if (reply.ok() && reply->status.code() == absl::StatusCode::kDeadlineExceeded) {
        return NoAnswerInTime();  // the daemon, told the deadline, gave up first
      }
      status = reply.ok() ? reply->status : reply.status();
      if (status.code() != absl::StatusCode::kUnavailable || tried + 1 == replicas_.size()) break;
      if (reply.ok()) {
        replicas_.FailedWith(reply->trailers);  // a standby names the active replica there
      } else {
        replicas_.Failed("");
      }
    }
    return status;
  }

  // The call on the current replica's connection. Transport failures come
  // back as the CLI reports them: nobody there, or no answer in time.
  absl::StatusOr<UnaryReply> CallCurrent(const std::string& path, const std::string& request) {
    const absl::Time deadline = absl::Now() + kRpcTimeout;
    std::unique_ptr<H2Connection>& connection = connections_[replicas_.current_index()];
    if (connection == nullptr) {
      absl::StatusOr<std::unique_ptr<H2Connection>> dialed = H2Connection::Dial(replicas_.current(), deadline);
      if (!dialed.ok()) return UnreachableError(replicas_.current());
      connection = *std::move(dialed);
    }
    absl::StatusOr<UnaryReply> reply = connection->Call(path, request, deadline);
    if (reply.ok()) return reply;
    const bool heard = connection->heard_from_peer();
    connection.reset();  // broken, or a stream half-read: the next call dials again
    if (reply.status().code() == absl::StatusCode::kDeadlineExceeded) return NoAnswerInTime();
    return UnreachableError(replicas_.current(), heard ? reply.status().message() : tls::PlaintextClosedHint());
  }

  absl::Status NoAnswerInTime() const {
    return absl::DeadlineExceededError(absl::StrCat("gpuschedd at ", replicas_.current(), " did not answer within ",
                                                    absl::FormatDuration(kRpcTimeout)));
  }

  SchedulerClient& streams() {
    if (streams_ == nullptr) {
      DaemonEndpoint endpoint = endpoint_;
      endpoint.address = replicas_.current();  // the replica that answered last
      streams_ = streams_factory_(endpoint);
    }
    return *streams_;
  }

  const DaemonEndpoint endpoint_;
  const ClientFactory streams_factory_;
  ReplicaAddresses replicas_;
  std::vector<std::unique_ptr<H2Connection>> connections_;  // per address, made at first use
  std::unique_ptr<SchedulerClient> streams_;
};

bool AllPlain(const DaemonEndpoint& endpoint) {
  if (endpoint.tls.has_value()) return false;
  const ReplicaAddresses replicas(endpoint.address);
  return std::all_of(replicas.all().begin(), replicas.all().end(), IsPlainH2Target);
}

}  // namespace

std::unique_ptr<SchedulerClient> MakeDirectSchedulerClient(const DaemonEndpoint& endpoint, ClientFactory streams) {
  return std::make_unique<DirectSchedulerClient>(endpoint, std::move(streams));
}

std::unique_ptr<SchedulerClient> MakeSchedulerClient(const DaemonEndpoint& endpoint) {
  if (!AllPlain(endpoint)) return MakeGrpcSchedulerClient(endpoint);
  return MakeDirectSchedulerClient(endpoint, MakeGrpcSchedulerClient);
}

}  // namespace gpusched::cli
