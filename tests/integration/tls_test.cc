// Mutual TLS between gpuschedd, its agents and the CLI, with certificates made
// by the openssl command line: the cluster CA's agents register and run jobs,
// the CLI submits over TLS, and everyone else is refused in the handshake.

#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <thread>

#include "grpcpp/create_channel.h"
#include "tests/integration/socket_cli.h"
#include "tests/integration/test_cluster.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_pki.h"

using namespace gpusched;
using Catch::Matchers::Contains;
using gpusched::testing::CertAndKey;
using gpusched::testing::ClientTls;
using gpusched::testing::CommandResult;
using gpusched::testing::RunCommand;
using gpusched::testing::TempDir;
using gpusched::testing::TestCa;
using gpusched::testing::TestCluster;
using gpusched::testing::ThisUser;

namespace {

// Waits until `text()` contains `want` (REQUIREs it within `seconds`).
template <typename Text>
void WaitForText(Text text, const std::string& want, const std::string& what, double seconds = 20) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(int(seconds * 1000));
  while (text().find(want) == std::string::npos) {
    if (std::chrono::steady_clock::now() > deadline) FAIL(what << " never said \"" << want << "\":\n" << text());
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

std::vector<std::string> AgentTls(const TestCa& ca, const CertAndKey& own) {
  return {"--tls-ca", ca.cert(), "--tls-cert", own.cert, "--tls-key", own.key};
}

}  // namespace

TEST_CASE("mutual TLS: the cluster CA's agents and users work, everyone else is refused", "[integration]") {
  TempDir pki;
  const TestCa ca(pki.path().string(), "cluster-ca");
  const CertAndKey daemon_cert = ca.IssueServer("gpuschedd");
  const CertAndKey node_a = ca.IssueClient("node:node-a");
  // The user running the test: the agent can start its jobs.
  const CertAndKey alice = ca.IssueClient(ThisUser());
  const TestCa other_ca(pki.path().string(), "other-ca");
  const CertAndKey rogue = other_ca.IssueClient("rogue");

  // The constructor waits for node-a to be UP, asking over TLS as alice.
  TestCluster cluster({{"node-a", 2, AgentTls(ca, node_a)}},
                      {"--tls-cert", daemon_cert.cert, "--tls-key", daemon_cert.key, "--tls-client-ca", ca.cert()},
                      ClientTls{ca.cert(), alice.cert, alice.key});
  CHECK_THAT(cluster.DaemonLog(), Contains("clients must present a certificate signed by " + ca.cert()));
  // The daemon counts the node UP before the agent has read the ack and logged it.
  WaitForText([&] { return cluster.AgentLog("node-a"); }, "registered with the daemon at " + cluster.address(),
              "agent node-a");

  SECTION("an agent with a good certificate runs a job the CLI submitted over TLS") {
    const uint64_t id = cluster.Submit({"--gpus", "2", "--", "sh", "-c", "echo rank $RANK over TLS"});
    v1::Job job = cluster.WaitForEnd(id);
    CHECK(job.state() == v1::JOB_STATE_COMPLETED);
    CommandResult logs = cluster.Cli({"logs", std::to_string(id), "--rank", "1"});
    INFO(logs.err);
    CHECK(logs.exit_code == 0);
    CHECK(logs.out == "rank 1 over TLS\n");
    CommandResult nodes = cluster.Cli({"nodes"});
    CHECK(nodes.exit_code == 0);
    CHECK_THAT(nodes.out, Contains("node-a"));
  }

  SECTION("agents without a certificate from the cluster CA never register, and the daemon logs why") {
    cluster.AddAgent({"rogue", 2, AgentTls(ca, rogue)});          // trusts the daemon, but is signed by another CA
    cluster.AddAgent({"anonymous", 2, {"--tls-ca", ca.cert()}});  // no certificate at all
    cluster.AddAgent({"plaintext", 2});
    WaitForText([&] { return cluster.AgentLog("rogue"); }, "cannot register with the daemon", "the rogue agent");
    for (const char* name : {"anonymous", "plaintext"}) {
      WaitForText([&] { return cluster.AgentLog(name); }, "cannot register with the daemon", name);
    }
    // Each agent's own log says what to look at.
    CHECK_THAT(cluster.AgentLog("rogue"), Contains("TLS: the daemon refused the handshake: our certificate (tls_cert) "
                                                   "must be signed by the daemon's tls_client_ca"));
    CHECK_THAT(cluster.AgentLog("anonymous"), Contains("TLS: the daemon refused the handshake"));
    CHECK_THAT(cluster.AgentLog("plaintext"), Contains("if it serves TLS, set tls_ca"));

    // The daemon's log: one line per refused handshake, with OpenSSL's reason.
    const std::string log = cluster.DaemonLog();
    CHECK_THAT(log, Contains("TLS handshake failed: SSL_ERROR_SSL: ") && Contains("certificate verify failed") &&
                        Contains("a client without a certificate signed by tls_client_ca"));
    CHECK_THAT(log, Contains("peer did not return a certificate"));
    CHECK_THAT(log, Contains("wrong version number"));  // the plaintext agent's HTTP/2 preface

    // Still only node-a, a few heartbeats later.
    std::this_thread::sleep_for(std::chrono::seconds(1));
    v1::ListNodesResponse nodes;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    REQUIRE(cluster.stub().ListNodes(&context, {}, &nodes).ok());
    REQUIRE(nodes.nodes_size() == 1);
    CHECK(nodes.nodes(0).info().name() == "node-a");
  }

  SECTION("a plaintext client, a client signed by another CA and one that does not trust the daemon are refused") {
    // gRPC straight, no TLS.
    auto plain = v1::Scheduler::NewStub(grpc::CreateChannel(cluster.address(), grpc::InsecureChannelCredentials()));
    v1::ListNodesResponse nodes;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    grpc::Status status = plain->ListNodes(&context, {}, &nodes);
    CHECK(status.error_code() == grpc::StatusCode::UNAVAILABLE);

    // The CLI without TLS settings (no GPUSCHED_TLS_* here): unreachable, and why.
    CommandResult r = RunCommand({GPUSCHED_CLI_BIN, "--addr", cluster.address(), "nodes"});
    CHECK(r.exit_code == 3);
    CHECK(r.err == "gpusched: cannot reach gpuschedd at " + cluster.address() +
                       ": the daemon closed the connection at once: if it serves TLS, set tls_ca (and tls_cert and "
                       "tls_key when it requires client certificates)\n");

    r = RunCommand({GPUSCHED_CLI_BIN, "--addr", cluster.address(), "--tls-ca", ca.cert(), "--tls-cert", rogue.cert,
                    "--tls-key", rogue.key, "status"});
    CHECK(r.exit_code == 3);
    CHECK_THAT(r.err, Contains(": TLS: the daemon refused the handshake"));

    // Trusting another CA, the CLI refuses the daemon's certificate itself.
    r = RunCommand({GPUSCHED_CLI_BIN, "--addr", cluster.address(), "--tls-ca", other_ca.cert(), "--tls-cert",
                    alice.cert, "--tls-key", alice.key, "status"});
    CHECK(r.exit_code == 3);
    CHECK_THAT(r.err, Contains(": TLS: the daemon's certificate is not signed by the CA in tls_ca"));
  }
}

TEST_CASE("TLS: a daemon or agent with unusable files stops at start, naming the file", "[integration]") {
  TempDir pki;
  const TestCa ca(pki.path().string(), "cluster-ca");
  const CertAndKey daemon_cert = ca.IssueServer("gpuschedd");
  const CertAndKey node_a = ca.IssueClient("node-a");

  CommandResult r = RunCommand({GPUSCHEDD_BIN, "serve", "--listen", "127.0.0.1:0", "--state-dir", pki / "state",
                                "--tls-cert", daemon_cert.cert, "--tls-key", node_a.key});
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Contains("gpuschedd: tls_key: " + node_a.key + " is not the private key of the certificate in " +
                             daemon_cert.cert));
  CHECK_FALSE(std::filesystem::exists(pki / "state"));  // refused before anything else

  r = RunCommand(
      {GPUSCHEDD_BIN, "serve", "--listen", "127.0.0.1:0", "--state-dir", pki / "state", "--tls-client-ca", ca.cert()});
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Contains("gpuschedd: tls_client_ca is set but tls_cert is not"));

  r = RunCommand({GPUSCHED_AGENT_BIN, "--daemon", "127.0.0.1:1", "--fake-gpus", "1", "--log-dir", pki / "logs",
                  "--tls-ca", pki / "missing-ca.pem"});
  CHECK(r.exit_code == 1);
  CHECK(r.err == "gpusched-agent: tls_ca: cannot read " + pki / "missing-ca.pem" + ": No such file or directory\n");
}
