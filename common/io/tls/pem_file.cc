#include "common/io/tls/pem_file.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <memory>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/io/config_file/settings_file.h"

namespace gpusched::tls {
namespace {

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using Bio = std::unique_ptr<BIO, BioFree>;
using Cert = std::unique_ptr<X509, X509Free>;
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;

Bio MemoryBio(const std::string& text) { return Bio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size()))); }

// OpenSSL's reason for the last failure, and the error queue emptied so that
// it does not surface later in an unrelated gRPC handshake.
std::string OpenSslReason() {
  const unsigned long code = ERR_peek_last_error();
  const char* text = code == 0 ? nullptr : ERR_reason_error_string(code);
  std::string reason = text != nullptr ? text : code == 0 ? "unknown error" : absl::StrCat("OpenSSL error ", code);
  ERR_clear_error();
  return reason;
}

// "End of the PEM blocks" is also reported as an error (no start line).
bool OnlyNoStartLine() {
  const unsigned long code = ERR_peek_last_error();
  const bool end = code == 0 || (ERR_GET_LIB(code) == ERR_LIB_PEM && ERR_GET_REASON(code) == PEM_R_NO_START_LINE);
  if (end) ERR_clear_error();
  return end;
}

// No passphrase prompt: gRPC cannot use an encrypted key, so it is an error.
int NoPassphrase(char*, int, int, void*) { return 0; }

Cert FirstCertificate(const std::string& pem) {
  Bio bio = MemoryBio(pem);
  Cert cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  ERR_clear_error();
  return cert;
}

Key PrivateKey(const std::string& pem) {
  Bio bio = MemoryBio(pem);
  Key key(PEM_read_bio_PrivateKey(bio.get(), nullptr, NoPassphrase, nullptr));
  ERR_clear_error();
  return key;
}

}  // namespace

absl::StatusOr<std::string> ReadCertificatesPem(const std::string& path) {
  auto text = config::ReadConfigText(path);
  if (!text.ok()) return text.status();
  Bio bio = MemoryBio(*text);
  int count = 0;
  // PEM_read_bio_X509 skips blocks of other kinds (a key next to the
  // certificate) and fails at the end of the text or at a broken certificate.
  while (Cert cert{PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)}) ++count;
  if (!OnlyNoStartLine()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": certificate ", count + 1, " in it cannot be read (", OpenSslReason(), ")"));
  }
  if (count == 0) {
    const bool key = absl::StrContains(*text, "PRIVATE KEY-----");
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": no certificate in it (expected PEM, -----BEGIN CERTIFICATE-----)",
                     key ? "; it holds a private key: are the certificate and key settings swapped?" : ""));
  }
  return *std::move(text);
}

absl::StatusOr<std::string> ReadPrivateKeyPem(const std::string& path) {
  auto text = config::ReadConfigText(path);
  if (!text.ok()) return text.status();
  if (absl::StrContains(*text, "ENCRYPTED")) {
    return absl::InvalidArgumentError(
        absl::StrCat(path,
                     ": the private key is encrypted; gRPC needs it unencrypted (keep the file readable by the service "
                     "alone, e.g. mode 0600)"));
  }
  if (!absl::StrContains(*text, "PRIVATE KEY-----")) {
    const bool cert = absl::StrContains(*text, "-----BEGIN CERTIFICATE-----");
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": no private key in it (expected PEM, -----BEGIN PRIVATE KEY-----)",
                     cert ? "; it holds a certificate: are the certificate and key settings swapped?" : ""));
  }
  Bio bio = MemoryBio(*text);
  Key key(PEM_read_bio_PrivateKey(bio.get(), nullptr, NoPassphrase, nullptr));
  if (key == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": the private key cannot be read (", OpenSslReason(), ")"));
  }
  return *std::move(text);
}

absl::Status CheckKeyMatchesCertificate(const std::string& cert_pem, const std::string& cert_path,
                                        const std::string& key_pem, const std::string& key_path) {
  Cert cert = FirstCertificate(cert_pem);
  Key key = PrivateKey(key_pem);
  if (cert == nullptr) return absl::InvalidArgumentError(absl::StrCat(cert_path, ": no certificate in it"));
  if (key == nullptr) return absl::InvalidArgumentError(absl::StrCat(key_path, ": no private key in it"));
  if (X509_check_private_key(cert.get(), key.get()) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError(
        absl::StrCat(key_path, " is not the private key of the certificate in ", cert_path));
  }
  return absl::OkStatus();
}

}  // namespace gpusched::tls
