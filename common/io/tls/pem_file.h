#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace gpusched::tls {

// Reads and checks the PEM files TLS is configured with, so that a wrong path
// or a wrong file fails at start with the file's name instead of as refused
// handshakes later. Each error message starts with the path.

// One or more X.509 certificates: a certificate with its chain (leaf first),
// or a bundle of CA certificates. Returns the file's text.
absl::StatusOr<std::string> ReadCertificatesPem(const std::string& path);

// An unencrypted private key (PKCS#8, RSA or EC). Returns the file's text.
absl::StatusOr<std::string> ReadPrivateKeyPem(const std::string& path);

// OK when `key_pem` is the private key of the first certificate in
// `cert_pem`; otherwise an error naming both files.
absl::Status CheckKeyMatchesCertificate(const std::string& cert_pem, const std::string& cert_path,
                                        const std::string& key_pem, const std::string& key_path);

}  // namespace gpusched::tls
