#include "common/io/tls/connect_failure_hint.h"

namespace gpusched::tls {

std::string HintFor(ConnectFailure failure) {
  switch (failure) {
    case ConnectFailure::kOther: return "";
    case ConnectFailure::kPlaintextClosed:
      return "the daemon closed the connection at once: if it serves TLS, set tls_ca (and tls_cert and tls_key when "
             "it requires client certificates)";
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

}  // namespace gpusched::tls
