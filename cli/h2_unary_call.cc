#include "cli/h2_unary_call.h"

#include <nghttp2/nghttp2.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "common/io/h2/grpc_framing.h"
#include "common/io/h2/nghttp2_header.h"
#include "common/io/h2/socket_dial.h"
#include "common/io/h2/transport.h"

namespace gpusched::cli {
namespace {

// Large enough that a reply of many pages of jobs is never held up waiting
// for window updates; the CLI reads everything it is sent anyway.
constexpr int32_t kWindow = 1 << 30;
constexpr absl::Duration kAcknowledgeAfter = absl::Seconds(1);

std::string Errno(const char* what) { return absl::StrCat(what, ": ", std::strerror(errno)); }

}  // namespace

// The nghttp2 session and what it has heard of the one call in flight.
struct H2Connection::Session {
  nghttp2_session* session = nullptr;
  std::unique_ptr<h2::Transport> transport;
  // Frames serialized and not yet taken by the socket. All that nghttp2 has
  // ready goes out in one send(): each write wakes a daemon thread to read it.
  std::string out;
  // The call in flight.
  int32_t stream_id = -1;
  std::string body;  // the request as framed, as it goes out
  size_t body_sent = 0;
  bool closed = false;
  uint32_t close_error = 0;
  std::map<std::string, std::string> headers;  // initial and trailing, by name
  std::string data;

  ~Session() {
    if (session != nullptr) nghttp2_session_del(session);
  }

  // Serializes what nghttp2 has ready and writes as much of `out` as the
  // transport takes now; the rest waits for POLLOUT.
  absl::Status Flush() {
    while (true) {
      const uint8_t* frames = nullptr;
      const ssize_t n = nghttp2_session_mem_send(session, &frames);
      if (n < 0) return absl::UnavailableError(nghttp2_strerror(static_cast<int>(n)));
      if (n == 0) break;
      out.append(reinterpret_cast<const char*>(frames), static_cast<size_t>(n));
    }
    while (!out.empty()) {
      const ssize_t n = transport->Write(out.data(), out.size());
      if (n < 0) return absl::UnavailableError(transport->error());
      if (n == 0) break;
      out.erase(0, static_cast<size_t>(n));
    }
    return absl::OkStatus();
  }

  static int OnHeader(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name, size_t name_length,
                      const uint8_t* value, size_t value_length, uint8_t, void* user) {
    Session& s = *static_cast<Session*>(user);
    if (frame->hd.stream_id != s.stream_id) return 0;
    s.headers[std::string(reinterpret_cast<const char*>(name), name_length)] =
        std::string(reinterpret_cast<const char*>(value), value_length);
    return 0;
  }

  static int OnData(nghttp2_session*, uint8_t, int32_t stream_id, const uint8_t* data, size_t length, void* user) {
    Session& s = *static_cast<Session*>(user);
    if (stream_id == s.stream_id) s.data.append(reinterpret_cast<const char*>(data), length);
    return 0;
  }

  static int OnClose(nghttp2_session*, int32_t stream_id, uint32_t error_code, void* user) {
    Session& s = *static_cast<Session*>(user);
    if (stream_id != s.stream_id) return 0;
    s.closed = true;
    s.close_error = error_code;
    return 0;
  }

  static ssize_t ReadBody(nghttp2_session*, int32_t, uint8_t* buffer, size_t length, uint32_t* flags,
                          nghttp2_data_source*, void* user) {
    Session& s = *static_cast<Session*>(user);
    const size_t n = std::min(length, s.body.size() - s.body_sent);
    std::memcpy(buffer, s.body.data() + s.body_sent, n);
    s.body_sent += n;
    if (s.body_sent == s.body.size()) *flags |= NGHTTP2_DATA_FLAG_EOF;
    return static_cast<ssize_t>(n);
  }
};

H2Connection::H2Connection(std::unique_ptr<h2::Transport> transport, std::string authority, bool tls)
    : authority_(std::move(authority)), tls_(tls), session_(std::make_unique<Session>()) {
  session_->transport = std::move(transport);
}

H2Connection::~H2Connection() = default;

tls::ConnectFailure H2Connection::failure() const {
  if (heard_from_peer_) return tls::ConnectFailure::kOther;
  return tls_ ? session_->transport->failure() : tls::ConnectFailure::kPlaintextClosed;
}

absl::StatusOr<std::unique_ptr<H2Connection>> H2Connection::Dial(absl::string_view target,
                                                                 const std::optional<tls::TlsMaterial>& tls,
                                                                 absl::Time deadline, tls::ConnectFailure* failure) {
  *failure = tls::ConnectFailure::kOther;
  absl::StatusOr<h2::SocketTarget> socket_target = h2::ParseSocketTarget(target);
  if (!socket_target.ok()) return socket_target.status();
  absl::StatusOr<int> fd = h2::DialSocket(*socket_target, deadline);
  if (!fd.ok()) return fd.status();
  std::unique_ptr<h2::Transport> transport;
  if (tls.has_value()) {
    const std::string& host = socket_target->unix_socket ? socket_target->authority : socket_target->host;
    absl::StatusOr<std::unique_ptr<h2::Transport>> secured =
        h2::TlsClientHandshake(*fd, *tls, host, deadline, -1, failure);
    if (!secured.ok()) return secured.status();
    transport = *std::move(secured);
  } else {
    transport = h2::PlainTransport(*fd);
  }
  std::unique_ptr<H2Connection> connection(
      new H2Connection(std::move(transport), socket_target->authority, tls.has_value()));

  nghttp2_session_callbacks* callbacks = nullptr;
  if (nghttp2_session_callbacks_new(&callbacks) != 0) return absl::ResourceExhaustedError("nghttp2: out of memory");
  nghttp2_session_callbacks_set_on_header_callback(callbacks, &Session::OnHeader);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, &Session::OnData);
  nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, &Session::OnClose);
  Session& s = *connection->session_;
  const int made = nghttp2_session_client_new(&s.session, callbacks, &s);
  nghttp2_session_callbacks_del(callbacks);
  if (made != 0) return absl::ResourceExhaustedError(absl::StrCat("nghttp2: ", nghttp2_strerror(made)));
  const nghttp2_settings_entry settings[] = {{NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
                                             {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, kWindow}};
  nghttp2_submit_settings(s.session, NGHTTP2_FLAG_NONE, settings, std::size(settings));
  nghttp2_session_set_local_window_size(s.session, NGHTTP2_FLAG_NONE, 0, kWindow);
  return connection;
}

