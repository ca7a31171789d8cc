#include "cli/direct_client.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "cli/errors.h"
#include "cli/h2_unary_call.h"
#include "cli/local_unary_call.h"
#include "common/io/h2/grpc_bidi_stream.h"
#include "common/io/h2/socket_dial.h"
#include "common/io/tls/connect_failure_hint.h"
#include "common/replica_addresses.h"

namespace gpusched::cli {
namespace {

class DirectSchedulerClient final : public SchedulerClient {
 public:
  explicit DirectSchedulerClient(DaemonEndpoint endpoint)
      : endpoint_(std::move(endpoint)), replicas_(endpoint_.address), connections_(replicas_.size()) {}

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

  // On the replica that answered last.
  absl::Status WatchJobs(const v1::WatchJobsRequest& request, absl::Duration timeout,
                         const std::function<bool(const v1::JobEvent&)>& on_event) override {
    h2::GrpcBidiStream stream(StreamOptions("WatchJobs", absl::Now() + timeout));
    stream.Write(request.SerializeAsString());
    stream.WritesDone();
    std::string bytes;
    bool stopped = false;
    while (stream.Read(&bytes)) {
      v1::JobEvent event;
      if (!event.ParseFromString(bytes)) {
        stream.Cancel();
        return absl::InternalError("gpuschedd sent a job event that does not parse");
      }
      if (!on_event(event)) {
        stopped = true;
        stream.Cancel();
        break;
      }
    }
    const h2::GrpcBidiStream::End end = stream.Finish();
    if (stopped || end.status.ok()) return absl::OkStatus();
    // Our own deadline on a live connection is the normal end of a bounded watch.
    if (end.status.code() == absl::StatusCode::kDeadlineExceeded && end.heard_from_peer) return absl::OkStatus();
    return StreamError(end);
  }

  absl::StatusOr<std::unique_ptr<AttachStream>> Attach() override {
    class Stream final : public AttachStream {
     public:
      Stream(h2::GrpcBidiStream::Options options, const DirectSchedulerClient* client)
          : stream_(std::move(options)), client_(client) {}
      bool Write(const v1::AttachRequest& request) override { return stream_.Write(request.SerializeAsString()); }
      bool Read(v1::AttachResponse* response) override { return h2::ReadMessage(stream_, response); }
      void WritesDone() override { stream_.WritesDone(); }
      absl::Status Finish() override { return client_->StreamError(stream_.Finish()); }
      void Cancel() override { stream_.Cancel(); }

     private:
      h2::GrpcBidiStream stream_;  // no deadline: a session lasts as long as its user wants
      const DirectSchedulerClient* client_;
    };
    return std::unique_ptr<AttachStream>(
        std::make_unique<Stream>(StreamOptions("Attach", absl::InfiniteFuture()), this));
  }

 private:
  // With several addresses (the replicas of a daemon on PostgreSQL), a
  // call that finds no one or a standby goes on to the replica the standby
  // names, else the next; each address is tried once. A submit is safe to
  // send again: its request id makes it one job.
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
    Connection& connection = connections_[replicas_.current_index()];
    if (connection.open == nullptr) {
      absl::Status dialed = Dial(connection, deadline);
      if (!dialed.ok()) return dialed;
    }
    absl::StatusOr<UnaryReply> reply = connection.open->Call(path, request, deadline);
    if (!reply.ok() && connection.local && !connection.open->heard_from_peer() &&
        reply.status().code() == absl::StatusCode::kUnavailable) {
      // A daemon older than local calls: gRPC closed the connection unread.
      connection.grpc_only = true;
      if (absl::Status dialed = Dial(connection, deadline); !dialed.ok()) return dialed;
      reply = connection.open->Call(path, request, deadline);
    }
    if (reply.ok()) return reply;
    const bool heard = connection.open->heard_from_peer();
    const tls::ConnectFailure failure = connection.open->failure();
    connection.open.reset();  // broken, or a stream half-read: the next call dials again
    if (reply.status().code() == absl::StatusCode::kDeadlineExceeded) return NoAnswerInTime();
    return UnreachableError(replicas_.current(), heard ? std::string(reply.status().message()) : tls::HintFor(failure));
  }

  // A daemon's connection: local calls on a Unix socket, else gRPC.
  struct Connection {
    std::unique_ptr<UnaryConnection> open;  // made at first use
    bool local = false;                     // `open` makes local calls
    bool grpc_only = false;                 // the daemon there does not take local calls
  };

  absl::Status Dial(Connection& connection, absl::Time deadline) {
    connection.open.reset();
    absl::StatusOr<h2::SocketTarget> target = h2::ParseSocketTarget(replicas_.current());
    connection.local = target.ok() && target->unix_socket && !connection.grpc_only;
    tls::ConnectFailure failure = tls::ConnectFailure::kOther;
    if (connection.local) {
      absl::StatusOr<std::unique_ptr<LocalConnection>> dialed = LocalConnection::Dial(target->path, deadline);
      if (dialed.ok()) connection.open = *std::move(dialed);
    } else {
      absl::StatusOr<std::unique_ptr<H2Connection>> dialed =
          H2Connection::Dial(replicas_.current(), endpoint_.tls, deadline, &failure);
      if (dialed.ok()) connection.open = *std::move(dialed);
    }
    if (connection.open == nullptr) return UnreachableError(replicas_.current(), tls::HintFor(failure));
    return absl::OkStatus();
  }

  h2::GrpcBidiStream::Options StreamOptions(const char* method, absl::Time deadline) const {
    return {.target = replicas_.current(),
            .tls = endpoint_.tls,
            .method = absl::StrCat(kSchedulerServicePath, method),
            .user_agent = "gpusched-cli",
            .connect_timeout = kRpcTimeout,
            .deadline = deadline};
  }

  // A stream's end as the CLI reports it: nobody there (with what a failed
  // handshake means), or the daemon's own answer.
  absl::Status StreamError(const h2::GrpcBidiStream::End& end) const {
    const absl::StatusCode code = end.status.code();
    if (!end.heard_from_peer &&
        (code == absl::StatusCode::kUnavailable || code == absl::StatusCode::kDeadlineExceeded)) {
      return UnreachableError(replicas_.current(), tls::HintFor(end.failure));
    }
    return end.status;
  }

  absl::Status NoAnswerInTime() const {
    return absl::DeadlineExceededError(absl::StrCat("gpuschedd at ", replicas_.current(), " did not answer within ",
                                                    absl::FormatDuration(kRpcTimeout)));
  }

  const DaemonEndpoint endpoint_;
  ReplicaAddresses replicas_;
  std::vector<Connection> connections_;  // per address
};

}  // namespace

std::unique_ptr<SchedulerClient> MakeSchedulerClient(const DaemonEndpoint& endpoint) {
  return std::make_unique<DirectSchedulerClient>(endpoint);
}

}  // namespace gpusched::cli
