#pragma once

#include <string>

#include "absl/strings/string_view.h"

namespace gpusched::tls {

// What a connection to gpuschedd that failed in or right after the TLS
// handshake (or a plaintext one it closed at once) most likely means.
enum class ConnectFailure {
  kOther,  // nothing more to say: nobody listening, a timeout, a refusal in words
  // Plaintext, and the daemon closed the connection before answering: a TLS port.
  kPlaintextClosed,
  // The daemon's certificate does not name the address dialed.
  kServerNameMismatch,
  // The daemon's certificate is not signed by our tls_ca, or has expired.
  kServerUntrusted,
  // The daemon refused the handshake or closed it: it did not accept our
  // certificate (or we sent none), or it serves plaintext.
  kRefusedByServer,
};

// The hint for `failure`, in words an operator can act on; "" for kOther.
std::string HintFor(ConnectFailure failure);

// The same from a gRPC error message. gRPC reports a handshake the daemon
// refused (our certificate is not signed by its client CA, or we sent none,
// or we spoke plaintext to a TLS port) as a bare "Socket closed": the hint
// is what turns that into a cause.
std::string TlsConnectHint(absl::string_view grpc_error, bool using_tls);

// The hint for a plaintext client whose connection the daemon closed
// before answering anything: most likely a TLS port.
std::string PlaintextClosedHint();

}  // namespace gpusched::tls
