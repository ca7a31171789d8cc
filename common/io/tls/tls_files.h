#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gpusched::tls {

// Which end of a connection a process is, and so which files it needs.
enum class TlsSide {
  // gpuschedd: its own certificate and key; with a CA, every client must
  // present a certificate signed by it (mutual TLS).
  kServer,
  // The agent and the CLI: the CA that signed the daemon's certificate; with
  // a certificate and key of their own, they can prove who they are.
  kClient,
};

// The names of the three settings on one side, as settings files spell them
// (each flag is the same name with dashes: tls_client_ca is --tls-client-ca).
struct TlsKeyNames {
  TlsSide side;
  const char* cert;
  const char* key;
  const char* ca;
};
inline constexpr TlsKeyNames kServerTlsKeys{TlsSide::kServer, "tls_cert", "tls_key", "tls_client_ca"};
inline constexpr TlsKeyNames kClientTlsKeys{TlsSide::kClient, "tls_cert", "tls_key", "tls_ca"};

// The paths as configured; an empty one is not set. None set: plaintext.
struct TlsFiles {
  std::string cert;  // PEM certificate, then its chain
  std::string key;   // PEM private key of that certificate, unencrypted
  std::string ca;    // PEM CA certificates to trust (see TlsSide)
  bool any() const { return !cert.empty() || !key.empty() || !ca.empty(); }
};

// What gRPC is given: the files' text, already checked.
struct TlsMaterial {
  std::string cert_chain;   // empty: no certificate of our own (a client without one)
  std::string private_key;  // empty with cert_chain
  std::string ca_certs;     // empty on a server: clients are not asked for a certificate
};

// A problem with the TLS settings, and the setting it is about (for a
// settings file: the key whose line to point at).
struct TlsProblem {
  const char* key;
  std::string message;  // "tls_key: /etc/gpusched/x.key is not the private key of ..."
};

// Reads and checks every file that is set (readable, PEM, a key that belongs
// to the certificate when both are set) and, when `complete`, whether the set
// ones make sense together: certificate and key come as a pair; a server's CA
// needs its certificate; a client's certificate needs the CA to check the
// daemon with. Not `complete`: other sources may fill in the rest (each of the
// CLI's settings has its own). Fills `material` when there is no problem.
std::vector<TlsProblem> CheckTlsFiles(const TlsFiles& files, const TlsKeyNames& names, TlsMaterial* material,
                                      bool complete = true);

// std::nullopt when no file is set (plaintext); the material when all is
// well; else InvalidArgument with the first problem, naming setting and file.
absl::StatusOr<std::optional<TlsMaterial>> LoadTls(const TlsFiles& files, const TlsKeyNames& names);

}  // namespace gpusched::tls
