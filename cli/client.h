#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/io/tls/tls_files.h"
#include "gpusched/v1/scheduler.pb.h"

namespace gpusched::cli {

// One interactive session (Scheduler.Attach) as a command drives it: writes
// from one thread, reads from another, as gRPC allows.
class AttachStream {
 public:
  virtual ~AttachStream() = default;
  virtual bool Write(const v1::AttachRequest& request) = 0;  // false once the stream is broken
  virtual bool Read(v1::AttachResponse* response) = 0;       // false at its end
  virtual void WritesDone() = 0;
  // How the daemon ended the stream; after Read returned false.
  virtual absl::Status Finish() = 0;
  virtual void Cancel() = 0;  // from any thread: Read and Write then fail
};

// The daemon as the commands see it. Commands depend on this interface, not on
// gRPC, so that their behaviour is tested against a fake.
//
// Errors: the daemon's own answers keep their code and message; a daemon that
// cannot be reached is UnreachableError (exit code 3).
class SchedulerClient {
 public:
  virtual ~SchedulerClient() = default;

  virtual absl::StatusOr<v1::SubmitJobResponse> SubmitJob(const v1::SubmitJobRequest& request) = 0;
  virtual absl::StatusOr<v1::Job> GetJob(uint64_t job_id) = 0;
  // One page; see ListAllJobs for the whole list.
  virtual absl::StatusOr<v1::ListJobsResponse> ListJobs(const v1::ListJobsRequest& request) = 0;
  virtual absl::StatusOr<v1::CancelJobResponse> CancelJob(const v1::CancelJobRequest& request) = 0;
  // One page; see ListAllNodes for every node.
  virtual absl::StatusOr<v1::ListNodesResponse> ListNodes(const v1::ListNodesRequest& request) = 0;
  virtual absl::StatusOr<v1::Node> DrainNode(const v1::DrainNodeRequest& request) = 0;
  virtual absl::StatusOr<v1::Node> ResumeNode(const v1::ResumeNodeRequest& request) = 0;
  virtual absl::StatusOr<v1::Node> ProbeNode(const v1::ProbeNodeRequest& request) = 0;
  virtual absl::StatusOr<v1::Node> InterruptNode(const v1::InterruptNodeRequest& request) = 0;
  virtual absl::StatusOr<v1::ListPoolsResponse> ListPools() = 0;
  virtual absl::StatusOr<v1::Job> HoldJob(const v1::HoldJobRequest& request) = 0;
  virtual absl::StatusOr<v1::Job> ReleaseJob(const v1::ReleaseJobRequest& request) = 0;

  // Streams events to on_event until it returns false, the daemon ends the
  // stream, or `timeout` passes; each of those is OK. The caller re-reads the
  // job afterwards, so a bounded watch never misses an end for long.
  virtual absl::Status WatchJobs(const v1::WatchJobsRequest& request, absl::Duration timeout,
                                 const std::function<bool(const v1::JobEvent&)>& on_event) = 0;
  // A session stream, not yet started (the first Write is the AttachStart).
  virtual absl::StatusOr<std::unique_ptr<AttachStream>> Attach() = 0;
};

// Where the daemon is and how to talk to it.
struct DaemonEndpoint {
  std::string address;
  std::optional<tls::TlsMaterial> tls;  // std::nullopt: plaintext
};

using ClientFactory = std::function<std::unique_ptr<SchedulerClient>(const DaemonEndpoint& endpoint)>;

// Follows next_page_token until the daemon has sent every matching job.
absl::StatusOr<v1::ListJobsResponse> ListAllJobs(SchedulerClient& client, v1::ListJobsRequest request);
// The same for nodes.
absl::StatusOr<v1::ListNodesResponse> ListAllNodes(SchedulerClient& client, v1::ListNodesRequest request = {});

}  // namespace gpusched::cli
