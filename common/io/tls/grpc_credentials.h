#pragma once

#include <memory>
#include <optional>

#include "common/io/tls/tls_files.h"
#include "grpcpp/security/server_credentials.h"

namespace gpusched::tls {

// Plaintext without material. With a CA, a client that does not present a
// certificate signed by it is refused in the handshake, before any RPC
// (GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY); without one,
// clients are not asked for a certificate.
std::shared_ptr<grpc::ServerCredentials> ServerCredentials(const std::optional<TlsMaterial>& tls);

}  // namespace gpusched::tls
