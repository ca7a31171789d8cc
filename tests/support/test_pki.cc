#include "tests/support/test_pki.h"

#include <fstream>
#include <random>
#include <stdexcept>
#include <vector>

#include "tests/support/subprocess.h"

namespace gpusched::testing {
namespace {

// Our own openssl config, so that the certificates do not depend on the
// host's /etc/ssl/openssl.cnf.
constexpr char kConfig[] = R"([req]
distinguished_name = dn
x509_extensions = ca
[dn]
[ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
)";

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path);
}

void Openssl(std::vector<std::string> args) {
  args.insert(args.begin(), OpensslBinary());
  CommandResult r = RunCommand(args);
  if (r.exit_code != 0) {
    std::string line;
    for (const std::string& arg : args) line += arg + " ";
    throw std::runtime_error(line + "failed with exit code " + std::to_string(r.exit_code) + ": " + r.out + r.err);
  }
}

std::vector<std::string> NewKey() { return {"-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"}; }

}  // namespace

std::string OpensslBinary() {
  const std::string path = GPUSCHED_OPENSSL;
  if (path.empty()) {
    throw std::runtime_error("no openssl command found at configure time (packaging/install-deps.sh installs it)");
  }
  return path;
}

TestCa::TestCa(std::string dir, std::string name) : dir_(std::move(dir)), name_(std::move(name)) {
  ca_ = {dir_ + "/" + name_ + ".pem", dir_ + "/" + name_ + ".key"};
  const std::string config = dir_ + "/" + name_ + ".cnf";
  WriteFile(config, kConfig);
  std::vector<std::string> args = {"req", "-x509", "-new"};
  for (std::string& a : NewKey()) args.push_back(std::move(a));
  args.insert(args.end(),
              {"-keyout", ca_.key, "-out", ca_.cert, "-days", "2", "-subj", "/CN=" + name_, "-config", config});
  Openssl(args);
}

CertAndKey TestCa::IssueServer(const std::string& name) const {
  return Issue(name,
               "basicConstraints = critical, CA:FALSE\n"
               "keyUsage = critical, digitalSignature\n"
               "extendedKeyUsage = serverAuth\n"
               "subjectAltName = IP:127.0.0.1, DNS:localhost\n");
}

CertAndKey TestCa::IssueClient(const std::string& name) const {
  return Issue(name,
               "basicConstraints = critical, CA:FALSE\n"
               "keyUsage = critical, digitalSignature\n"
               "extendedKeyUsage = clientAuth\n");
}

CertAndKey TestCa::Issue(const std::string& name, const std::string& extensions) const {
  const std::string base = dir_ + "/" + name;
  CertAndKey out{base + ".pem", base + ".key"};
  WriteFile(base + ".ext", "[leaf]\n" + extensions);
  std::vector<std::string> request = {"req", "-new"};
  for (std::string& a : NewKey()) request.push_back(std::move(a));
  request.insert(request.end(), {"-keyout", out.key, "-out", base + ".csr", "-subj", "/CN=" + name, "-config",
                                 dir_ + "/" + name_ + ".cnf"});
  Openssl(request);
  // Serial numbers must differ between certificates of one CA.
  std::random_device random;
  const std::string serial = std::to_string((uint64_t{random()} << 20) ^ random());
  Openssl({"x509", "-req", "-in", base + ".csr", "-CA", ca_.cert, "-CAkey", ca_.key, "-set_serial", serial, "-days",
           "2", "-out", out.cert, "-extfile", base + ".ext", "-extensions", "leaf"});
  return out;
}

}  // namespace gpusched::testing
