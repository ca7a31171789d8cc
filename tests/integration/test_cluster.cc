#include "tests/integration/test_cluster.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <thread>

#include "common/job_states.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"

namespace gpusched::testing {

int FreeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

namespace {

void Sleep(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

// A guard against a hung daemon, not a timing check: shared CI machines
// stall for seconds now and then, and a test should not fail on that.
constexpr int kCallDeadlineSeconds = 30;

std::unique_ptr<grpc::ClientContext> Context(int seconds = kCallDeadlineSeconds) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(seconds));
  return ctx;
}

}  // namespace

TestCluster::TestCluster(std::vector<AgentSpec> agents, std::vector<std::string> daemon_args, ClientTls client_tls,
                         DaemonTrust trust)
    : agent_specs_(std::move(agents)), daemon_args_(std::move(daemon_args)), client_tls_(std::move(client_tls)) {
  if (trust == DaemonTrust::kSingleUser) {
    daemon_args_.insert(daemon_args_.begin(), {"--allow-unauthenticated-tcp", "--allow-root-jobs"});
  }
  char tmpl[] = "/tmp/gpusched-it-XXXXXX";
  dir_ = mkdtemp(tmpl);
  port_ = FreeLoopbackPort();
  address_ = "127.0.0.1:" + std::to_string(port_);
  StartDaemon();
  if (!agent_specs_.empty()) {
    StartAgents();
    WaitForNodesUp(agent_specs_.size());
  }
}

