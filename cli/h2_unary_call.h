#pragma once

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "cli/unary_connection.h"
#include "common/io/h2/client_connection.h"
#include "common/io/tls/connect_failure_hint.h"
#include "common/io/tls/tls_files.h"

namespace gpusched::cli {

// Unary gRPC calls on one HTTP/2 connection, in plain text or TLS, made
// with nghttp2 on the calling thread. A command of the CLI makes one or a
// few calls and exits: a gRPC channel costs it more than the call itself (a
// resolver, helper threads, their start and teardown). The wire is the same
// gRPC the daemon serves to every client.
class H2Connection final : public UnaryConnection {
 public:
  // `target` as h2::ParseSocketTarget takes it; TLS when `tls` is given
  // (h2::TlsClientHandshake). Unavailable, saying why, when nothing accepts
  // a connection at `target` by `deadline` or the handshake fails (then
  // `failure` says what that most likely means).
  static absl::StatusOr<std::unique_ptr<H2Connection>> Dial(absl::string_view target,
                                                            const std::optional<tls::TlsMaterial>& tls,
                                                            absl::Time deadline, tls::ConnectFailure* failure);
  ~H2Connection();
  H2Connection(const H2Connection&) = delete;
  H2Connection& operator=(const H2Connection&) = delete;

  // Each call on a stream of its own.
  absl::StatusOr<UnaryReply> Call(absl::string_view method, absl::string_view request, absl::Time deadline) override;
  // Whether the other end ever spoke HTTP/2: a daemon serving TLS closes a
  // plaintext connection without a word.
  bool heard_from_peer() const override;
  tls::ConnectFailure failure() const override;

 private:
  explicit H2Connection(std::unique_ptr<h2::ClientConnection> connection);
  const std::unique_ptr<h2::ClientConnection> connection_;
};

}  // namespace gpusched::cli
