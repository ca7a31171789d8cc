// The daemon as it ships, attacked as an outsider or a local user would:
// plain TCP callers, impostor agents, a second host under a taken node name,
// and users reading each other's jobs. Certificates come from the shipped
// packaging/tls/gpusched-certs, as an operator would make them. The cases
// that switch users need root (setpriv); they say SKIPPED otherwise.

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/client_context.h"
#include "tests/integration/socket_cli.h"
#include "tests/integration/test_cluster.h"
#include "tests/skip.h"
#include "tests/support/temp_dir.h"

using namespace gpusched;
using Catch::Matchers::Contains;
using gpusched::testing::AgentSpec;
using gpusched::testing::ClientTls;
using gpusched::testing::CommandResult;
using gpusched::testing::DaemonTrust;
using gpusched::testing::RunCommand;
using gpusched::testing::SocketCli;
using gpusched::testing::SocketDir;
using gpusched::testing::SubmittedJobId;
using gpusched::testing::Subprocess;
using gpusched::testing::TempDir;
using gpusched::testing::TestCluster;
using gpusched::testing::ThisUser;

namespace {

const std::string kCerts = std::string(GPUSCHED_PACKAGING_DIR) + "/tls/gpusched-certs";

bool WaitFor(const std::function<bool()>& done, double seconds = 20) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return done();
}

std::unique_ptr<grpc::ClientContext> Deadline() {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  return ctx;
}

// A cluster CA, the daemon's certificate for loopback, node certificates and
// user certificates, made by the shipped tool.
class Pki {
 public:
  Pki() {
    Run({"ca", dir_.path().string()});
    Run({"daemon", dir_.path().string(), "localhost", "127.0.0.1"});
  }
  void Nodes(std::vector<std::string> names) {
    names.insert(names.begin(), {"node", dir_.path().string()});
    Run(names);
  }
  void Users(std::vector<std::string> names) {
    names.insert(names.begin(), {"user", dir_.path().string()});
    Run(names);
  }
  std::string ca() const { return dir_ / "ca.crt"; }
  std::vector<std::string> DaemonArgs() const {
    return {"--tls-cert", dir_ / "daemon.crt", "--tls-key", dir_ / "daemon.key", "--tls-client-ca", ca()};
  }
  // What an agent presents as node `name` (its certificate's CN is node:name).
  std::vector<std::string> AgentArgs(const std::string& name) const {
    return {"--tls-ca",   ca(),
            "--tls-cert", dir_ / ("nodes/" + name + ".crt"),
            "--tls-key",  dir_ / ("nodes/" + name + ".key")};
  }
  ClientTls User(const std::string& name) const {
    return ClientTls{ca(), dir_ / ("users/" + name + ".crt"), dir_ / ("users/" + name + ".key")};
  }

 private:
  void Run(std::vector<std::string> args) {
    args.insert(args.begin(), kCerts);
    CommandResult r = RunCommand(args);
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
  }
  TempDir dir_;
};

// A daemon as it ships, with a Unix socket on which local users are who
// they are (SocketCli), one node of 4 GPUs (node-a), and root's
// certificate for the test's own calls.
struct SocketUsersCluster {
  SocketUsersCluster() {
    pki.Nodes({"node-a"});
    pki.Users({"root"});
    std::vector<std::string> daemon_args = pki.DaemonArgs();
    daemon_args.insert(daemon_args.end(), {"--socket", socket});
    cluster = std::make_unique<TestCluster>(std::vector<AgentSpec>{{"node-a", 4, pki.AgentArgs("node-a")}}, daemon_args,
                                            pki.User("root"), DaemonTrust::kAsShipped);
  }
  Pki pki;
  SocketDir socket_dir;
  std::string socket = socket_dir.socket();
  std::unique_ptr<TestCluster> cluster;
};

