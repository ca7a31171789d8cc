#include "common/io/tls/connect_failure_hint.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

namespace gpusched::tls {
namespace {

ConnectFailure ClassifyGrpcError(absl::string_view grpc_error, bool using_tls) {
  const bool closed = absl::StrContains(grpc_error, "Socket closed") ||
                      absl::StrContains(grpc_error, "Connection reset") ||
                      absl::StrContains(grpc_error, "Handshake read failed");
  if (!using_tls) return closed ? ConnectFailure::kPlaintextClosed : ConnectFailure::kOther;
  if (absl::StrContains(grpc_error, "Peer name")) return ConnectFailure::kServerNameMismatch;
  const std::string lower = absl::AsciiStrToLower(grpc_error);
  if (absl::StrContains(lower, "handshake failed") || absl::StrContains(lower, "certificate verify failed")) {
    return ConnectFailure::kServerUntrusted;
  }
  return closed ? ConnectFailure::kRefusedByServer : ConnectFailure::kOther;
}

}  // namespace

std::string PlaintextClosedHint() {
  return "the daemon closed the connection at once: if it serves TLS, set tls_ca (and tls_cert and tls_key when it "
         "requires client certificates)";
}

std::string HintFor(ConnectFailure failure) {
  switch (failure) {
    case ConnectFailure::kOther: return "";
    case ConnectFailure::kPlaintextClosed: return PlaintextClosedHint();
    case ConnectFailure::kServerNameMismatch:
      return "TLS: the daemon's certificate does not name the address dialed (its subjectAltName must list that "
             "host name or IP address)";
    case ConnectFailure::kServerUntrusted:
      return "TLS: the daemon's certificate is not signed by the CA in tls_ca (or has expired)";
    case ConnectFailure::kRefusedByServer:
      return "TLS: the daemon refused the handshake: our certificate (tls_cert) must be signed by the daemon's "
             "tls_client_ca, or the daemon serves plaintext";
  }
  return "";
}

std::string TlsConnectHint(absl::string_view grpc_error, bool using_tls) {
  return HintFor(ClassifyGrpcError(grpc_error, using_tls));
}

}  // namespace gpusched::tls