absl::Status H2Connection::Receive() {
  Session& s = *session_;
  char buffer[16384];
  while (true) {
    const ssize_t n = s.transport->Read(buffer, sizeof(buffer));
    if (n == 0) return absl::OkStatus();
    if (n < 0) {
      return absl::UnavailableError(heard_from_peer_ ? s.transport->error()
                                                     : "the daemon closed the connection before it answered");
    }
    const ssize_t taken = nghttp2_session_mem_recv(s.session, reinterpret_cast<const uint8_t*>(buffer), n);
    if (taken < 0) {
      return absl::UnavailableError(absl::StrCat("not an HTTP/2 answer: ", nghttp2_strerror(static_cast<int>(taken))));
    }
    heard_from_peer_ = true;
  }
}

absl::StatusOr<UnaryReply> H2Connection::Call(absl::string_view method, absl::string_view request,
                                              absl::Time deadline) {
  Session& s = *session_;
  s.body = h2::FramedMessage(request);
  s.body_sent = 0;
  s.closed = false;
  s.close_error = 0;
  s.headers.clear();
  s.data.clear();

  const std::string timeout = h2::GrpcTimeout(deadline - absl::Now());
  const nghttp2_nv headers[] = {h2::Header(":method", "POST"),
                                h2::Header(":scheme", tls_ ? "https" : "http"),
                                h2::Header(":path", method),
                                h2::Header(":authority", authority_),
                                h2::Header("content-type", "application/grpc"),
                                h2::Header("te", "trailers"),
                                h2::Header("grpc-timeout", timeout),
                                h2::Header("user-agent", "gpusched-cli")};
  nghttp2_data_provider body{};
  body.read_callback = &Session::ReadBody;
  s.stream_id = nghttp2_submit_request(s.session, nullptr, headers, std::size(headers), &body, nullptr);
  if (s.stream_id < 0) return absl::InternalError(absl::StrCat("nghttp2: ", nghttp2_strerror(s.stream_id)));

  // The request's frames go out at once. The connection's own (the
  // acknowledgements of the daemon's SETTINGS and PING) wait until the call
  // has taken kAcknowledgeAfter: a short call ends first and spares the
  // daemon a wake-up per frame; a long one sends them well within any
  // settings timeout; a call after this one on the connection carries them.
  const absl::Time acknowledge_at = absl::Now() + kAcknowledgeAfter;
  bool request_out = false;
  while (!s.closed) {
    if (!request_out || absl::Now() >= acknowledge_at) {
      if (absl::Status flushed = s.Flush(); !flushed.ok()) return flushed;
      request_out = s.body_sent == s.body.size() && s.out.empty();
    }
    if (!nghttp2_session_want_read(s.session) && s.out.empty()) {
      return absl::UnavailableError("the daemon closed the connection before it answered");
    }
    const bool holding_acks = request_out && absl::Now() < acknowledge_at;
    pollfd p{s.transport->fd(), s.transport->PollEvents(!s.out.empty()), 0};
    const int ready = poll(&p, 1, h2::MillisLeft(holding_acks ? std::min(deadline, acknowledge_at) : deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return absl::UnavailableError(Errno("poll"));
    if (ready == 0 && absl::Now() < deadline) continue;
    if (ready == 0) return absl::DeadlineExceededError("no answer before the deadline");
    if ((p.revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
    if (absl::Status received = Receive(); !received.ok()) return received;
  }
  // What the server acknowledged is sent; the settings ACK and window
  // updates of this call go with the next one or not at all.
  const std::optional<absl::Status> status = h2::CallStatus(s.headers);
  if (!status.has_value()) {
    const absl::Status not_grpc = h2::NotGrpcError(s.headers);
    return s.close_error == 0
               ? not_grpc
               : absl::UnavailableError(absl::StrCat(not_grpc.message(), ": stream reset with error ", s.close_error));
  }
  UnaryReply reply;
  reply.status = *status;
  reply.trailers = h2::CallMetadata(s.headers);
  if (!reply.status.ok()) return reply;
  // One length-prefixed message, uncompressed (no grpc-accept-encoding was offered).
  h2::MessageSplitter splitter(s.data.size());
  splitter.Append(s.data);
  absl::StatusOr<std::optional<std::string>> message = splitter.Next();
  if (!message.ok() || !message->has_value() || splitter.pending() != 0) {
    return absl::UnavailableError(absl::StrCat("the answer is not one whole gRPC message (", s.data.size(), " bytes)"));
  }
  reply.response = std::move(**message);
  return reply;
}

}  // namespace gpusched::cli