// The CLI over TCP with a user's certificate.
CommandResult TlsCli(const TestCluster& cluster, const ClientTls& tls, std::vector<std::string> args) {
  args.insert(args.begin(), GPUSCHED_CLI_BIN);
  return RunCommand(args, {{"GPUSCHED_ADDR", cluster.address()},
                           {"GPUSCHED_TLS_CA", tls.ca},
                           {"GPUSCHED_TLS_CERT", tls.cert},
                           {"GPUSCHED_TLS_KEY", tls.key}});
}

}  // namespace

TEST_CASE("as shipped, a plain TCP caller is nobody: every call is refused and nothing it asked for happens",
          "[integration][security]") {
  TempDir scratch;
  const SocketDir socket_dir;
  const std::string socket = socket_dir.socket();
  const std::string proof = scratch / "ran-as-root";
  TestCluster cluster({}, {"--socket", socket}, {}, DaemonTrust::kAsShipped);

  // The attack that used to give root on every node.
  v1::SubmitJobRequest submit;
  submit.mutable_spec()->set_user("root");
  submit.mutable_spec()->add_argv("sh");
  submit.mutable_spec()->add_argv("-c");
  submit.mutable_spec()->add_argv("id > " + proof);
  submit.mutable_spec()->mutable_resources()->set_cpus(1);
  v1::SubmitJobResponse submitted;
  grpc::Status s = cluster.stub().SubmitJob(Deadline().get(), submit, &submitted);
  CHECK(s.error_code() == grpc::StatusCode::UNAUTHENTICATED);
  CHECK_THAT(s.error_message(), Contains("this daemon does not take unauthenticated callers"));

  v1::ListJobsResponse jobs;
  CHECK(cluster.stub().ListJobs(Deadline().get(), {}, &jobs).error_code() == grpc::StatusCode::UNAUTHENTICATED);
  v1::Job job;
  v1::GetJobRequest get;
  get.set_job_id(1);
  CHECK(cluster.stub().GetJob(Deadline().get(), get, &job).error_code() == grpc::StatusCode::UNAUTHENTICATED);
  v1::CancelJobRequest cancel;
  cancel.set_job_id(1);
  v1::CancelJobResponse cancelled;
  CHECK(cluster.stub().CancelJob(Deadline().get(), cancel, &cancelled).error_code() ==
        grpc::StatusCode::UNAUTHENTICATED);
  v1::DrainNodeRequest drain;
  drain.set_node("node-a");
  drain.set_reason("mine");
  v1::Node node;
  CHECK(cluster.stub().DrainNode(Deadline().get(), drain, &node).error_code() == grpc::StatusCode::UNAUTHENTICATED);
  v1::ListNodesResponse nodes;
  CHECK(cluster.stub().ListNodes(Deadline().get(), {}, &nodes).error_code() == grpc::StatusCode::UNAUTHENTICATED);
  {
    auto ctx = Deadline();
    auto watch = cluster.stub().WatchJobs(ctx.get(), {});
    v1::JobEvent event;
    CHECK_FALSE(watch->Read(&event));
    CHECK(watch->Finish().error_code() == grpc::StatusCode::UNAUTHENTICATED);
  }
  // The CLI says what to do instead, and exits 1.
  CommandResult cli = cluster.Cli({"submit", "--gpus", "0", "--cpus", "1", "--", "true"});
  CHECK(cli.exit_code == 1);
  CHECK_THAT(cli.err, Contains("use its Unix socket on this host, or a client certificate"));

  // An agent that proves nothing never becomes a node.
  cluster.AddAgent({"node-x", 2});
  REQUIRE(WaitFor(
      [&] { return absl::StrContains(cluster.AgentLog("node-x"), "needs a client certificate with CN=node:node-x"); }));

  // On the socket the test is itself: no job, no node, no drain came of it.
  CommandResult listed = SocketCli(socket, "0", {"status", "--all", "--json"});
  INFO(listed.err);
  CHECK(listed.exit_code == 0);
  CHECK_FALSE(absl::StrContains(listed.out, "\"id\""));
  CommandResult listed_nodes = SocketCli(socket, "0", {"nodes", "--json"});
  CHECK(listed_nodes.exit_code == 0);
  CHECK_FALSE(absl::StrContains(listed_nodes.out, "node-x"));
  CHECK_FALSE(std::filesystem::exists(proof));
}

