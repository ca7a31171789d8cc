#pragma once

#include <string>

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

}  // namespace gpusched::tls
