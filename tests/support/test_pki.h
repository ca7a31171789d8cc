#pragma once

// Certificates for TLS tests, made at test time with the openssl command line
// (as an operator would make them), in a directory the test owns.

#include <string>

namespace gpusched::testing {

// The openssl binary found at configure time; throws std::runtime_error when
// there was none.
std::string OpensslBinary();

struct CertAndKey {
  std::string cert;  // PEM certificate path
  std::string key;   // PEM private key path (unencrypted)
};

// A private certificate authority: a self-signed CA certificate and key in
// `dir`, and the certificates it signs next to them (ECDSA P-256, valid for
// two days). Throws std::runtime_error with openssl's output when openssl
// fails or is not installed.
class TestCa {
 public:
  TestCa(std::string dir, std::string name);

  // The CA certificate: what a daemon's tls_client_ca or a client's tls_ca names.
  const std::string& cert() const { return ca_.cert; }
  const std::string& key() const { return ca_.key; }

  // A server certificate for gpuschedd on loopback: subjectAltName
  // IP:127.0.0.1 and DNS:localhost, extendedKeyUsage serverAuth.
  CertAndKey IssueServer(const std::string& name) const;
  // A client certificate (an agent's, a user's): extendedKeyUsage clientAuth.
  CertAndKey IssueClient(const std::string& name) const;

 private:
  CertAndKey Issue(const std::string& name, const std::string& extensions) const;

  std::string dir_;
  std::string name_;
  CertAndKey ca_;
};

}  // namespace gpusched::testing
