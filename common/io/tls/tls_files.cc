#include "common/io/tls/tls_files.h"

#include "absl/strings/str_cat.h"
#include "common/io/tls/pem_file.h"

namespace gpusched::tls {
namespace {

// A setting that is there only with another one.
void Needs(std::vector<TlsProblem>& problems, const std::string& value, const char* key, const std::string& other,
           const char* other_key, const char* why) {
  if (!value.empty() && other.empty()) {
    problems.push_back({key, absl::StrCat(key, " is set but ", other_key, " is not: ", why)});
  }
}

}  // namespace

std::vector<TlsProblem> CheckTlsFiles(const TlsFiles& files, const TlsKeyNames& names, TlsMaterial* material,
                                      bool complete) {
  std::vector<TlsProblem> problems;
  auto read = [&](const std::string& path, const char* key, auto reader, std::string* text) {
    if (path.empty()) return false;
    auto pem = reader(path);
    if (!pem.ok()) {
      problems.push_back({key, absl::StrCat(key, ": ", pem.status().message())});
      return false;
    }
    *text = *std::move(pem);
    return true;
  };
  TlsMaterial read_in;
  const bool cert = read(files.cert, names.cert, ReadCertificatesPem, &read_in.cert_chain);
  const bool key = read(files.key, names.key, ReadPrivateKeyPem, &read_in.private_key);
  read(files.ca, names.ca, ReadCertificatesPem, &read_in.ca_certs);
  if (cert && key) {
    if (absl::Status match = CheckKeyMatchesCertificate(read_in.cert_chain, files.cert, read_in.private_key, files.key);
        !match.ok()) {
      problems.push_back({names.key, absl::StrCat(names.key, ": ", match.message())});
    }
  }

  if (complete) {
    Needs(problems, files.cert, names.cert, files.key, names.key, "the certificate needs its private key");
    Needs(problems, files.key, names.key, files.cert, names.cert, "the private key needs its certificate");
    if (names.side == TlsSide::kServer) {
      if (files.cert.empty() && files.key.empty()) {
        Needs(problems, files.ca, names.ca, files.cert, names.cert,
              "the daemon can ask clients for certificates only over TLS, with a certificate and key of its own");
      }
    } else if (files.ca.empty() && (!files.cert.empty() || !files.key.empty())) {
      const char* set = !files.cert.empty() ? names.cert : names.key;
      problems.push_back({set, absl::StrCat(set, " is set but ", names.ca,
                                            " is not: TLS needs the CA that signed the daemon's certificate")});
    }
  }
  if (problems.empty() && material != nullptr) *material = std::move(read_in);
  return problems;
}

absl::StatusOr<std::optional<TlsMaterial>> LoadTls(const TlsFiles& files, const TlsKeyNames& names) {
  if (!files.any()) return std::optional<TlsMaterial>();
  TlsMaterial material;
  std::vector<TlsProblem> problems = CheckTlsFiles(files, names, &material);
  if (!problems.empty()) return absl::InvalidArgumentError(problems.front().message);
  return std::optional<TlsMaterial>(std::move(material));
}

}  // namespace gpusched::tls
