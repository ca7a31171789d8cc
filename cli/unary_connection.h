#pragma once

#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/io/tls/connect_failure_hint.h"

namespace gpusched::cli {

// What a unary call answered: its status (grpc-status and grpc-message),
// the response message's bytes when it succeeded, and the rest of its
// metadata, initial and trailing, by name (a standby names the active
// replica there).
struct UnaryReply {
  absl::Status status;
  std::string response;
  std::map<std::string, std::string> trailers;
};

// One connection to a daemon that carries unary calls one after another:
// gRPC over HTTP/2 (H2Connection), or the CLI's local calls on the daemon's
// Unix socket (LocalConnection).
class UnaryConnection {
 public:
  virtual ~UnaryConnection() = default;

  // One call of `method` ("/gpusched.v1.Scheduler/SubmitJob") with the
  // serialized `request`. The reply carries the call's own status; an error
  // here is the transport's: Unavailable when the connection broke or the
  // answer was not one, DeadlineExceeded when `deadline` passed first.
  virtual absl::StatusOr<UnaryReply> Call(absl::string_view method, absl::string_view request, absl::Time deadline) = 0;
  // Whether the other end ever answered in this connection's protocol.
  virtual bool heard_from_peer() const = 0;
  // What a connection that broke before the daemon spoke most likely means.
  virtual tls::ConnectFailure failure() const = 0;
};

}  // namespace gpusched::cli
