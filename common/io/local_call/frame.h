#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

// The CLI's unary calls over the daemon's Unix socket, without HTTP/2.
//
// Every CLI command is a connection of its own. Over gRPC the daemon spent
// more on each of them (a transport, its settings exchange, the hand-offs
// between its threads) than on the submit it carried. On its own host the
// CLI speaks this instead; the daemon tells the two apart by a connection's
// first byte (HTTP/2's preface begins with 'P', kMagic does not), so every
// other client keeps gRPC on the same socket. The methods, messages and
// status codes are gpusched.v1.Scheduler's.
//
// A connection begins with kMagic from the client; then, one call at a time:
//   request: u32 method length, u32 message length, the method's name
//            ("SubmitJob"), the serialized request message;
//   reply:   u32 status code (the canonical codes absl and gRPC share),
//            u32 status message length, u32 message length, the status
//            message, the serialized response (empty unless the code is OK).
// Integers are little-endian.
namespace gpusched::local_call {

inline constexpr absl::string_view kMagic = "GSCALL1\n";
inline constexpr size_t kMaxMethodBytes = 64;
// What the daemon takes in one request: gRPC's default, which it serves too.
inline constexpr size_t kMaxRequestBytes = 4 << 20;
// What the CLI takes in one reply, as over HTTP/2.
inline constexpr size_t kMaxReplyBytes = 64 << 20;

struct Request {
  std::string method;
  std::string message;
};

struct Reply {
  absl::Status status;
  std::string message;
};

std::string EncodeRequest(absl::string_view method, absl::string_view message);
// The message is left out when `status` is not OK.
std::string EncodeReply(const absl::Status& status, absl::string_view message);

// The request at the front of `buffer`, removed from it once whole; nullopt
// while more bytes are needed. InvalidArgument, saying what was wrong, for
// bytes that can never become a request (a method name that is empty, too
// long or not a name); ResourceExhausted for a message over
// kMaxRequestBytes. After an error the connection cannot be read further.
absl::StatusOr<std::optional<Request>> TakeRequest(std::string& buffer);

// The same for a reply, at most `max_message_bytes` of message.
absl::StatusOr<std::optional<Reply>> TakeReply(std::string& buffer, size_t max_message_bytes = kMaxReplyBytes);

}  // namespace gpusched::local_call
