#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace gpusched::h2 {

// gRPC over HTTP/2 ("PROTOCOL-HTTP2" in gRPC's documentation), the parts a
// client without the gRPC library needs: messages framed on the stream's
// DATA, and the call's status in its trailers.

// A message as it goes on the wire: not compressed, its length (4 bytes,
// big-endian), its bytes.
std::string FramedMessage(absl::string_view message);

// Takes a stream's DATA as it arrives, in any pieces, and hands out whole
// messages.
class MessageSplitter {
 public:
  explicit MessageSplitter(size_t max_message_bytes) : max_message_bytes_(max_message_bytes) {}
  void Append(absl::string_view data) { buffer_.append(data.data(), data.size()); }
  // The next whole message; std::nullopt while it has not all arrived; an
  // error for a compressed message (none was offered) or one larger than
  // the limit.
  absl::StatusOr<std::optional<std::string>> Next();
  // Forgets what was appended (a new call).
  void Clear() {
    buffer_.clear();
    taken_ = 0;
  }
  // Bytes of a message begun and not finished.
  size_t pending() const { return buffer_.size() - taken_; }

 private:
  const size_t max_message_bytes_;
  std::string buffer_;
  size_t taken_ = 0;
};

// A grpc-timeout header's value for `left`: at most 8 digits and a unit,
// at least 1 ms.
std::string GrpcTimeout(absl::Duration left);

// grpc-message is percent-encoded.
std::string PercentDecoded(absl::string_view text);

// The call's status from its headers and trailers (by name): grpc-status
// and grpc-message; std::nullopt when there is no valid grpc-status (the
// other end does not speak gRPC).
std::optional<absl::Status> CallStatus(const std::map<std::string, std::string>& headers);

// Unavailable, saying what came instead of gRPC: "the answer was not gRPC
// (HTTP status 404)".
absl::Status NotGrpcError(const std::map<std::string, std::string>& headers);

// The metadata a call's headers carry beyond HTTP/2's pseudo-headers and
// the status.
std::map<std::string, std::string> CallMetadata(const std::map<std::string, std::string>& headers);

}  // namespace gpusched::h2
