#include "common/io/h2/grpc_bidi_stream.h"

#include <nghttp2/nghttp2.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/io/h2/grpc_framing.h"
#include "common/io/h2/nghttp2_header.h"
#include "common/io/h2/socket_dial.h"
#include "common/io/h2/transport.h"

namespace gpusched::h2 {
namespace {

// The other end may send this much before we have read it: the agent reads
// every message as it comes, so the window only has to cover a burst.
constexpr int32_t kWindow = 16 << 20;
// What Write queues before it waits, and what the thread takes into the
// stream's body at a time: a peer that stops reading holds back writers,
// not memory.
constexpr size_t kMaxQueued = 8 << 20;
constexpr size_t kMaxBody = 1 << 20;

}  // namespace

// The connection as the stream's thread sees it: nghttp2's session and what
// it has heard. Only that thread touches it.
struct GrpcBidiStream::Connection {
  GrpcBidiStream* owner = nullptr;
  std::unique_ptr<Transport> transport;
  bool plaintext = true;
  nghttp2_session* session = nullptr;
  int32_t stream_id = -1;
  std::string out;        // frames serialized and not yet taken by the transport
  std::string body;       // framed messages not yet handed to nghttp2
  size_t body_taken = 0;  // of body
  bool body_end = false;  // half-closed: END_STREAM once body is out
  bool deferred = false;  // nghttp2 waits for body to grow
  bool heard = false;     // a valid frame came from the other end
  bool closed = false;
  uint32_t close_error = 0;
  std::map<std::string, std::string> headers;  // initial and trailing, by name
  MessageSplitter splitter;
  absl::Status broken;  // what made the stream's messages unreadable

  Connection(GrpcBidiStream* owner_, size_t max_message_bytes) : owner(owner_), splitter(max_message_bytes) {}
  ~Connection() {
    if (session != nullptr) nghttp2_session_del(session);
  }

