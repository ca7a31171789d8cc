#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace gpusched::h2 {

// Where a daemon address leads: a Unix socket ("unix:PATH", also
// "unix:///PATH") or HOST:PORT ("[::1]:6870" for IPv6), one address; also
// as gRPC names them ("dns:///HOST:PORT", "ipv4:A.B.C.D:PORT",
// "ipv6:[ADDRESS]:PORT").
struct SocketTarget {
  bool unix_socket = false;
  std::string path;  // unix_socket
  std::string host;  // without brackets
  std::string port;
  // What HTTP/2's :authority and TLS's name check use: HOST:PORT as given,
  // "localhost" for a Unix socket (as gRPC names it).
  std::string authority;
};

// InvalidArgument, saying why, for what is not one of the forms above.
absl::StatusOr<SocketTarget> ParseSocketTarget(absl::string_view target);

// Milliseconds left until `deadline`, for poll(2): at least 0.
int MillisLeft(absl::Time deadline);

// A connected, non-blocking, close-on-exec stream socket to `target` (TCP
// with Nagle off), trying each address the host resolves to, each with its
// share of the time left. Unavailable, naming the address and the reason,
// when nothing accepts by `deadline`; Cancelled as soon as `cancel_fd` (-1:
// none) becomes readable. The name itself is resolved by getaddrinfo(3),
// which neither interrupts: a resolver that hangs holds the dial for its
// own timeout.
absl::StatusOr<int> DialSocket(const SocketTarget& target, absl::Time deadline, int cancel_fd = -1);

}  // namespace gpusched::h2