TEST_CASE("agents are nodes, proven: impostors and a second host under a taken name get nothing",
          "[integration][security]") {
  Pki pki;
  pki.Nodes({"node-a", "node-b"});
  // Jobs run as an ordinary user: nobody where the agent is root, else the
  // user running the test (the only one such an agent can run jobs as).
  const std::string submitter = geteuid() == 0 ? "nobody" : ThisUser();
  pki.Users({"root", submitter});
  // The test is root (an admin) over TLS; node-a's agent has its certificate.
  TestCluster cluster({{"node-a", 2, pki.AgentArgs("node-a")}}, pki.DaemonArgs(), pki.User("root"),
                      DaemonTrust::kAsShipped);
  const std::string agent_bin = GPUSCHED_AGENT_BIN;
  auto impostor = [&](const std::string& as, const std::vector<std::string>& tls, const std::string& label) {
    const std::string logs = cluster.dir() + "/impostor-" + label;
    std::vector<std::string> argv = {agent_bin,   "--daemon", cluster.address(),         "--node-name", as,
                                     "--log-dir", logs,       "--heartbeat-interval-ms", "500",         "--fake-gpus",
                                     "8"};
    argv.insert(argv.end(), tls.begin(), tls.end());
    return std::make_unique<Subprocess>(argv, logs + ".log");
  };

  // node-b's certificate, claiming node-a; a user's certificate; and node-a's
  // own certificate on a second host (a duplicate hostname, or a stolen key).
  auto wrong_node = impostor("node-a", pki.AgentArgs("node-b"), "wrong-node");
  std::vector<std::string> user_tls = {"--tls-ca",          pki.ca(), "--tls-cert", pki.User("root").cert, "--tls-key",
                                       pki.User("root").key};
  auto user_cert = impostor("node-c", user_tls, "user-cert");
  auto second_host = impostor("node-a", pki.AgentArgs("node-a"), "second-host");
  REQUIRE(WaitFor([&] { return absl::StrContains(wrong_node->Log(), "certificate is for node node-b, not node-a"); }));
  REQUIRE(WaitFor(
      [&] { return absl::StrContains(user_cert->Log(), "a user's certificate (root) cannot register a node"); }));
  const bool second_host_refused = WaitFor([&] {
    const std::string log = second_host->Log();
    return absl::StrContains(log, "node node-a is already connected from") && absl::StrContains(log, "is refused");
  });
  INFO("second host's log:\n" << second_host->Log() << "node-a's log:\n" << cluster.AgentLog("node-a"));
  REQUIRE(second_host_refused);
  CHECK_THAT(cluster.DaemonLog(), Contains("two hosts with one node name?"));

  // The real node keeps its node: its jobs, with their secrets, go to it
  // alone and finish.
  const uint64_t id = SubmittedJobId(TlsCli(cluster, pki.User(submitter),
                                            {"submit", "--gpus", "2", "--env", "AWS_SECRET_ACCESS_KEY=s3cr3t", "--",
                                             "sh", "-c", "echo key=$AWS_SECRET_ACCESS_KEY"}));
  v1::Job done = cluster.WaitForEnd(id);
  CHECK(done.state() == v1::JOB_STATE_COMPLETED);
  REQUIRE(done.allocation().nodes_size() == 1);
  CHECK(done.allocation().nodes(0).node() == "node-a");
  CommandResult log = cluster.Cli({"logs", std::to_string(id), "--rank", "1"});
  CHECK(log.out == "key=s3cr3t\n");
  for (const auto* agent : {wrong_node.get(), user_cert.get(), second_host.get()}) {
    CHECK_FALSE(absl::StrContains(agent->Log(), "s3cr3t"));
    CHECK_FALSE(absl::StrContains(agent->Log(), absl::StrCat("job ", id)));
  }
  for (const char* label : {"wrong-node", "user-cert", "second-host"}) {
    CHECK_FALSE(std::filesystem::exists(cluster.dir() + "/impostor-" + label + "/job-" + std::to_string(id)));
  }
  v1::ListNodesResponse nodes;
  REQUIRE(cluster.stub().ListNodes(Deadline().get(), {}, &nodes).ok());
  REQUIRE(nodes.nodes_size() == 1);
  CHECK(nodes.nodes(0).info().name() == "node-a");
  CHECK(nodes.nodes(0).info().gpus_size() == 2);  // not the impostors' 8
  CHECK(nodes.nodes(0).state() == v1::NODE_STATE_UP);
}

