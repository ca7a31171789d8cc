#pragma once

#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "agent/session_handler.h"
#include "common/io/h2/grpc_bidi_stream.h"
#include "common/io/tls/tls_files.h"
#include "common/replica_addresses.h"
#include "common/threads/mutex.h"
#include "gpusched/v1/agent.pb.h"
#include "spdlog/logger.h"

namespace gpusched::agent {

struct SessionOptions {
  std::string daemon_address;
  std::optional<tls::TlsMaterial> tls;                   // std::nullopt: plaintext
  std::string node_name;                                 // for log lines
  absl::Duration heartbeat_interval = absl::Seconds(5);  // until the daemon says otherwise
  absl::Duration initial_backoff = absl::Milliseconds(100);
  absl::Duration max_backoff = absl::Seconds(5);
  // A daemon that takes the stream but never acks would otherwise hold us forever.
  absl::Duration register_timeout = absl::Seconds(15);
};

// The agent's end of AgentGateway.Connect: dials out, registers, heartbeats,
// hands the daemon's commands to the handler, and dials again with exponential
// backoff whenever the stream breaks. Two threads: one opens the stream and
// reads from it, one writes the outbox and the heartbeats; writes to the stream
// are serialized by a mutex. The call is made without the gRPC library
// (h2::GrpcBidiStream): each connection attempt is a stream on a connection
// of its own.
class DaemonSession {
 public:
  DaemonSession(SessionOptions options, SessionHandler* handler);
  ~DaemonSession();  // Stop()
  DaemonSession(const DaemonSession&) = delete;
  DaemonSession& operator=(const DaemonSession&) = delete;

  void Start();
  // Sends what is queued, half-closes the stream, and joins the threads.
  void Stop();

  // Queues a message for the current connection. Dropped while not registered:
  // the registration that follows carries the running jobs, and final reports
  // are sent again after it (SessionHandler::OnRegistered). An interactive
  // session's output waits while kMaxQueuedOutputBytes of it are queued, so
  // that a command printing faster than the stream carries is slowed (its
  // pipe fills) rather than the agent's memory growing.
  void Send(v1::AgentMessage message);
  static constexpr size_t kMaxQueuedOutputBytes = size_t{4} << 20;
  bool connected() const;

 private:
  using Stream = h2::GrpcBidiStream;
  using SteadyTime = std::chrono::steady_clock::time_point;

  void ConnectLoop();
  bool RunConnection();  // true when the daemon acked the registration
  void OnAck(const v1::RegisterAck& ack, Stream* stream, SteadyTime registration_sent);
  // The daemon heard heartbeat `seq`: the lease runs from when it left.
  void OnHeartbeatAck(int64_t seq);
  // When the lease runs out, or max() without one.
  SteadyTime LeaseEndLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SendLoop();
  bool WriteToStream(const v1::AgentMessage& message);

  const SessionOptions options_;
  SessionHandler* const handler_;
  std::shared_ptr<spdlog::logger> log_;
  // The daemon's replicas (one address but for a daemon on PostgreSQL);
  // the connector thread's own.
  ReplicaAddresses replicas_;
  bool redirected_ = false;  // a standby named the active replica: dial it without backing off

  // Lock order: write_mu_ before mu_.
  Mutex write_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  Stream* stream_ ABSL_GUARDED_BY(write_mu_) = nullptr;  // the registered stream (changed under mu_ too)

  mutable Mutex mu_;
  CondVar cv_;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool connected_ ABSL_GUARDED_BY(mu_) = false;
  bool sender_done_ ABSL_GUARDED_BY(mu_) = false;
  bool connector_done_ ABSL_GUARDED_BY(mu_) = false;
  Stream* call_ ABSL_GUARDED_BY(mu_) = nullptr;  // the call in progress, to cancel it
  SteadyTime register_deadline_ ABSL_GUARDED_BY(mu_) = SteadyTime::max();
  SteadyTime next_heartbeat_ ABSL_GUARDED_BY(mu_) = SteadyTime::max();
  absl::Duration heartbeat_interval_ ABSL_GUARDED_BY(mu_);
  int64_t heartbeat_seq_ ABSL_GUARDED_BY(mu_) = 0;
  // The lease (RegisterAck.fence_after_ms): it runs from the send time of
  // the newest registration or heartbeat the daemon acknowledged, across
  // reconnects, and expires once per renewal.
  absl::Duration fence_after_ ABSL_GUARDED_BY(mu_) = absl::ZeroDuration();
  SteadyTime lease_from_ ABSL_GUARDED_BY(mu_) = SteadyTime::max();
  bool lease_expired_ ABSL_GUARDED_BY(mu_) = false;
  std::deque<std::pair<int64_t, SteadyTime>> beats_sent_ ABSL_GUARDED_BY(mu_);  // seq, when; awaiting an ack
  int failures_ ABSL_GUARDED_BY(mu_) = 0;  // connection attempts since the last registration
  // The last failed attempt's code and message: a new reason is logged at once, not only
  // every 20th attempt (a refusal after a daemon restart must not hide).
  std::string last_failure_ ABSL_GUARDED_BY(mu_);  // code and message; empty once registered
  std::deque<v1::AgentMessage> outbox_ ABSL_GUARDED_BY(mu_);
  size_t queued_output_bytes_ ABSL_GUARDED_BY(mu_) = 0;  // of session output in outbox_

  std::thread connector_;
  std::thread sender_;
};

}  // namespace gpusched::agent
