#pragma once

#include <cstddef>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/io/tls/connect_failure_hint.h"
#include "common/io/tls/tls_files.h"
#include "common/threads/mutex.h"

namespace google::protobuf {
class MessageLite;
}  // namespace google::protobuf

namespace gpusched::h2 {

// One bidirectional-streaming gRPC call on an HTTP/2 connection of its own
// (nghttp2, and OpenSSL for TLS), without the gRPC library: the agent's
// session with the daemon. The library costs a node agent more resident
// memory than all the rest of it, for one call that lasts as long as the
// agent.
//
// Used like gRPC's ClientReaderWriter: Write and WritesDone from one thread,
// Read from another, Finish once Read has returned false, Cancel from any.
// A thread of the stream's own dials, shakes hands, and moves the bytes.
class GrpcBidiStream {
 public:
  struct Options {
    std::string target;                   // HOST:PORT or unix:PATH
    std::optional<tls::TlsMaterial> tls;  // std::nullopt: plaintext
    std::string method;                   // "/package.Service/Method"
    std::string user_agent;
    absl::Duration connect_timeout = absl::Seconds(20);  // dial and handshake
    // The call ends by then (DeadlineExceeded), and the server is told it
    // (grpc-timeout).
    absl::Time deadline = absl::InfiniteFuture();
    size_t max_message_bytes = 64 << 20;
  };
  // How the call ended.
  struct End {
    // The call's own status (grpc-status, grpc-message), or the
    // transport's: Unavailable when the connection failed or broke,
    // Cancelled after Cancel.
    absl::Status status;
    // The metadata of the answer's headers and trailers, by name, beyond
    // the status (a standby names the active replica there).
    std::map<std::string, std::string> metadata;
    // What a failed connection most likely means (a TLS problem).
    tls::ConnectFailure failure = tls::ConnectFailure::kOther;
    // Whether the other end ever spoke HTTP/2: an Unavailable or a
    // DeadlineExceeded without it means nobody (or nothing that speaks
    // gRPC) answered.
    bool heard_from_peer = false;
  };

  // Starts connecting at once.
  explicit GrpcBidiStream(Options options);
  // Cancels the call if it has not ended, and waits for its thread.
  ~GrpcBidiStream();
  GrpcBidiStream(const GrpcBidiStream&) = delete;
  GrpcBidiStream& operator=(const GrpcBidiStream&) = delete;

  // Queues a message to send; false once the call is over or half-closed.
  // Waits, as gRPC's does, until the call is under way (so that a
  // connection that fails says so here) and while much is queued unsent.
  bool Write(absl::string_view message);
  // Half-closes: no more writes; the end goes out after what is queued.
  bool WritesDone();
  // The next message from the other end; false once there will be none.
  bool Read(std::string* message);
  // Ends the call now (RST_STREAM CANCEL), from any thread.
  void Cancel();
  // Waits for the call to end and says how.
  End Finish();

 private:
  void Run();
  End Serve();
  // The thread's look at what the callers did since its last one.
  struct Outgoing {
    bool writes_done = false;  // WritesDone, with nothing left queued
    bool cancelled = false;
    uint64_t unread = 0;  // bytes (as framed) of the messages waiting for Read
  };
  // Appends what Write queued to `into` (nullptr: not now, the stream's
  // body is full).
  Outgoing TakeOutgoing(std::string* into);
  void CallStarted();
  void Deliver(std::string message);
  void Wake();

  const Options options_;
  int wake_fd_ = -1;    // an eventfd: Write, WritesDone, Read and Cancel wake the thread
  int cancel_fd_ = -1;  // an eventfd only Cancel signals: it stops a dial or a handshake
  int eventfd_error_ = 0;

  mutable Mutex mu_;
  CondVar cv_;
  std::string outgoing_ ABSL_GUARDED_BY(mu_);  // framed messages not yet taken by the thread
  bool writes_done_ ABSL_GUARDED_BY(mu_) = false;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  bool call_started_ ABSL_GUARDED_BY(mu_) = false;  // connected, the call's headers queued
  std::deque<std::string> inbox_ ABSL_GUARDED_BY(mu_);
  uint64_t inbox_bytes_ ABSL_GUARDED_BY(mu_) = 0;  // as framed
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
  End end_ ABSL_GUARDED_BY(mu_);

  std::thread thread_;
};

// The next message of `stream` parsed into `message`; false at the end,
// and for bytes that do not parse as it (the call is cancelled then: the
// other end speaks another protocol).
bool ReadMessage(GrpcBidiStream& stream, google::protobuf::MessageLite* message);

}  // namespace gpusched::h2