TEST_CASE("jobs run as who submitted them, never as root unless allowed; others see no command or environment",
          "[integration][security]") {
  if (geteuid() != 0) {
    GPUSCHED_SKIP("not root, so the CLI cannot run as other users (setpriv)");
  }
  SocketUsersCluster users;
  TestCluster& cluster = *users.cluster;
  const std::string& socket = users.socket;
  // Users reach the logs where the agent writes them.
  REQUIRE(chmod(cluster.dir().c_str(), 0755) == 0);

  // Root, on the socket or with root's certificate, gets no root job.
  for (const CommandResult& r : {SocketCli(socket, "0", {"submit", "--gpus", "1", "--", "id"}),
                                 cluster.Cli({"submit", "--gpus", "1", "--", "id"})}) {
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.err, Contains("jobs do not run as root on this cluster (the daemon's allow_root_jobs is off)"));
  }

  // daemon (uid 1) submits a job with a secret; it runs as daemon.
  const uint64_t secret =
      SubmittedJobId(SocketCli(socket, "1",
                               {"submit", "--gpus", "1", "--workdir", "/tmp", "--env", "HF_TOKEN=hunter2", "--error",
                                "/tmp/private-%j.err", "--", "sh", "-c", "echo uid=$(id -u); sleep 300"}));
  // And one from a script, whose directives carry a secret too.
  const std::string script = cluster.dir() + "/job.sh";
  std::ofstream(script) << "#!/bin/sh\n#GPUSCHED --env API_KEY=swordfish --hold\ntrue\n";
  REQUIRE(chmod(script.c_str(), 0644) == 0);
  const uint64_t scripted =
      SubmittedJobId(SocketCli(socket, "1", {"submit", "--gpus", "1", "--workdir", "/tmp", "--script", script}));
  v1::Job running = cluster.WaitForState(secret, v1::JOB_STATE_RUNNING);
  CHECK(running.spec().user() == "daemon");
  REQUIRE(WaitFor([&] { return cluster.Cli({"logs", std::to_string(secret)}).out == "uid=1\n"; }));

  // nobody sees that it exists, whose it is and where it runs; not what it runs.
  const std::string id = std::to_string(secret);
  CommandResult detail = SocketCli(socket, "65534", {"status", id});
  INFO(detail.out << detail.err);
  CHECK(detail.exit_code == 0);
  CHECK_THAT(detail.out, Contains("(hidden: a job of daemon; only its owner and admins see it)"));
  CHECK_THAT(detail.out, Contains("node-a"));
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"status", id, "--json"}, {"status", "--all", "--json"}, {"history", "--json"}}) {
    CommandResult r = SocketCli(socket, "65534", args);
    INFO(args[0] << ": " << r.out << r.err);
    CHECK(r.exit_code == 0);
    CHECK_FALSE(absl::StrContains(r.out, "hunter2"));
    CHECK_FALSE(absl::StrContains(r.out, "sleep 300"));
    CHECK_FALSE(absl::StrContains(r.out, "private-"));   // its files' paths
    CHECK_FALSE(absl::StrContains(r.out, "swordfish"));  // the script's directives
  }
  CHECK_FALSE(absl::StrContains(SocketCli(socket, "65534", {"status", std::to_string(scripted)}).out, "swordfish"));
  CHECK_THAT(SocketCli(socket, "1", {"status", std::to_string(scripted)}).out, Contains("swordfish"));
  CommandResult hidden = SocketCli(socket, "65534", {"status", id, "--json"});
  CHECK_THAT(hidden.out, Contains("\"detailsHidden\":true"));
  CHECK_THAT(hidden.out, !Contains("clientRequestId"));  // another could take it first
  CHECK_THAT(SocketCli(socket, "1", {"status", id, "--json"}).out, Contains("clientRequestId"));
  // The owner and the admins see all of it.
  CHECK_THAT(SocketCli(socket, "1", {"status", id, "--json"}).out, Contains("hunter2"));
  CHECK_THAT(SocketCli(socket, "0", {"status", id, "--json"}).out, Contains("hunter2"));
  CHECK_THAT(cluster.Cli({"status", id, "--json"}).out, Contains("hunter2"));

  // nobody can neither stop it nor pass for daemon.
  CHECK(SocketCli(socket, "65534", {"cancel", id}).exit_code == 1);
  CHECK(cluster.GetJob(secret).state() == v1::JOB_STATE_RUNNING);
  REQUIRE(SocketCli(socket, "1", {"cancel", id}).exit_code == 0);
  CHECK(cluster.WaitForEnd(secret).state() == v1::JOB_STATE_CANCELLED);
}