TestCluster::~TestCluster() {
  for (auto& agent : agents_) agent->Signal(SIGTERM);
  for (auto& agent : agents_) agent->Wait();
  if (daemon_) {
    daemon_->Signal(SIGTERM);
    daemon_->Wait();
  }
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

void TestCluster::StartDaemon() {
  const std::string log = dir_ + "/daemon.log";
  const std::string ready = "serving on " + address_;
  auto count_ready = [&] {
    std::string text = ReadFile(log);
    size_t n = 0;
    for (size_t at = text.find(ready); at != std::string::npos; at = text.find(ready, at + 1)) ++n;
    return n;
  };
  const size_t before = count_ready();
  std::vector<std::string> argv = {GPUSCHEDD_BIN,
                                   "serve",
                                   "--listen",
                                   address_,
                                   "--kill-grace-ms",
                                   "1000",
                                   "--tick-ms",
                                   "50",
                                   "--node-not-responding-ms",
                                   "3000",
                                   "--node-down-ms",
                                   "8000"};
  // A test may put the state elsewhere (on a small filesystem, say).
  if (std::find(daemon_args_.begin(), daemon_args_.end(), "--state-dir") == daemon_args_.end()) {
    argv.insert(argv.end(), {"--state-dir", dir_ + "/state"});
  }
  // The first start makes the state; a restart must find it.
  if (!started_once_) argv.push_back("--init");
  started_once_ = true;
  argv.insert(argv.end(), daemon_args_.begin(), daemon_args_.end());
  daemon_ = std::make_unique<Subprocess>(std::move(argv), log);
  for (int i = 0; i < 400 && count_ready() == before; ++i) {
    REQUIRE(daemon_->running());
    Sleep(25);
  }
  REQUIRE(count_ready() > before);
  // A fresh channel: an old one may sit in reconnect backoff after a crash.
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  if (!client_tls_.ca.empty()) {
    grpc::SslCredentialsOptions tls;
    tls.pem_root_certs = ReadFile(client_tls_.ca);
    if (!client_tls_.cert.empty()) tls.pem_cert_chain = ReadFile(client_tls_.cert);
    if (!client_tls_.key.empty()) tls.pem_private_key = ReadFile(client_tls_.key);
    credentials = grpc::SslCredentials(tls);
  }
  stub_ = v1::Scheduler::NewStub(grpc::CreateChannel(address_, credentials));
}

void TestCluster::StopDaemon() {
  daemon_->Signal(SIGTERM);
  REQUIRE(daemon_->Wait() == 0);
}

void TestCluster::CrashDaemon() {
  daemon_->Signal(SIGKILL);
  daemon_->Wait();
}

void TestCluster::StartAgents() {
  for (const AgentSpec& spec : agent_specs_) StartAgent(spec);
}

void TestCluster::AddAgent(AgentSpec spec) {
  agent_specs_.push_back(std::move(spec));
  StartAgent(agent_specs_.back());
}

void TestCluster::StartAgent(const AgentSpec& spec) { agents_.push_back(SpawnAgent(spec)); }

std::unique_ptr<Subprocess> TestCluster::SpawnAgent(const AgentSpec& spec) const {
  // env(1) execs the agent, so the pid stays the agent's own.
  std::vector<std::string> argv = {"/usr/bin/env"};
  argv.insert(argv.end(), spec.env.begin(), spec.env.end());
  argv.insert(argv.end(), {GPUSCHED_AGENT_BIN, "--daemon", address_, "--node-name", spec.name, "--log-dir",
                           dir_ + "/logs/" + spec.name, "--heartbeat-interval-ms", "500"});
  if (spec.gpus > 0) argv.insert(argv.end(), {"--fake-gpus", std::to_string(spec.gpus)});
  argv.insert(argv.end(), spec.extra_args.begin(), spec.extra_args.end());
  return std::make_unique<Subprocess>(std::move(argv), dir_ + "/agent-" + spec.name + ".log");
}

std::string TestCluster::AgentLog(const std::string& name) const { return ReadFile(dir_ + "/agent-" + name + ".log"); }

void TestCluster::KillAgent(const std::string& name) {
  for (size_t i = 0; i < agent_specs_.size(); ++i) {
    if (agent_specs_[i].name != name) continue;
    agents_[i]->Signal(SIGKILL);
    agents_[i]->Wait();
  }
}

void TestCluster::RestartAgent(const std::string& name, int sig) {
  for (size_t i = 0; i < agent_specs_.size(); ++i) {
    if (agent_specs_[i].name != name) continue;
    agents_[i]->Signal(sig);
    agents_[i]->Wait();
    agents_[i] = SpawnAgent(agent_specs_[i]);
  }
}

void TestCluster::WaitForNodesUp(size_t count) {
  for (int i = 0; i < 400; ++i) {
    v1::ListNodesResponse nodes;
    if (stub_->ListNodes(Context().get(), {}, &nodes).ok()) {
      size_t up = 0;
      for (const auto& node : nodes.nodes()) up += node.state() == v1::NODE_STATE_UP ? 1 : 0;
      if (up >= count) return;
    }
    Sleep(25);
  }
  FAIL("agents did not register; daemon log:\n" << daemon_->Log());
}

CommandResult TestCluster::Cli(const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {GPUSCHED_CLI_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  std::map<std::string, std::string> env = {{"GPUSCHED_ADDR", address_}};
  if (!client_tls_.ca.empty()) env["GPUSCHED_TLS_CA"] = client_tls_.ca;
  if (!client_tls_.cert.empty()) env["GPUSCHED_TLS_CERT"] = client_tls_.cert;
  if (!client_tls_.key.empty()) env["GPUSCHED_TLS_KEY"] = client_tls_.key;
  return RunCommand(argv, env);
}

uint64_t TestCluster::Submit(const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {"submit"};
  argv.insert(argv.end(), args.begin(), args.end());
  CommandResult r = Cli(argv);
  INFO("gpusched submit: " << r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const std::string marker = "Submitted job ";
  auto at = r.out.find(marker);
  REQUIRE(at != std::string::npos);
  return std::stoull(r.out.substr(at + marker.size()));
}

v1::Job TestCluster::GetJob(uint64_t id) const {
  v1::GetJobRequest request;
  request.set_job_id(id);
  v1::Job job;
  grpc::Status status = stub_->GetJob(Context().get(), request, &job);
  INFO("GetJob " << id << ": " << status.error_message() << "\ndaemon log:\n" << (status.ok() ? "" : daemon_->Log()));
  REQUIRE(status.ok());
  return job;
}

v1::Job TestCluster::WaitForEnd(uint64_t id, double seconds) const {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(int(seconds * 1000));
  while (true) {
    v1::Job job = GetJob(id);
    if (IsTerminal(job.state())) return job;
    if (std::chrono::steady_clock::now() > deadline) {
      FAIL("job " << id << " still " << StateName(job.state()) << " (" << job.reason() << ")\ndaemon log:\n"
                  << daemon_->Log());
    }
    Sleep(50);
  }
}

v1::Job TestCluster::WaitForState(uint64_t id, v1::JobState state, double seconds) const {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(int(seconds * 1000));
  while (true) {
    v1::Job job = GetJob(id);
    if (job.state() == state) return job;
    if (IsTerminal(job.state()) || std::chrono::steady_clock::now() > deadline) {
      FAIL("job " << id << " is " << StateName(job.state()) << " (" << job.reason() << "), expected "
                  << StateName(state));
    }
    Sleep(50);
  }
}

}  // namespace gpusched::testing
