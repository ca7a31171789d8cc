#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "daemon/server/caller.h"
#include "daemon/server/local_callers.h"
#include "daemon/server/scheduler_calls.h"

namespace grpc {
class Server;
}

namespace gpusched::server {

class LocalReplyOutbox;

// The daemon's Unix socket for the CLI on its own host. gRPC's own Unix
// listener cannot say who connected, so connections are accepted here and
// the caller's uid read with SO_PEERCRED. A connection's first byte then
// says what it speaks: HTTP/2 (gRPC) is handed to the gRPC server, with the
// caller recorded in `callers`; the CLI's local calls
// (common/io/local_call/frame.h) are served here, on this one thread, by
// `calls`. The socket is world-connectable (0666): the daemon, not the file
// mode, decides what each caller may do.
class UnixListener {
 public:
  // Replaces a stale socket file at `path` (one no daemon answers on).
  // `policy` names the admins among local callers.
  static absl::StatusOr<std::unique_ptr<UnixListener>> Start(const std::string& path, grpc::Server& server,
                                                             LocalCallers& callers, SchedulerCalls& calls,
                                                             CallerPolicy policy);
  // Stops accepting and reading; local calls already running are answered
  // for up to kStopGrace; removes the socket file.
  ~UnixListener();

  UnixListener(const UnixListener&) = delete;
  UnixListener& operator=(const UnixListener&) = delete;

  // Connections this listener holds for one uid at once; more are closed as
  // they come (the daemon's descriptors are shared by every user and agent).
  static constexpr int kMaxConnectionsPerUid = 128;

 private:
  static constexpr absl::Duration kKeepUserNames = absl::Seconds(60);
  // How long a client may take to say what it speaks, to send the rest of
  // a request it began, and to read a reply: one that stops holds only its
  // own connection (and the reply it did not read), and not for ever.
  static constexpr absl::Duration kClientTimeout = absl::Seconds(10);
  // A connection with no call under way is closed after this long: the CLI
  // makes its calls one after another, and a user must not be able to hold
  // the daemon's descriptors by opening connections and leaving them.
  static constexpr absl::Duration kIdleTimeout = absl::Minutes(5);
  static constexpr absl::Duration kStopGrace = absl::Seconds(2);
  static constexpr absl::Duration kAcceptRetry = absl::Milliseconds(100);
  static constexpr absl::Duration kAcceptWarningEvery = absl::Seconds(10);

  struct Connection;

  UnixListener(std::string path, int listen_fd, std::shared_ptr<LocalReplyOutbox> outbox, grpc::Server& server,
               LocalCallers& callers, SchedulerCalls& calls, CallerPolicy policy);
  void Loop();
  void AcceptAll(absl::Time now);
  // What a readable connection sent: its first byte, or local calls.
  void OnReadable(uint64_t id, absl::Time now);
  // Starts the call whose request is buffered whole, or answers a request
  // that can never be whole and closes after the answer.
  void TakeRequest(uint64_t id, Connection& c, absl::Time now);
  void OnReply(uint64_t id, std::string frame, absl::Time now);
  // Writes what fits; closes once a closing connection's answer is out.
  void Flush(uint64_t id, Connection& c, absl::Time now);
  void Close(uint64_t id);
  // Drops the connection from the listener's books, its fd left open (gRPC
  // has it now, or Close closed it).
  void Forget(uint64_t id);

  const std::string path_;
  const int listen_fd_;
  const std::shared_ptr<LocalReplyOutbox> outbox_;  // also held by the calls running
  grpc::Server& server_;
  LocalCallers& callers_;
  SchedulerCalls& calls_;
  const CallerPolicy policy_;
  std::atomic<bool> stopping_{false};
  // The loop's own.
  UserNameCache user_names_{kKeepUserNames};
  std::map<uint64_t, Connection> connections_;
  std::map<uid_t, int> connections_per_uid_;               // of connections_
  absl::Time accept_paused_until_ = absl::InfinitePast();  // after accept failed for want of resources
  absl::Time last_accept_warning_ = absl::InfinitePast();
  absl::Time last_limit_warning_ = absl::InfinitePast();
  uint64_t next_id_ = 1;
  std::thread thread_;
};

}  // namespace gpusched::server