TEST_CASE("another user can neither act on nor read an array's tasks that are not jobs yet",
          "[integration][security]") {
  if (geteuid() != 0) {
    GPUSCHED_SKIP("not root, so the CLI cannot run as other users (setpriv)");
  }
  SocketUsersCluster users;
  TestCluster& cluster = *users.cluster;
  const std::string& socket = users.socket;

  // daemon (uid 1) submits a held array: its record stands for tasks 2-100.
  CommandResult submitted = SocketCli(
      socket, "1", {"submit", "--hold", "--array", "1-100", "--gpus", "1", "--env", "HF_TOKEN=hunter2", "--", "true"});
  INFO(submitted.out << submitted.err);
  REQUIRE(submitted.exit_code == 0);
  const uint64_t array = std::stoull(submitted.out.substr(std::string("Submitted job array ").size()));
  const std::string task = absl::StrCat(array, "_50");

  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"cancel", task},
                                             {"release", task},
                                             {"hold", task},
                                             {"cancel", std::to_string(array)},
                                             {"release", std::to_string(array)}}) {
    CommandResult r = SocketCli(socket, "65534", args);
    INFO(args[0] << " " << args[1] << ": " << r.out << r.err);
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.err, Contains("belongs to daemon"));
  }
  const v1::Job waiting = cluster.GetJob(array + 49);
  CHECK(waiting.state() == v1::JOB_STATE_PENDING);
  CHECK(waiting.held());
  CommandResult hidden = SocketCli(socket, "65534", {"status", task, "--json"});
  INFO(hidden.out << hidden.err);
  CHECK(hidden.exit_code == 0);
  CHECK_THAT(hidden.out, Contains("\"detailsHidden\":true"));
  CHECK_FALSE(absl::StrContains(hidden.out, "hunter2"));
  // Its owner may.
  CHECK(SocketCli(socket, "1", {"cancel", task}).exit_code == 0);
  CHECK(cluster.GetJob(array + 49).state() == v1::JOB_STATE_CANCELLED);
}

TEST_CASE("an agent refuses a log directory that others may write", "[integration][security]") {
  TempDir dir;
  const std::string logs = dir / "logs";
  REQUIRE(std::filesystem::create_directory(logs));
  REQUIRE(chmod(logs.c_str(), 01777) == 0);  // like /tmp
  CommandResult r = RunCommand(
      {GPUSCHED_AGENT_BIN, "--daemon", "127.0.0.1:1", "--node-name", "n1", "--log-dir", logs, "--fake-gpus", "1"});
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.err, Contains("log directory \"" + logs + "\" is writable by its group or by anyone (mode 1777)"));
}
