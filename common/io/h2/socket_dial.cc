#include "common/io/h2/socket_dial.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"

namespace gpusched::h2 {
namespace {

// Connects `fd` (non-blocking) to `address` by `deadline`: 0 or the errno
// (ECANCELED when `cancel_fd` became readable first).
int ConnectBy(int fd, const sockaddr* address, socklen_t length, absl::Time deadline, int cancel_fd) {
  if (connect(fd, address, length) == 0) return 0;
  if (errno != EINPROGRESS) return errno;
  while (true) {
    pollfd p[2] = {{fd, POLLOUT, 0}, {cancel_fd, POLLIN, 0}};
    const int ready = poll(p, cancel_fd >= 0 ? 2 : 1, MillisLeft(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return errno;
    if (ready == 0) return ETIMEDOUT;
    if (cancel_fd >= 0 && (p[1].revents & POLLIN) != 0) return ECANCELED;
    break;
  }
  int error = 0;
  socklen_t size = sizeof(error);
  if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size) != 0) return errno;
  return error;
}

absl::Status ConnectError(absl::string_view where, int error) {
  if (error == ECANCELED) return absl::CancelledError("cancelled while connecting");
  return absl::UnavailableError(absl::StrCat("connect to ", where, ": ", std::strerror(error)));
}

absl::StatusOr<int> DialUnix(const std::string& path, absl::Time deadline, int cancel_fd) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(address.sun_path)) {
    return absl::UnavailableError(absl::StrCat("not a usable socket path: \"", path, "\""));
  }
  std::memcpy(address.sun_path, path.data(), path.size());
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return absl::UnavailableError(absl::StrCat("socket: ", std::strerror(errno)));
  if (const int error =
          ConnectBy(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address), deadline, cancel_fd)) {
    close(fd);
    return ConnectError(path, error);
  }
  return fd;
}

absl::StatusOr<int> DialTcp(const SocketTarget& target, absl::Time deadline, int cancel_fd) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int error = getaddrinfo(target.host.c_str(), target.port.c_str(), &hints, &found); error != 0) {
    return absl::UnavailableError(absl::StrCat("cannot resolve ", target.host, ": ", gai_strerror(error)));
  }
  int last_error = EADDRNOTAVAIL;
  int left = 0;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) ++left;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next, --left) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) continue;
    // Each address its share of the time left: one that drops packets (an
    // unreachable IPv6 route) must not take it all from the next.
    const absl::Time now = absl::Now();
    const absl::Time try_until =
        deadline == absl::InfiniteFuture() || left <= 1 ? deadline : now + (deadline - now) / left;
    if (const int error = ConnectBy(fd, a->ai_addr, a->ai_addrlen, try_until, cancel_fd); error != 0) {
      last_error = error;
      close(fd);
      if (error == ECANCELED || absl::Now() >= deadline) break;
      continue;
    }
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    freeaddrinfo(found);
    return fd;
  }
  freeaddrinfo(found);
  return ConnectError(target.authority, last_error);
}

}  // namespace

absl::StatusOr<SocketTarget> ParseSocketTarget(absl::string_view target) {
  SocketTarget parsed;
  absl::string_view rest = target;
  // gRPC's names for the same: dns:///HOST:PORT (no DNS authority),
  // ipv4:ADDRESS:PORT, ipv6:[ADDRESS]:PORT.
  if (!absl::ConsumePrefix(&rest, "dns:///") && !absl::ConsumePrefix(&rest, "ipv4:")) {
    absl::ConsumePrefix(&rest, "ipv6:");
  }
  if (absl::ConsumePrefix(&rest, "unix:")) {
    if (absl::StartsWith(rest, "//")) rest.remove_prefix(2);  // unix:///run/x.sock
    if (rest.empty()) return absl::InvalidArgumentError(absl::StrCat("no socket path in \"", target, "\""));
    parsed.unix_socket = true;
    parsed.path = std::string(rest);
    parsed.authority = "localhost";
    return parsed;
  }
  const size_t colon = rest.rfind(':');
  if (colon == absl::string_view::npos || colon == 0 || colon + 1 == rest.size() || absl::StrContains(rest, "://")) {
    return absl::InvalidArgumentError(absl::StrCat("not HOST:PORT or unix:PATH: \"", target, "\""));
  }
  absl::string_view host = rest.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  parsed.host = std::string(host);
  parsed.port = std::string(rest.substr(colon + 1));
  parsed.authority = std::string(rest);
  return parsed;
}

int MillisLeft(absl::Time deadline) {
  if (deadline == absl::InfiniteFuture()) return -1;
  const absl::Duration left = deadline - absl::Now();
  if (left <= absl::ZeroDuration()) return 0;
  return static_cast<int>(std::min<int64_t>(absl::ToInt64Milliseconds(left) + 1, 1 << 30));
}

absl::StatusOr<int> DialSocket(const SocketTarget& target, absl::Time deadline, int cancel_fd) {
  return target.unix_socket ? DialUnix(target.path, deadline, cancel_fd) : DialTcp(target, deadline, cancel_fd);
}

}  // namespace gpusched::h2
