#pragma once

#include <map>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace gpusched::cli {

// What a unary gRPC call answered: its status (grpc-status and
// grpc-message), the response message's bytes when it succeeded, and the
// rest of its metadata, initial and trailing, by name (a standby names the
// active replica there).
struct UnaryReply {
  absl::Status status;
  std::string response;
  std::map<std::string, std::string> trailers;
};

// Whether H2Connection can reach `target` itself: "unix:PATH" (also
// "unix:///PATH") or HOST:PORT, in plain text. Other gRPC targets (dns:///,
// ipv6:...) are the gRPC library's.
bool IsPlainH2Target(absl::string_view target);

// Unary gRPC calls on one HTTP/2 connection in plain text, made with
// nghttp2 on the calling thread. A command of the CLI makes one or a few
// calls and exits: a gRPC channel costs it more than the call itself (a
// resolver, helper threads, their start and teardown). The wire is the same
// gRPC the daemon serves to every client; streams stay the gRPC library's.
class H2Connection {
 public:
  // Unavailable, saying why, when nothing accepts a connection at `target`
  // by `deadline`.
  static absl::StatusOr<std::unique_ptr<H2Connection>> Dial(absl::string_view target, absl::Time deadline);
  ~H2Connection();
  H2Connection(const H2Connection&) = delete;
  H2Connection& operator=(const H2Connection&) = delete;

  // One call of `method` ("/package.Service/Method") with the serialized
  // `request`, on a stream of its own. The reply carries the call's own
  // status; an error here is the transport's: Unavailable when the
  // connection broke or the answer was not gRPC, DeadlineExceeded when
  // `deadline` passed first.
  absl::StatusOr<UnaryReply> Call(absl::string_view method, absl::string_view request, absl::Time deadline);
  // Whether the other end ever sent a byte: a daemon serving TLS closes a
  // plaintext connection without a word.
  bool heard_from_peer() const { return heard_from_peer_; }

 private:
  struct Session;
  H2Connection(int fd, std::string authority);
  const int fd_;
  const std::string authority_;
  std::unique_ptr<Session> session_;
  bool heard_from_peer_ = false;
};

}  // namespace gpusched::cli
