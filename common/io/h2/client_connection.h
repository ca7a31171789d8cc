#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/io/h2/grpc_framing.h"
#include "common/io/h2/transport.h"
#include "common/io/tls/connect_failure_hint.h"
#include "common/io/tls/tls_files.h"

struct nghttp2_session;

namespace gpusched::h2 {

// One HTTP/2 client connection for gRPC calls, one call at a time: the
// transport, nghttp2's session, and what the call in progress has sent and
// heard. The caller drives it from one thread: Flush and Receive when
// poll(2) says so (fd(), PollEvents()). H2Connection (the CLI's unary
// calls) and GrpcBidiStream (a stream on a thread of its own) are the two
// ways of driving it.
class ClientConnection {
 public:
  struct Options {
    std::string target;                   // as ParseSocketTarget takes it
    std::optional<tls::TlsMaterial> tls;  // std::nullopt: plaintext
    std::string user_agent;
    int32_t window = 16 << 20;  // what the other end may send before we have taken it
    size_t max_message_bytes = 64 << 20;
    // The window is opened again only as the caller says it took bytes
    // (Consumed), not as they arrive: a reader that falls behind holds the
    // sender back instead of filling memory.
    bool window_follows_reader = false;
  };

  // Dials and, with TLS, shakes hands by `deadline`; Cancelled as soon as
  // `cancel_fd` (-1: none) becomes readable. A failure is Unavailable,
  // saying why, and `failure` what it most likely means. Our SETTINGS are
  // queued, not yet sent.
  static absl::StatusOr<std::unique_ptr<ClientConnection>> Dial(Options options, absl::Time deadline, int cancel_fd,
                                                                tls::ConnectFailure* failure);
  ~ClientConnection();
  ClientConnection(const ClientConnection&) = delete;
  ClientConnection& operator=(const ClientConnection&) = delete;

  // Starts a call of `method` ("/package.Service/Method") on a new stream,
  // telling the server `deadline` unless it is infinite. Its body is what
  // AppendBody gives, ended by EndBody.
  absl::Status StartCall(absl::string_view method, absl::Time deadline);
  // A framed message (FramedMessage) for the call's body.
  void AppendBody(absl::string_view framed);
  void EndBody();
  // Bytes given by AppendBody that nghttp2 has not yet taken.
  size_t body_waiting() const { return body_.size() - body_taken_; }
  // Ends the call now: RST_STREAM with `error_code` (e.g. NGHTTP2_CANCEL),
  // sent at once as far as the socket takes it, so that the server learns
  // before the connection closes.
  void ResetCall(uint32_t error_code);

  // Serializes what nghttp2 has ready and writes what the transport takes
  // now; the rest waits for PollEvents to say the socket can take it.
  absl::Status Flush();
  // Everything readable now, through nghttp2; Unavailable when the
  // connection is over or what came is not HTTP/2.
  absl::Status Receive();

  int fd() const { return transport_->fd(); }
  short PollEvents() const { return transport_->PollEvents(!out_.empty()); }
  // Whether poll(2)'s `revents` on fd() call for Receive.
  bool ShouldReceive(short revents) const;
  bool output_waiting() const { return !out_.empty(); }
  // Whether the session has anything left to do: false after a GOAWAY
  // with nothing in flight.
  bool alive() const;

  // The call in progress: whether the other end has ended it.
  bool call_closed() const { return closed_; }
  uint32_t close_error() const { return close_error_; }
  // Its headers and trailers, by name.
  const std::map<std::string, std::string>& headers() const { return headers_; }
  // Its messages as they arrive.
  MessageSplitter& messages() { return messages_; }
  // DATA bytes of the call received so far.
  uint64_t received() const { return received_; }
  // With window_follows_reader: the call's DATA bytes taken by its reader
  // since the last time, which the other end may now send again.
  void Consumed(size_t bytes);
  // The call's status from its trailers once closed: the server's, or
  // Unavailable when what answered is not gRPC.
  absl::Status CallEnd() const;

  // Whether the other end ever spoke HTTP/2 on this connection.
  bool heard_from_peer() const { return heard_; }
  // What a connection that broke before the other end spoke most likely
  // means: plaintext to a TLS port, or a TLS refusal after the handshake.
  tls::ConnectFailure failure() const;

 private:
  struct Callbacks;
  ClientConnection(Options options, std::unique_ptr<Transport> transport, std::string authority);

  const Options options_;
  const std::unique_ptr<Transport> transport_;
  const std::string authority_;
  nghttp2_session* session_ = nullptr;
  std::string out_;  // frames serialized and not yet taken by the transport

  int32_t stream_id_ = -1;
  std::string body_;       // framed messages not yet handed to nghttp2
  size_t body_taken_ = 0;  // of body_
  bool body_end_ = false;  // END_STREAM once body_ is out
  bool deferred_ = false;  // nghttp2 waits for body_ to grow
  bool closed_ = false;    // the stream closed, or the other end ended it (END_STREAM)
  uint32_t close_error_ = 0;
  uint64_t received_ = 0;
  std::map<std::string, std::string> headers_;
  MessageSplitter messages_;
  bool heard_ = false;
};

}  // namespace gpusched::h2
