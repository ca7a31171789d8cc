#include "common/io/tls/grpc_credentials.h"

namespace gpusched::tls {

std::shared_ptr<grpc::ServerCredentials> ServerCredentials(const std::optional<TlsMaterial>& tls) {
  if (!tls) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions options(tls->ca_certs.empty()
                                                ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                                                : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  options.pem_root_certs = tls->ca_certs;
  options.pem_key_cert_pairs.push_back({tls->private_key, tls->cert_chain});
  return grpc::SslServerCredentials(options);
}

}  // namespace gpusched::tls
