// The CLI's TLS settings: each of tls_ca, tls_cert, tls_key from its flag,
// then its variable, then the first cli.toml that sets it.
#include "cli/tls_settings.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "cli/config_file.h"
#include "cli/errors.h"
#include "test_context.h"
#include "tests/support/test_pki.h"

using namespace gpusched::cli;
using namespace gpusched::cli::testing;
using Catch::Matchers::StartsWith;
using gpusched::testing::CertAndKey;
using gpusched::testing::TestCa;

namespace {

// A user config dir, a system config dir and a PKI in a third, removed at the end.
struct TlsDirs {
  std::filesystem::path root =
      std::filesystem::temp_directory_path() / ("gpusched-cli-tls-" + std::to_string(getpid()));
  bool made = std::filesystem::create_directories(root / "xdg/gpusched") &&
              std::filesystem::create_directories(root / "etc") && std::filesystem::create_directories(root / "pki");
  TestCa ca{(root / "pki").string(), "ca"};
  CertAndKey alice = ca.IssueClient("alice");
  CertAndKey bob = ca.IssueClient("bob");
  ~TlsDirs() { std::filesystem::remove_all(root); }

  std::string user_file() const { return (root / "xdg/gpusched/cli.toml").string(); }
  std::string system_file() const { return (root / "etc/cli.toml").string(); }
  void Write(const std::string& path, const std::string& text) const { std::ofstream(path) << text; }
  void Configure(FakeHost& host) const {
    host.env["XDG_CONFIG_HOME"] = (root / "xdg").string();
    host.system_config_dir = (root / "etc").string();
  }
};

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("cli tls: nothing set anywhere is plaintext") {
  TlsDirs dirs;
  FakeHost host;
  dirs.Configure(host);
  auto tls = ResolveTls({}, host.Context());
  REQUIRE(tls.ok());
  CHECK_FALSE(tls->has_value());
}

TEST_CASE("cli tls: the system file names the CA, the user's file the user's certificate, flags and variables win") {
  TlsDirs dirs;
  FakeHost host;
  dirs.Configure(host);
  // Relative paths in a file are taken from that file's directory.
  dirs.Write(dirs.system_file(), "address = \"head:6870\"\ntls_ca = \"../pki/ca.pem\"\n");
  dirs.Write(dirs.user_file(), "tls_cert = \"" + dirs.alice.cert + "\"\ntls_key = \"" + dirs.alice.key + "\"\n");
  auto tls = ResolveTls({}, host.Context());
  INFO(tls.status().ToString());
  REQUIRE(tls.ok());
  REQUIRE(tls->has_value());
  CHECK((*tls)->ca_certs == ReadText(dirs.ca.cert()));
  CHECK((*tls)->cert_chain == ReadText(dirs.alice.cert));
  CHECK((*tls)->private_key == ReadText(dirs.alice.key));

  // The environment wins over the files, key by key; an empty variable counts as unset.
  host.env[kTlsCertEnv] = dirs.bob.cert;
  host.env[kTlsKeyEnv] = dirs.bob.key;
  host.env[kTlsCaEnv] = "";
  tls = ResolveTls({}, host.Context());
  REQUIRE(tls.ok());
  CHECK((*tls)->cert_chain == ReadText(dirs.bob.cert));
  CHECK((*tls)->ca_certs == ReadText(dirs.ca.cert()));

  // A flag wins over both; a relative one is taken from the current directory.
  host.cwd = (dirs.root / "pki").string();
  TlsFlags flags;
  flags.cert = "alice.pem";
  flags.key = "alice.key";
  tls = ResolveTls(flags, host.Context());
  INFO(tls.status().ToString());
  REQUIRE(tls.ok());
  CHECK((*tls)->cert_chain == ReadText(dirs.alice.cert));

  // Empty flags say "no TLS", whatever the files say.
  tls = ResolveTls({std::string(), std::string(), std::string()}, host.Context());
  REQUIRE(tls.ok());
  CHECK_FALSE(tls->has_value());
}

TEST_CASE("cli tls: a bad TLS setting is a usage error naming the file and line") {
  TlsDirs dirs;
  FakeHost host;
  dirs.Configure(host);
  dirs.Write(dirs.user_file(), "address = \"head:6870\"\n\ntls_cert = \"" + dirs.alice.key + "\"\n");
  auto tls = ResolveTls({}, host.Context());
  REQUIRE_FALSE(tls.ok());
  CHECK(IsUsageError(tls.status()));
  CHECK_THAT(std::string(tls.status().message()),
             StartsWith(dirs.user_file() + ":3: tls_cert: " + dirs.alice.key + ": no certificate in it"));

  // A certificate and key that do not belong together, in one file.
  dirs.Write(dirs.user_file(), "tls_cert = \"" + dirs.alice.cert + "\"\ntls_key = \"" + dirs.bob.key + "\"\n");
  tls = ResolveTls({}, host.Context());
  REQUIRE_FALSE(tls.ok());
  CHECK(std::string(tls.status().message()) == dirs.user_file() + ":2: tls_key: " + dirs.bob.key +
                                                   " is not the private key of the certificate in " + dirs.alice.cert);

  // A certificate without a CA anywhere: refused once all sources are in.
  dirs.Write(dirs.user_file(), "tls_cert = \"" + dirs.alice.cert + "\"\ntls_key = \"" + dirs.alice.key + "\"\n");
  tls = ResolveTls({}, host.Context());
  REQUIRE_FALSE(tls.ok());
  CHECK(IsUsageError(tls.status()));
  CHECK(std::string(tls.status().message()) ==
        "tls_cert is set but tls_ca is not: TLS needs the CA that signed the daemon's certificate");

  // A missing file named by a flag.
  TlsFlags flags;
  flags.ca = "/nonexistent/ca.pem";
  tls = ResolveTls(flags, host.Context());
  REQUIRE_FALSE(tls.ok());
  CHECK(std::string(tls.status().message()) == "tls_ca: cannot read /nonexistent/ca.pem: No such file or directory");
}

TEST_CASE("cli tls: the whole command line hands the TLS files to the client, or stops with exit 2") {
  TlsDirs dirs;
  FakeHost host;
  dirs.Configure(host);
  FakeSchedulerClient client;
  Invocation run = RunGpusched({"nodes"}, client, host);
  CHECK(run.exit_code == 0);
  CHECK_FALSE(run.tls);

  run = RunGpusched({"--tls-ca", dirs.ca.cert(), "--tls-cert", dirs.alice.cert, "--tls-key", dirs.alice.key, "nodes"},
                    client, host);
  INFO(run.err);
  CHECK(run.exit_code == 0);
  CHECK(run.tls);
  // Global flags may follow the command, as --addr does.
  run = RunGpusched({"nodes", "--tls-ca", dirs.ca.cert()}, client, host);
  CHECK(run.exit_code == 0);
  CHECK(run.tls);

  run = RunGpusched({"--tls-ca", dirs.ca.cert(), "--tls-cert", dirs.alice.cert, "nodes"}, client, host);
  CHECK(run.exit_code == 2);
  CHECK(run.err == "gpusched: tls_cert is set but tls_key is not: the certificate needs its private key\n");
}

TEST_CASE("cli tls: the shipped cli.toml sets no TLS, and its commented examples are valid keys") {
  auto config = ReadCliConfig(std::string(GPUSCHED_PACKAGING_CONFIG_DIR) + "/cli.toml");
  REQUIRE(config.ok());
  REQUIRE(config->has_value());
  CHECK_FALSE((*config)->tls_ca.has_value());
  CHECK_FALSE((*config)->tls_cert.has_value());
  // Unknown-key errors list them, so a typo shows the right spelling.
  auto typo = ParseCliConfig("tls_certificate = \"x\"\n", "cli.toml");
  REQUIRE_FALSE(typo.ok());
  CHECK(std::string(typo.status().message()) ==
        "cli.toml:1: unknown key tls_certificate (expected address, tls_ca, tls_cert, tls_key)");
}
