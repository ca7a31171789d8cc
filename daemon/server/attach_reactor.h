#pragma once

#include <deque>
#include <memory>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "common/threads/mutex.h"
#include "daemon/server/agent_channel.h"
#include "daemon/server/caller.h"
#include "daemon/server/scheduler_loop.h"
#include "daemon/server/session_relay.h"
#include "gpusched/v1/scheduler.pb.h"
#include "grpcpp/support/server_callback.h"

namespace gpusched::server {

// One Scheduler.Attach call: an interactive session on a running job's first
// node, relayed between the client and that node's agent (SessionInput out,
// SessionOutput back through the SessionRelay). The start is checked on the
// scheduler thread: the caller owns the job (or is an admin), the job runs,
// its first node's agent is connected. A session that `ends_job` cancels its
// job when it ends, by its command's exit or by its client going away.
// Deletes itself when gRPC is done with it.
class AttachReactor final : public grpc::ServerBidiReactor<v1::AttachRequest, v1::AttachResponse>,
                            public SessionRelay::Endpoint {
 public:
  AttachReactor(SchedulerLoop& loop, SessionRelay& relay, Caller caller);

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnDone() override;
  void Deliver(const v1::SessionOutput& output) override;

  // Output queued for a client that does not read it (a paused terminal, a
  // stopped CLI) is dropped past this much, and the client told how much,
  // rather than held in the daemon's memory without end: the agent's one
  // stream carries every session of its node and cannot be slowed for one.
  static constexpr size_t kMaxQueuedOutputBytes = size_t{16} << 20;

 private:
  void Begin(const v1::AttachStart& start);
  void Forward(const v1::AttachRequest& request) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The client is gone (its stream closed or broke): the agent hangs up the
  // command, and an ends_job session's job is cancelled.
  void ClientGone();
  void CancelJobOnce(const std::string& reason) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void QueueLocked(v1::AttachResponse response) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void FinishLocked(const grpc::Status& status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // gRPC holds one reference until OnDone, the start's check on the
  // scheduler thread another while it is queued: the last one deletes.
  void Release();

  SchedulerLoop& loop_;
  SessionRelay& relay_;
  const Caller caller_;
  v1::AttachRequest in_;

  Mutex mu_;
  bool begun_ ABSL_GUARDED_BY(mu_) = false;       // the start was read
  uint64_t session_id_ ABSL_GUARDED_BY(mu_) = 0;  // 0 until the agent was asked to start it
  uint64_t job_id_ ABSL_GUARDED_BY(mu_) = 0;
  bool ends_job_ ABSL_GUARDED_BY(mu_) = false;
  // A holding session's client said it is done.
  std::optional<v1::SessionExit> client_done_ ABSL_GUARDED_BY(mu_);
  bool job_cancelled_ ABSL_GUARDED_BY(mu_) = false;
  bool exited_ ABSL_GUARDED_BY(mu_) = false;  // the exit was queued for the client
  std::shared_ptr<AgentChannel> channel_ ABSL_GUARDED_BY(mu_);
  std::deque<v1::AttachRequest> early_ ABSL_GUARDED_BY(mu_);  // input read before the session was set up
  std::deque<v1::AttachResponse> out_ ABSL_GUARDED_BY(mu_);
  size_t queued_output_bytes_ ABSL_GUARDED_BY(mu_) = 0;     // stdout and stderr in out_
  uint64_t dropped_output_bytes_ ABSL_GUARDED_BY(mu_) = 0;  // not yet told
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool finishing_ ABSL_GUARDED_BY(mu_) = false;  // Finish asked for; called once the queue is out
  bool finish_called_ ABSL_GUARDED_BY(mu_) = false;
  grpc::Status final_status_ ABSL_GUARDED_BY(mu_);
  int refs_ ABSL_GUARDED_BY(mu_) = 1;
};

}  // namespace gpusched::server
