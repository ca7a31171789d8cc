#include "common/io/h2/client_connection.h"

#include <nghttp2/nghttp2.h>
#include <poll.h>

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/io/h2/nghttp2_header.h"
#include "common/io/h2/socket_dial.h"

namespace gpusched::h2 {

// nghttp2's callbacks, with the connection as their user data.
struct ClientConnection::Callbacks {
  static int OnFrame(nghttp2_session*, const nghttp2_frame* frame, void* user) {
    ClientConnection& c = *static_cast<ClientConnection*>(user);
    c.heard_ = true;
    // The answer's end (trailers, or a last DATA) ends the call, though
    // the stream stays half-open until our own end or a reset: a server
    // need not reset a stream whose client is still sending.
    if (frame->hd.stream_id == c.stream_id_ && (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0 &&
        (frame->hd.type == NGHTTP2_HEADERS || frame->hd.type == NGHTTP2_DATA)) {
      c.closed_ = true;
    }
    return 0;
  }

  static int OnHeader(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name, size_t name_length,
                      const uint8_t* value, size_t value_length, uint8_t, void* user) {
    ClientConnection& c = *static_cast<ClientConnection*>(user);
    if (frame->hd.stream_id != c.stream_id_) return 0;
    c.headers_[std::string(reinterpret_cast<const char*>(name), name_length)] =
        std::string(reinterpret_cast<const char*>(value), value_length);
    return 0;
  }

  static int OnData(nghttp2_session*, uint8_t, int32_t stream_id, const uint8_t* data, size_t length, void* user) {
    ClientConnection& c = *static_cast<ClientConnection*>(user);
    if (stream_id != c.stream_id_) return 0;
    c.messages_.Append(absl::string_view(reinterpret_cast<const char*>(data), length));
    c.received_ += length;
    return 0;
  }

  static int OnClose(nghttp2_session*, int32_t stream_id, uint32_t error_code, void* user) {
    ClientConnection& c = *static_cast<ClientConnection*>(user);
    if (stream_id != c.stream_id_) return 0;
    c.closed_ = true;
    c.close_error_ = error_code;
    return 0;
  }

  static ssize_t ReadBody(nghttp2_session*, int32_t, uint8_t* buffer, size_t length, uint32_t* flags,
                          nghttp2_data_source*, void* user) {
    ClientConnection& c = *static_cast<ClientConnection*>(user);
    const size_t n = std::min(length, c.body_waiting());
    if (n == 0 && !c.body_end_) {
      c.deferred_ = true;
      return NGHTTP2_ERR_DEFERRED;
    }
    std::memcpy(buffer, c.body_.data() + c.body_taken_, n);
    c.body_taken_ += n;
    if (c.body_taken_ == c.body_.size()) {
      c.body_.clear();
      c.body_taken_ = 0;
      if (c.body_end_) *flags |= NGHTTP2_DATA_FLAG_EOF;
    } else if (c.body_taken_ > (64 << 10) && c.body_taken_ * 2 > c.body_.size()) {
      // A body that never quite empties (a stream under back-pressure)
      // must not keep what was sent.
      c.body_.erase(0, c.body_taken_);
      c.body_taken_ = 0;
    }
    return static_cast<ssize_t>(n);
  }
};

ClientConnection::ClientConnection(Options options, std::unique_ptr<Transport> transport, std::string authority)
    : options_(std::move(options)),
      transport_(std::move(transport)),
      authority_(std::move(authority)),
      messages_(options_.max_message_bytes) {}

ClientConnection::~ClientConnection() {
  if (session_ != nullptr) nghttp2_session_del(session_);
}

absl::StatusOr<std::unique_ptr<ClientConnection>> ClientConnection::Dial(Options options, absl::Time deadline,
                                                                         int cancel_fd, tls::ConnectFailure* failure) {
  *failure = tls::ConnectFailure::kOther;
  absl::StatusOr<SocketTarget> target = ParseSocketTarget(options.target);
  if (!target.ok()) return target.status();
  absl::StatusOr<int> fd = DialSocket(*target, deadline, cancel_fd);
  if (!fd.ok()) return fd.status();
  std::unique_ptr<Transport> transport;
  if (options.tls.has_value()) {
    const std::string& host = target->unix_socket ? target->authority : target->host;
    absl::StatusOr<std::unique_ptr<Transport>> secured =
        TlsClientHandshake(*fd, *options.tls, host, deadline, cancel_fd, failure);
    if (!secured.ok()) return secured.status();
    transport = *std::move(secured);
  } else {
    transport = PlainTransport(*fd);
  }
  std::unique_ptr<ClientConnection> connection(
      new ClientConnection(std::move(options), std::move(transport), target->authority));

  nghttp2_session_callbacks* callbacks = nullptr;
  if (nghttp2_session_callbacks_new(&callbacks) != 0) return absl::ResourceExhaustedError("nghttp2: out of memory");
  nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, &Callbacks::OnFrame);
  nghttp2_session_callbacks_set_on_header_callback(callbacks, &Callbacks::OnHeader);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, &Callbacks::OnData);
  nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, &Callbacks::OnClose);
  nghttp2_option* option = nullptr;
  if (nghttp2_option_new(&option) != 0) {
    nghttp2_session_callbacks_del(callbacks);
    return absl::ResourceExhaustedError("nghttp2: out of memory");
  }
  if (connection->options_.window_follows_reader) nghttp2_option_set_no_auto_window_update(option, 1);
  const int made = nghttp2_session_client_new2(&connection->session_, callbacks, connection.get(), option);
  nghttp2_option_del(option);
  nghttp2_session_callbacks_del(callbacks);
  if (made != 0) return absl::ResourceExhaustedError(absl::StrCat("nghttp2: ", nghttp2_strerror(made)));
  const int32_t window = connection->options_.window;
  const nghttp2_settings_entry settings[] = {{NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
                                             {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, static_cast<uint32_t>(window)}};
  nghttp2_submit_settings(connection->session_, NGHTTP2_FLAG_NONE, settings, std::size(settings));
  nghttp2_session_set_local_window_size(connection->session_, NGHTTP2_FLAG_NONE, 0, window);
  return connection;
}

