#pragma once

#include <string>

#include "absl/strings/string_view.h"

namespace gpusched::tls {

// What a failed connection to gpuschedd most likely means when it broke in or
// right after the TLS handshake, in words an operator can act on; "" when the
// gRPC error message does not look like that (nobody listening, a timeout).
//
// gRPC reports a handshake the daemon refused (our certificate is not signed
// by its client CA, or we sent none, or we spoke plaintext to a TLS port) as
// a bare "Socket closed": the hint is what turns that into a cause.
std::string TlsConnectHint(absl::string_view grpc_error, bool using_tls);

// The hint for a plaintext client whose connection the daemon closed
// before answering anything: most likely a TLS port.
std::string PlaintextClosedHint();

}  // namespace gpusched::tls
