#include "common/io/h2/grpc_bidi_stream.h"

#include <nghttp2/nghttp2.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/io/h2/client_connection.h"
#include "common/io/h2/grpc_framing.h"
#include "common/io/h2/socket_dial.h"
#include "google/protobuf/message_lite.h"

namespace gpusched::h2 {
namespace {

// The other end may send this much that Read has not taken: a reader that
// falls behind (a session's output into a full pipe) holds the sender back
// rather than filling our memory.
constexpr int32_t kWindow = 16 << 20;
// What Write queues before it waits, and what the thread takes into the
// stream's body at a time: a peer that stops reading holds back writers,
// not memory.
constexpr size_t kMaxQueued = 8 << 20;
constexpr size_t kMaxBody = 1 << 20;

// What a message took on the wire, as the window counts it.
size_t FramedSize(const std::string& message) { return message.size() + 5; }

}  // namespace

GrpcBidiStream::GrpcBidiStream(Options options) : options_(std::move(options)) {
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ >= 0) cancel_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (cancel_fd_ < 0) eventfd_error_ = errno;
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
    // As gRPC's Write: the message is taken once the call is under way
    // (false when the connection fails), and not while much waits unsent.
    while ((!call_started_ || outgoing_.size() > kMaxQueued) && !ended_ && !cancelled_) cv_.Wait(&mu_);
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
  bool window_closing = false;
  {
    MutexLock lock(&mu_);
    while (inbox_.empty() && !ended_) cv_.Wait(&mu_);
    if (inbox_.empty()) return false;
    *message = std::move(inbox_.front());
    inbox_.pop_front();
    // The thread opens the window again for what was read; it needs waking
    // only when the other end may be waiting for that.
    window_closing = inbox_bytes_ >= kWindow / 4;
    inbox_bytes_ -= FramedSize(*message);
    if (window_closing && !ended_) Wake();
  }
  return true;
}

void GrpcBidiStream::Cancel() {
  // Signalled under the lock: once ended_ is set the owner may destroy the
  // stream, and this may run on another thread.
  MutexLock lock(&mu_);
  if (ended_ || cancelled_) return;
  cancelled_ = true;
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
    inbox_bytes_ += FramedSize(message);
    inbox_.push_back(std::move(message));
  }
  cv_.SignalAll();
}

void GrpcBidiStream::CallStarted() {
  {
    MutexLock lock(&mu_);
    call_started_ = true;
  }
  cv_.SignalAll();
}

GrpcBidiStream::Outgoing GrpcBidiStream::TakeOutgoing(std::string* into) {
  Outgoing taken;
  bool took = false;
  {
    MutexLock lock(&mu_);
    if (into != nullptr && !outgoing_.empty()) {
      into->append(outgoing_);
      outgoing_.clear();
      took = true;
    }
    taken.writes_done = writes_done_ && outgoing_.empty();
    taken.cancelled = cancelled_;
    taken.unread = inbox_bytes_;
  }
  if (took) cv_.SignalAll();  // writers waiting for room
  return taken;
}

void GrpcBidiStream::Run() {
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
    end.status = absl::ResourceExhaustedError(absl::StrCat("eventfd: ", std::strerror(eventfd_error_)));
    return end;
  }
  const absl::Time connect_deadline = std::min(absl::Now() + options_.connect_timeout, options_.deadline);
  absl::StatusOr<std::unique_ptr<ClientConnection>> dialed =
      ClientConnection::Dial({.target = options_.target,
                              .tls = options_.tls,
                              .user_agent = options_.user_agent,
                              .window = kWindow,
                              .max_message_bytes = options_.max_message_bytes,
                              .window_follows_reader = true},
                             connect_deadline, cancel_fd_, &end.failure);
  if (!dialed.ok()) {
    end.status = dialed.status();
    return end;
  }
  ClientConnection& c = **dialed;
  // How the call ended, with what the connection heard.
  auto ended = [&](absl::Status status) {
    end.status = std::move(status);
    end.metadata = CallMetadata(c.headers());
    end.heard_from_peer = c.heard_from_peer();
    return end;
  };
  // Hands the messages that arrived whole to Read; false (the call reset)
  // when one cannot be read.
  absl::Status unreadable;
  auto deliver = [&] {
    while (true) {
      absl::StatusOr<std::optional<std::string>> message = c.messages().Next();
      if (!message.ok()) {
        unreadable = message.status();
        c.ResetCall(NGHTTP2_INTERNAL_ERROR);
        return false;
      }
      if (!message->has_value()) return true;
      Deliver(std::move(**message));
    }
  };
  if (absl::Status started = c.StartCall(options_.method, options_.deadline); !started.ok()) return ended(started);
  CallStarted();

  absl::Status broke;
  bool body_ended = false;
  uint64_t consumed = 0;  // DATA bytes the other end has been told it may send again
  while (true) {
    std::string taken;
    const Outgoing outgoing = TakeOutgoing(c.body_waiting() < kMaxBody ? &taken : nullptr);
    if (outgoing.cancelled) {
      c.ResetCall(NGHTTP2_CANCEL);
      return ended(absl::CancelledError("cancelled"));
    }
    if (absl::Now() >= options_.deadline) {
      c.ResetCall(NGHTTP2_CANCEL);
      return ended(absl::DeadlineExceededError("the call's deadline passed"));
    }
    if (!taken.empty()) c.AppendBody(taken);
    if (outgoing.writes_done && !body_ended) {
      body_ended = true;
      c.EndBody();
    }
    // Everything received but what waits unread in the inbox: a message
    // begun counts as taken, so one larger than the window still arrives.
    if (const uint64_t taken_in = c.received() - std::min<uint64_t>(c.received(), outgoing.unread);
        taken_in > consumed) {
      c.Consumed(taken_in - consumed);
      consumed = taken_in;
    }
    if (absl::Status flushed = c.Flush(); !flushed.ok()) {
      broke = flushed;
      break;
    }
    if (!deliver()) return ended(unreadable);
    if (c.call_closed()) return ended(c.CallEnd());
    if (!c.alive()) {
      broke = absl::UnavailableError("the server ended the connection (GOAWAY)");
      break;
    }
    pollfd p[2] = {{c.fd(), c.PollEvents(), 0}, {wake_fd_, POLLIN, 0}};
    const int ready = poll(p, 2, MillisLeft(options_.deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) {
      broke = absl::UnavailableError(absl::StrCat("poll: ", std::strerror(errno)));
      break;
    }
    if ((p[1].revents & POLLIN) != 0) {
      uint64_t count = 0;
      (void)!read(wake_fd_, &count, sizeof(count));
    }
    if (c.ShouldReceive(p[0].revents)) {
      if (absl::Status received = c.Receive(); !received.ok()) {
        broke = received;
        break;
      }
    }
  }
  // The connection broke: what came whole before it still counts, and a
  // call that ended in the same read ended as it said.
  if (!deliver()) return ended(unreadable);
  if (c.call_closed()) return ended(c.CallEnd());
  end.failure = c.failure();
  return ended(broke);
}

bool ReadMessage(GrpcBidiStream& stream, google::protobuf::MessageLite* message) {
  std::string bytes;
  if (!stream.Read(&bytes)) return false;
  if (message->ParseFromString(bytes)) return true;
  stream.Cancel();
  return false;
}

}  // namespace gpusched::h2
