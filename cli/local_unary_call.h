#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "cli/unary_connection.h"

namespace gpusched::cli {

// Unary calls on the daemon's Unix socket in the CLI's local call framing
// (common/io/local_call/frame.h): no HTTP/2 handshake, and for the daemon no
// gRPC transport per command. Methods are gpusched.v1.Scheduler's.
class LocalConnection final : public UnaryConnection {
 public:
  // Unavailable, saying why, when nothing accepts at `path` by `deadline`.
  static absl::StatusOr<std::unique_ptr<LocalConnection>> Dial(const std::string& path, absl::Time deadline);
  ~LocalConnection() override;
  LocalConnection(const LocalConnection&) = delete;
  LocalConnection& operator=(const LocalConnection&) = delete;

  // `method` is a path of gpusched.v1.Scheduler ("/gpusched.v1.Scheduler/GetJob").
  absl::StatusOr<UnaryReply> Call(absl::string_view method, absl::string_view request, absl::Time deadline) override;
  // Whether the daemon ever answered a local call here. A daemon older than
  // local calls hands the connection to gRPC, which closes it unanswered.
  bool heard_from_peer() const override { return answered_; }
  tls::ConnectFailure failure() const override { return tls::ConnectFailure::kOther; }

 private:
  explicit LocalConnection(int fd) : fd_(fd) {}
  // Sends `bytes` whole, or says why not.
  absl::Status SendAll(absl::string_view bytes, absl::Time deadline);

  const int fd_;  // non-blocking
  bool greeted_ = false;
  bool answered_ = false;
  std::string in_;
};

}  // namespace gpusched::cli
