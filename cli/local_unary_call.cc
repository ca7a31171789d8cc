#include "cli/local_unary_call.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "cli/direct_client.h"
#include "common/io/h2/socket_dial.h"
#include "common/io/local_call/frame.h"

namespace gpusched::cli {
namespace {

// Waits until `fd` is ready for `events`; DeadlineExceeded past `deadline`.
absl::Status WaitFor(int fd, short events, absl::Time deadline) {
  while (true) {
    pollfd p{fd, events, 0};
    const int ready = poll(&p, 1, h2::MillisLeft(deadline));
    if (ready > 0) return absl::OkStatus();
    if (ready == 0 || absl::Now() >= deadline) return absl::DeadlineExceededError("no answer before the deadline");
    if (errno != EINTR) return absl::UnavailableError(absl::StrCat("poll: ", std::strerror(errno)));
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<LocalConnection>> LocalConnection::Dial(const std::string& path, absl::Time deadline) {
  h2::SocketTarget target;
  target.unix_socket = true;
  target.path = path;
  target.authority = "localhost";
  absl::StatusOr<int> fd = h2::DialSocket(target, deadline);
  if (!fd.ok()) return fd.status();
  return std::unique_ptr<LocalConnection>(new LocalConnection(*fd));
}

LocalConnection::~LocalConnection() { close(fd_); }

absl::Status LocalConnection::SendAll(absl::string_view bytes, absl::Time deadline) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n >= 0) {
      sent += static_cast<size_t>(n);
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (absl::Status ready = WaitFor(fd_, POLLOUT, deadline); !ready.ok()) return ready;
    } else if (errno != EINTR) {
      return absl::UnavailableError(
          absl::StrCat("the daemon closed the connection before it answered (", std::strerror(errno), ")"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<UnaryReply> LocalConnection::Call(absl::string_view method, absl::string_view request,
                                                 absl::Time deadline) {
  if (!absl::ConsumePrefix(&method, kSchedulerServicePath)) {
    return absl::InvalidArgumentError(absl::StrCat("local calls reach only ", kSchedulerServicePath, ", not ", method));
  }
  std::string frame;
  if (!greeted_) frame.append(local_call::kMagic.data(), local_call::kMagic.size());
  frame += local_call::EncodeRequest(method, request);
  greeted_ = true;
  if (absl::Status sent = SendAll(frame, deadline); !sent.ok()) return sent;
  char buffer[64 << 10];
  while (true) {
    absl::StatusOr<std::optional<local_call::Reply>> reply = local_call::TakeReply(in_);
    if (!reply.ok()) {
      return absl::UnavailableError(absl::StrCat("the answer is not a local call's reply: ", reply.status().message()));
    }
    if (reply->has_value()) {
      answered_ = true;
      UnaryReply answer;
      answer.status = std::move((*reply)->status);
      answer.response = std::move((*reply)->message);
      return answer;
    }
    const ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
    if (n > 0) {
      in_.append(buffer, static_cast<size_t>(n));
    } else if (n == 0) {
      return absl::UnavailableError("the daemon closed the connection before it answered");
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (absl::Status ready = WaitFor(fd_, POLLIN, deadline); !ready.ok()) return ready;
    } else if (errno != EINTR) {
      return absl::UnavailableError(absl::StrCat("reading the answer: ", std::strerror(errno)));
    }
  }
}

}  // namespace gpusched::cli
