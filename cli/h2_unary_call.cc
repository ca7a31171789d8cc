#include "cli/h2_unary_call.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/io/h2/socket_dial.h"

namespace gpusched::cli {
namespace {

// Large enough that a reply of many pages of jobs is never held up waiting
// for window updates; the CLI reads everything it is sent anyway.
constexpr int32_t kWindow = 1 << 30;
constexpr absl::Duration kAcknowledgeAfter = absl::Seconds(1);

}  // namespace

H2Connection::H2Connection(std::unique_ptr<h2::ClientConnection> connection) : connection_(std::move(connection)) {}

H2Connection::~H2Connection() = default;

absl::StatusOr<std::unique_ptr<H2Connection>> H2Connection::Dial(absl::string_view target,
                                                                 const std::optional<tls::TlsMaterial>& tls,
                                                                 absl::Time deadline, tls::ConnectFailure* failure) {
  absl::StatusOr<std::unique_ptr<h2::ClientConnection>> connection = h2::ClientConnection::Dial(
      {.target = std::string(target), .tls = tls, .user_agent = "gpusched-cli", .window = kWindow}, deadline, -1,
      failure);
  if (!connection.ok()) return connection.status();
  return std::unique_ptr<H2Connection>(new H2Connection(*std::move(connection)));
}

absl::StatusOr<UnaryReply> H2Connection::Call(absl::string_view method, absl::string_view request,
                                              absl::Time deadline) {
  h2::ClientConnection& c = *connection_;
  if (absl::Status started = c.StartCall(method, deadline); !started.ok()) return started;
  c.AppendBody(h2::FramedMessage(request));
  c.EndBody();

  // The request's frames go out at once. The connection's own (the
  // acknowledgements of the daemon's SETTINGS and PING) wait until the call
  // has taken kAcknowledgeAfter: a short call ends first and spares the
  // daemon a wake-up per frame; a long one sends them well within any
  // settings timeout; a call after this one on the connection carries them.
  const absl::Time acknowledge_at = absl::Now() + kAcknowledgeAfter;
  bool request_out = false;
  while (!c.call_closed()) {
    if (!request_out || absl::Now() >= acknowledge_at) {
      if (absl::Status flushed = c.Flush(); !flushed.ok()) return flushed;
      request_out = c.body_waiting() == 0 && !c.output_waiting();
    }
    if (!c.alive()) return absl::UnavailableError("the daemon closed the connection before it answered");
    const bool holding_acks = request_out && absl::Now() < acknowledge_at;
    pollfd p{c.fd(), c.PollEvents(), 0};
    const int ready = poll(&p, 1, h2::MillisLeft(holding_acks ? std::min(deadline, acknowledge_at) : deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return absl::UnavailableError(absl::StrCat("poll: ", std::strerror(errno)));
    if (absl::Now() >= deadline) return absl::DeadlineExceededError("no answer before the deadline");
    if (!c.ShouldReceive(p.revents)) continue;
    if (absl::Status received = c.Receive(); !received.ok() && !c.call_closed()) return received;
  }
  // What the server acknowledged is sent; the settings ACK and window
  // updates of this call go with the next one or not at all.
  const std::optional<absl::Status> status = h2::CallStatus(c.headers());
  if (!status.has_value()) return c.CallEnd();  // not gRPC, or reset: the transport's error
  UnaryReply reply;
  reply.status = *status;
  reply.trailers = h2::CallMetadata(c.headers());
  if (!reply.status.ok()) return reply;
  // One length-prefixed message, uncompressed (no grpc-accept-encoding was offered).
  absl::StatusOr<std::optional<std::string>> message = c.messages().Next();
  if (!message.ok() || !message->has_value() || c.messages().pending() != 0) {
    return absl::UnavailableError("the answer is not one whole gRPC message");
  }
  reply.response = std::move(**message);
  return reply;
}

bool H2Connection::heard_from_peer() const { return connection_->heard_from_peer(); }

tls::ConnectFailure H2Connection::failure() const { return connection_->failure(); }

}  // namespace gpusched::cli