absl::Status ClientConnection::StartCall(absl::string_view method, absl::Time deadline) {
  body_.clear();
  body_taken_ = 0;
  body_end_ = false;
  deferred_ = false;
  closed_ = false;
  close_error_ = 0;
  received_ = 0;
  headers_.clear();
  messages_.Clear();

  std::vector<nghttp2_nv> headers = {Header(":method", "POST"),
                                     Header(":scheme", options_.tls.has_value() ? "https" : "http"),
                                     Header(":path", method),
                                     Header(":authority", authority_),
                                     Header("content-type", "application/grpc"),
                                     Header("te", "trailers"),
                                     Header("user-agent", options_.user_agent)};
  std::string timeout;  // outlives the submit below, which copies it
  if (deadline != absl::InfiniteFuture()) {
    timeout = GrpcTimeout(deadline - absl::Now());
    headers.push_back(Header("grpc-timeout", timeout));
  }
  nghttp2_data_provider body{};
  body.read_callback = &Callbacks::ReadBody;
  stream_id_ = nghttp2_submit_request(session_, nullptr, headers.data(), headers.size(), &body, nullptr);
  if (stream_id_ < 0) return absl::InternalError(absl::StrCat("nghttp2: ", nghttp2_strerror(stream_id_)));
  return absl::OkStatus();
}

void ClientConnection::AppendBody(absl::string_view framed) {
  body_.append(framed.data(), framed.size());
  if (deferred_) {
    deferred_ = false;
    nghttp2_session_resume_data(session_, stream_id_);
  }
}

void ClientConnection::EndBody() {
  body_end_ = true;
  if (deferred_) {
    deferred_ = false;
    nghttp2_session_resume_data(session_, stream_id_);
  }
}

void ClientConnection::ResetCall(uint32_t error_code) {
  nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, stream_id_, error_code);
  (void)Flush();  // best effort: the call ends either way
}

absl::Status ClientConnection::Flush() {
  while (true) {
    const uint8_t* frames = nullptr;
    const ssize_t n = nghttp2_session_mem_send(session_, &frames);
    if (n < 0) return absl::UnavailableError(absl::StrCat("HTTP/2: ", nghttp2_strerror(static_cast<int>(n))));
    if (n == 0) break;
    out_.append(reinterpret_cast<const char*>(frames), static_cast<size_t>(n));
  }
  while (!out_.empty()) {
    const ssize_t n = transport_->Write(out_.data(), out_.size());
    if (n < 0) return absl::UnavailableError(transport_->error());
    if (n == 0) break;
    out_.erase(0, static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

absl::Status ClientConnection::Receive() {
  char buffer[16384];
  while (true) {
    const ssize_t n = transport_->Read(buffer, sizeof(buffer));
    if (n == 0) return absl::OkStatus();
    if (n < 0) {
      // OpenSSL's reason says more than "closed" (an alert: our certificate
      // refused); a plaintext connection closed before a frame says nothing.
      const bool said_nothing = !heard_ && !options_.tls.has_value();
      return absl::UnavailableError(said_nothing ? "the other end closed the connection at once" : transport_->error());
    }
    const ssize_t taken = nghttp2_session_mem_recv(session_, reinterpret_cast<const uint8_t*>(buffer), n);
    if (taken < 0) {
      return absl::UnavailableError(
          absl::StrCat("the answer is not HTTP/2: ", nghttp2_strerror(static_cast<int>(taken))));
    }
  }
}

void ClientConnection::Consumed(size_t bytes) {
  if (bytes > 0) nghttp2_session_consume(session_, stream_id_, bytes);
}

bool ClientConnection::ShouldReceive(short revents) const {
  return (revents & (POLLIN | POLLHUP | POLLERR)) != 0 || ((revents & POLLOUT) != 0 && transport_->ReadWaitsForWrite());
}

bool ClientConnection::alive() const {
  return nghttp2_session_want_read(session_) || nghttp2_session_want_write(session_) || !out_.empty();
}

absl::Status ClientConnection::CallEnd() const {
  const std::optional<absl::Status> status = CallStatus(headers_);
  if (status.has_value()) return *status;
  // Reset without a status: what HTTP/2 says happened (as gRPC maps it).
  switch (close_error_) {
    case NGHTTP2_NO_ERROR: return NotGrpcError(headers_);
    case NGHTTP2_REFUSED_STREAM:
      return absl::UnavailableError("the server refused the call (REFUSED_STREAM): it is going away or overloaded");
    case NGHTTP2_CANCEL: return absl::CancelledError("the server cancelled the call");
    case NGHTTP2_ENHANCE_YOUR_CALM: return absl::ResourceExhaustedError("the server said ENHANCE_YOUR_CALM");
    default: return absl::UnavailableError(absl::StrCat("the server reset the call (HTTP/2 error ", close_error_, ")"));
  }
}

tls::ConnectFailure ClientConnection::failure() const {
  if (heard_) return tls::ConnectFailure::kOther;
  return options_.tls.has_value() ? transport_->failure() : tls::ConnectFailure::kPlaintextClosed;
}

}  // namespace gpusched::h2
