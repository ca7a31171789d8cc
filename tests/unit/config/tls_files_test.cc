// TLS settings: the PEM files are checked when read, each problem names the
// setting and the file; the settings that need each other; and what a failed
// connection means. The certificates are made by the openssl command line.
#include "common/io/tls/tls_files.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/io/tls/connect_failure_hint.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_pki.h"

using namespace gpusched::tls;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using gpusched::testing::CertAndKey;
using gpusched::testing::TestCa;

namespace {

// One CA, a server and a client certificate, and a second CA's client
// certificate, made once for the whole test binary.
struct Pki {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("gpusched-tls-files-" + std::to_string(getpid()));
  bool made = std::filesystem::create_directories(dir);
  TestCa ca{dir.string(), "ca"};
  CertAndKey server = ca.IssueServer("server");
  CertAndKey client = ca.IssueClient("client");
  TestCa other_ca{dir.string(), "other-ca"};
  CertAndKey stranger = other_ca.IssueClient("stranger");
  ~Pki() { std::filesystem::remove_all(dir); }

  std::string Write(const std::string& name, const std::string& text) const {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  }
};

const Pki& Certs() {
  static const Pki pki;
  return pki;
}

std::string Read(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string ProblemOf(const TlsFiles& files, const TlsKeyNames& names) {
  auto loaded = LoadTls(files, names);
  REQUIRE_FALSE(loaded.ok());
  CHECK(loaded.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(loaded.status().message());
}

}  // namespace

TEST_CASE("tls: nothing set is plaintext; a good set of files is read whole") {
  const Pki& pki = Certs();
  auto none = LoadTls({}, kServerTlsKeys);
  REQUIRE(none.ok());
  CHECK_FALSE(none->has_value());

  auto server = LoadTls({pki.server.cert, pki.server.key, pki.ca.cert()}, kServerTlsKeys);
  INFO(server.status().ToString());
  REQUIRE(server.ok());
  REQUIRE(server->has_value());
  CHECK((*server)->cert_chain == Read(pki.server.cert));
  CHECK((*server)->private_key == Read(pki.server.key));
  CHECK((*server)->ca_certs == Read(pki.ca.cert()));

  // A server without a client CA: TLS, clients not asked for certificates.
  auto server_only = LoadTls({pki.server.cert, pki.server.key, ""}, kServerTlsKeys);
  REQUIRE(server_only.ok());
  CHECK((*server_only)->ca_certs.empty());

  // A client with its own certificate, and one with the CA alone.
  auto client = LoadTls({pki.client.cert, pki.client.key, pki.ca.cert()}, kClientTlsKeys);
  REQUIRE(client.ok());
  CHECK((*client)->cert_chain == Read(pki.client.cert));
  auto anonymous = LoadTls({"", "", pki.ca.cert()}, kClientTlsKeys);
  REQUIRE(anonymous.ok());
  CHECK((*anonymous)->cert_chain.empty());

  // A bundle of CAs is one file of several certificates.
  const std::string bundle = pki.Write("bundle.pem", Read(pki.ca.cert()) + Read(pki.other_ca.cert()));
  CHECK(LoadTls({"", "", bundle}, kClientTlsKeys).ok());
}

TEST_CASE("tls: an unusable file is named with the setting it came from") {
  const Pki& pki = Certs();
  CHECK(ProblemOf({"/nonexistent/server.pem", pki.server.key, ""}, kServerTlsKeys) ==
        "tls_cert: cannot read /nonexistent/server.pem: No such file or directory");
  CHECK(ProblemOf({"", "", pki.dir.string()}, kClientTlsKeys) ==
        "tls_ca: cannot read " + pki.dir.string() + ": Is a directory");

  const std::string empty = pki.Write("empty.pem", "");
  CHECK(ProblemOf({pki.server.cert, pki.server.key, empty}, kServerTlsKeys) ==
        "tls_client_ca: " + empty + ": no certificate in it (expected PEM, -----BEGIN CERTIFICATE-----)");

  // Certificate and key the wrong way round: both are reported, the certificate first.
  CHECK(ProblemOf({pki.server.key, pki.server.cert, ""}, kServerTlsKeys) ==
        "tls_cert: " + pki.server.key +
            ": no certificate in it (expected PEM, -----BEGIN CERTIFICATE-----); it holds a private key: are the "
            "certificate and key settings swapped?");
  std::vector<TlsProblem> problems = CheckTlsFiles({pki.server.key, pki.server.cert, ""}, kServerTlsKeys, nullptr);
  REQUIRE(problems.size() == 2);
  CHECK(problems[1].key == std::string("tls_key"));
  CHECK_THAT(problems[1].message, Contains("no private key in it") && Contains("swapped"));

  // A key of another certificate.
  CHECK(ProblemOf({pki.server.cert, pki.client.key, pki.ca.cert()}, kServerTlsKeys) ==
        "tls_key: " + pki.client.key + " is not the private key of the certificate in " + pki.server.cert);

  // A broken certificate inside a well-formed PEM block.
  const std::string garbled =
      pki.Write("garbled.pem", "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n");
  CHECK_THAT(ProblemOf({"", "", garbled}, kClientTlsKeys),
             StartsWith("tls_ca: " + garbled + ": certificate 1 in it cannot be read ("));

  // gRPC cannot ask for a passphrase.
  const std::string encrypted = (pki.dir / "encrypted.key").string();
  auto r = gpusched::testing::RunCommand({gpusched::testing::OpensslBinary(), "pkey", "-in", pki.client.key, "-aes256",
                                          "-passout", "pass:secret", "-out", encrypted});
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(ProblemOf({pki.client.cert, encrypted, pki.ca.cert()}, kClientTlsKeys),
             StartsWith("tls_key: " + encrypted + ": the private key is encrypted; gRPC needs it unencrypted"));
}

TEST_CASE("tls: settings that only make sense with others") {
  const Pki& pki = Certs();
  CHECK(ProblemOf({pki.server.cert, "", ""}, kServerTlsKeys) ==
        "tls_cert is set but tls_key is not: the certificate needs its private key");
  CHECK(ProblemOf({"", pki.server.key, ""}, kServerTlsKeys) ==
        "tls_key is set but tls_cert is not: the private key needs its certificate");
  CHECK(ProblemOf({"", "", pki.ca.cert()}, kServerTlsKeys) ==
        "tls_client_ca is set but tls_cert is not: the daemon can ask clients for certificates only over TLS, with a "
        "certificate and key of its own");
  CHECK(ProblemOf({pki.client.cert, pki.client.key, ""}, kClientTlsKeys) ==
        "tls_cert is set but tls_ca is not: TLS needs the CA that signed the daemon's certificate");

  // Where other sources complete the set (the CLI's files), only the files themselves are checked.
  CHECK(CheckTlsFiles({pki.client.cert, pki.client.key, ""}, kClientTlsKeys, nullptr, false).empty());
  CHECK(CheckTlsFiles({pki.client.cert, pki.server.key, ""}, kClientTlsKeys, nullptr, false).size() == 1);
}

TEST_CASE("tls: a failed connection says what the handshake most likely tells") {
  CHECK_THAT(HintFor(ConnectFailure::kRefusedByServer),
             StartsWith("TLS: the daemon refused the handshake") && Contains("signed by the daemon's tls_client_ca"));
  CHECK_THAT(HintFor(ConnectFailure::kServerUntrusted),
             StartsWith("TLS: the daemon's certificate is not signed by the CA in tls_ca"));
  CHECK_THAT(HintFor(ConnectFailure::kPlaintextClosed),
             StartsWith("the daemon closed the connection at once: if it serves TLS"));
  CHECK_THAT(HintFor(ConnectFailure::kServerNameMismatch), Contains("does not name the address dialed"));
  CHECK(HintFor(ConnectFailure::kOther).empty());
}