  // Serializes what nghttp2 has ready and writes as much as the transport
  // takes now; the rest waits for POLLOUT.
  absl::Status Flush() {
    while (true) {
      const uint8_t* frames = nullptr;
      const ssize_t n = nghttp2_session_mem_send(session, &frames);
      if (n < 0) return absl::UnavailableError(absl::StrCat("HTTP/2: ", nghttp2_strerror(static_cast<int>(n))));
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

  // Everything readable now, through nghttp2; false when the connection
  // is over or what came is not HTTP/2.
  bool Receive(absl::Status* why) {
    char buffer[16384];
    while (true) {
      const ssize_t n = transport->Read(buffer, sizeof(buffer));
      if (n == 0) return true;
      if (n < 0) {
        *why = absl::UnavailableError(transport->error());
        return false;
      }
      const ssize_t taken = nghttp2_session_mem_recv(session, reinterpret_cast<const uint8_t*>(buffer), n);
      if (taken < 0) {
        *why = absl::UnavailableError(
            absl::StrCat("the answer is not HTTP/2: ", nghttp2_strerror(static_cast<int>(taken))));
        return false;
      }
    }
  }

  static int OnFrame(nghttp2_session*, const nghttp2_frame*, void* user) {
    static_cast<Connection*>(user)->heard = true;
    return 0;
  }

  static int OnHeader(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name, size_t name_length,
                      const uint8_t* value, size_t value_length, uint8_t, void* user) {
    Connection& c = *static_cast<Connection*>(user);
    if (frame->hd.stream_id != c.stream_id) return 0;
    c.headers[std::string(reinterpret_cast<const char*>(name), name_length)] =
        std::string(reinterpret_cast<const char*>(value), value_length);
    return 0;
  }

  static int OnData(nghttp2_session*, uint8_t, int32_t stream_id, const uint8_t* data, size_t length, void* user) {
    Connection& c = *static_cast<Connection*>(user);
    if (stream_id != c.stream_id || !c.broken.ok()) return 0;
    c.splitter.Append(absl::string_view(reinterpret_cast<const char*>(data), length));
    while (true) {
      absl::StatusOr<std::optional<std::string>> message = c.splitter.Next();
      if (!message.ok()) {
        c.broken = message.status();
        return 0;
      }
      if (!message->has_value()) return 0;
      c.owner->Deliver(std::move(**message));
    }
  }

  static int OnClose(nghttp2_session*, int32_t stream_id, uint32_t error_code, void* user) {
    Connection& c = *static_cast<Connection*>(user);
    if (stream_id != c.stream_id) return 0;
    c.closed = true;
    c.close_error = error_code;
    return 0;
  }

  static ssize_t ReadBody(nghttp2_session*, int32_t, uint8_t* buffer, size_t length, uint32_t* flags,
                          nghttp2_data_source*, void* user) {
    Connection& c = *static_cast<Connection*>(user);
    const size_t n = std::min(length, c.body.size() - c.body_taken);
    if (n == 0) {
      if (c.body_end) {
        *flags |= NGHTTP2_DATA_FLAG_EOF;
        return 0;
      }
      c.deferred = true;
      return NGHTTP2_ERR_DEFERRED;
    }
    std::memcpy(buffer, c.body.data() + c.body_taken, n);
    c.body_taken += n;
    if (c.body_taken == c.body.size()) {
      c.body.clear();
      c.body_taken = 0;
      if (c.body_end) *flags |= NGHTTP2_DATA_FLAG_EOF;
    }
    return static_cast<ssize_t>(n);
  }
};

GrpcBidiStream::GrpcBidiStream(Options options) : options_(std::move(options)) {
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  cancel_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  thread_ = std::thread([this] { Run(); });
}

GrpcBidiStream::~GrpcBidiStream() {
  Cancel();
  if (thread_.joinable()) thread_.join();
  if (wake_fd_ >= 0) close(wake_fd_);
  if (cancel_fd_ >= 0) close(cancel_fd_);
}

namespace {

void Signal(int event_fd) {
  const uint64_t one = 1;
  if (event_fd >= 0) (void)!write(event_fd, &one, sizeof(one));
}

}  // namespace

void GrpcBidiStream::Wake() { Signal(wake_fd_); }

bool GrpcBidiStream::Write(absl::string_view message) {
  {
    MutexLock lock(&mu_);
    while (outgoing_.size() > kMaxQueued && !ended_ && !cancelled_) cv_.Wait(&mu_);
    if (ended_ || cancelled_ || writes_done_) return false;
    outgoing_ += FramedMessage(message);
  }
  Wake();
  return true;
}

bool GrpcBidiStream::WritesDone() {
  {
    MutexLock lock(&mu_);
    if (ended_ || cancelled_ || writes_done_) return false;
    writes_done_ = true;
  }
  Wake();
  return true;
}

bool GrpcBidiStream::Read(std::string* message) {
  MutexLock lock(&mu_);
  while (inbox_.empty() && !ended_) cv_.Wait(&mu_);
  if (inbox_.empty()) return false;
  *message = std::move(inbox_.front());
  inbox_.pop_front();
  return true;
}

void GrpcBidiStream::Cancel() {
  {
    MutexLock lock(&mu_);
    if (ended_ || cancelled_) return;
    cancelled_ = true;
  }
  cv_.SignalAll();
  Signal(cancel_fd_);
  Wake();
}

GrpcBidiStream::End GrpcBidiStream::Finish() {
  {
    MutexLock lock(&mu_);
    while (!ended_) cv_.Wait(&mu_);
  }
  if (thread_.joinable()) thread_.join();
  MutexLock lock(&mu_);
  return end_;
}

void GrpcBidiStream::Deliver(std::string message) {
  {
    MutexLock lock(&mu_);
    inbox_.push_back(std::move(message));
  }
  cv_.SignalAll();
}

void GrpcBidiStream::TakeOutgoing(std::string* into, bool* writes_done, bool* cancelled) {
  bool took = false;
  {
    MutexLock lock(&mu_);
    if (into != nullptr && !outgoing_.empty()) {
      into->append(outgoing_);
      outgoing_.clear();
      took = true;
    }
    *writes_done = writes_done_ && outgoing_.empty();
    *cancelled = cancelled_;
  }
  if (took) cv_.SignalAll();
}

void GrpcBidiStream::Run() {
  // OpenSSL writes to the socket with write(2): a daemon that closed the
  // connection must end this call, not the process. The signal is this
  // thread's (a write's), so blocking it here is enough.
  sigset_t pipe;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
  End end = Serve();
  {
    MutexLock lock(&mu_);
    ended_ = true;
    end_ = std::move(end);
  }
  cv_.SignalAll();
}

GrpcBidiStream::End GrpcBidiStream::Serve() {
  End end;
  if (wake_fd_ < 0 || cancel_fd_ < 0) {
    end.status = absl::ResourceExhaustedError(absl::StrCat("eventfd: ", std::strerror(errno)));
    return end;
  }
  absl::StatusOr<SocketTarget> target = ParseSocketTarget(options_.target);
  if (!target.ok()) {
    end.status = target.status();
    return end;
  }
  const absl::Time connect_deadline = std::min(absl::Now() + options_.connect_timeout, options_.deadline);
  absl::StatusOr<int> fd = DialSocket(*target, connect_deadline, cancel_fd_);
  if (!fd.ok()) {
    end.status = fd.status();
    return end;
  }
  Connection c(this, options_.max_message_bytes);
  c.plaintext = !options_.tls.has_value();
  if (c.plaintext) {
    c.transport = PlainTransport(*fd);
  } else {
    const std::string host = target->unix_socket ? target->authority : target->host;
    absl::StatusOr<std::unique_ptr<Transport>> tls =
        TlsClientHandshake(*fd, *options_.tls, host, connect_deadline, cancel_fd_, &end.failure);
    if (!tls.ok()) {
      end.status = tls.status();
      return end;
    }
    c.transport = std::move(*tls);
  }

  nghttp2_session_callbacks* callbacks = nullptr;
  if (nghttp2_session_callbacks_new(&callbacks) != 0) {
    end.status = absl::ResourceExhaustedError("nghttp2: out of memory");
    return end;
  }
  nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, &Connection::OnFrame);
  nghttp2_session_callbacks_set_on_header_callback(callbacks, &Connection::OnHeader);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, &Connection::OnData);
  nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, &Connection::OnClose);
  const int made = nghttp2_session_client_new(&c.session, callbacks, &c);
  nghttp2_session_callbacks_del(callbacks);
  if (made != 0) {
    end.status = absl::ResourceExhaustedError(absl::StrCat("nghttp2: ", nghttp2_strerror(made)));
    return end;
  }
  const nghttp2_settings_entry settings[] = {{NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
                                             {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, kWindow}};
  nghttp2_submit_settings(c.session, NGHTTP2_FLAG_NONE, settings, std::size(settings));
  nghttp2_session_set_local_window_size(c.session, NGHTTP2_FLAG_NONE, 0, kWindow);
  std::vector<nghttp2_nv> headers = {Header(":method", "POST"),
                                     Header(":scheme", c.plaintext ? "http" : "https"),
                                     Header(":path", options_.method),
                                     Header(":authority", target->authority),
                                     Header("content-type", "application/grpc"),
                                     Header("te", "trailers"),
                                     Header("user-agent", options_.user_agent)};
  const std::string timeout = GrpcTimeout(options_.deadline - absl::Now());
  if (options_.deadline != absl::InfiniteFuture()) headers.push_back(Header("grpc-timeout", timeout));
  nghttp2_data_provider body{};
  body.read_callback = &Connection::ReadBody;
  c.stream_id = nghttp2_submit_request(c.session, nullptr, headers.data(), headers.size(), &body, nullptr);
  if (c.stream_id < 0) {
    end.status = absl::InternalError(absl::StrCat("nghttp2: ", nghttp2_strerror(c.stream_id)));
    return end;
  }

  absl::Status broke;
  while (true) {
    bool writes_done = false;
    bool cancelled = false;
    TakeOutgoing(c.body.size() - c.body_taken < kMaxBody ? &c.body : nullptr, &writes_done, &cancelled);
    if (cancelled) {
      nghttp2_submit_rst_stream(c.session, NGHTTP2_FLAG_NONE, c.stream_id, NGHTTP2_CANCEL);
      (void)c.Flush();  // best effort: the daemon learns at once rather than at the socket's close
      end.status = absl::CancelledError("cancelled");
      end.metadata = CallMetadata(c.headers);
      end.heard_from_peer = c.heard;
      return end;
    }
    if (writes_done && !c.body_end) c.body_end = true;
    if (c.deferred && (c.body.size() > c.body_taken || c.body_end)) {
      c.deferred = false;
      nghttp2_session_resume_data(c.session, c.stream_id);
    }
    if (absl::Status flushed = c.Flush(); !flushed.ok()) {
      broke = flushed;
      break;
    }
    if (!c.broken.ok()) {
      nghttp2_submit_rst_stream(c.session, NGHTTP2_FLAG_NONE, c.stream_id, NGHTTP2_INTERNAL_ERROR);
      (void)c.Flush();
      end.status = c.broken;
      end.heard_from_peer = c.heard;
      return end;
    }
    if (c.closed) break;
    if (!nghttp2_session_want_read(c.session) && !nghttp2_session_want_write(c.session) && c.out.empty()) {
      broke = absl::UnavailableError("the daemon ended the connection (GOAWAY)");
      break;
    }
    pollfd p[2] = {{c.transport->fd(), c.transport->PollEvents(!c.out.empty()), 0}, {wake_fd_, POLLIN, 0}};
    const int ready = poll(p, 2, MillisLeft(options_.deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) {
      broke = absl::UnavailableError(absl::StrCat("poll: ", std::strerror(errno)));
      break;
    }
    if (ready == 0 && absl::Now() >= options_.deadline) {
      nghttp2_submit_rst_stream(c.session, NGHTTP2_FLAG_NONE, c.stream_id, NGHTTP2_CANCEL);
      (void)c.Flush();
      end.status = absl::DeadlineExceededError("the call's deadline passed");
      end.metadata = CallMetadata(c.headers);
      end.heard_from_peer = c.heard;
      return end;
    }
    if ((p[1].revents & POLLIN) != 0) {
      uint64_t count = 0;
      (void)!read(wake_fd_, &count, sizeof(count));
    }
    if ((p[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0 && !c.Receive(&broke)) break;
  }

  end.metadata = CallMetadata(c.headers);
  end.heard_from_peer = c.heard;
  if (c.closed) {
    const std::optional<absl::Status> status = CallStatus(c.headers);
    end.status = status.has_value()
                     ? *status
                     : absl::UnavailableError(absl::StrCat(
                           NotGrpcError(c.headers).message(),
                           c.close_error != 0 ? absl::StrCat(": stream reset with error ", c.close_error) : ""));
    return end;
  }
  end.status = broke;
  if (!c.heard) {
    // Nothing of HTTP/2 came back: a TLS server taking our plaintext, or
    // one that refused our certificate after the handshake (TLS 1.3).
    end.failure = c.plaintext ? tls::ConnectFailure::kPlaintextClosed : c.transport->failure();
  }
  return end;
}

}  // namespace gpusched::h2
