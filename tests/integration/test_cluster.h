#pragma once

// A real cluster on loopback for integration tests: one gpuschedd and a few
// gpusched-agent processes with fake GPUs, in a fresh temporary directory.

#include <memory>
#include <string>
#include <vector>

#include "gpusched/v1/scheduler.grpc.pb.h"
#include "tests/support/subprocess.h"

namespace gpusched::testing {

// A TCP port on 127.0.0.1 that was free a moment ago (for --metrics-listen
// and other servers a test starts next to the cluster).
int FreeLoopbackPort();

struct AgentSpec {
  std::string name;
  int gpus;                                  // > 0: --fake-gpus N
  std::vector<std::string> extra_args = {};  // e.g. --topology-file F, --label k=v
  std::vector<std::string> env = {};         // NAME=value, set for this agent only
};

// How the test itself (its gRPC stub and the CLI it runs) talks to a daemon
// that serves TLS: PEM paths, all empty for plaintext.
struct ClientTls {
  std::string ca;
  std::string cert;
  std::string key;
};

// Whom the daemon trusts. Most tests drive a single-user cluster over plain
// TCP, as root; the security tests start the daemon as it ships.
enum class DaemonTrust {
  kSingleUser,  // --allow-unauthenticated-tcp --allow-root-jobs
  kAsShipped,   // neither: callers prove who they are, and no job runs as root
};

class TestCluster {
 public:
  explicit TestCluster(std::vector<AgentSpec> agents = {{"node-a", 4}, {"node-b", 4}},
                       std::vector<std::string> daemon_args = {}, ClientTls client_tls = {},
                       DaemonTrust trust = DaemonTrust::kSingleUser);
  ~TestCluster();

  // (Re)starts the daemon on the same state directory and port.
  void StartDaemon();
  // SIGKILL, as a crash: nothing is flushed or cleaned up.
  void CrashDaemon();
  // SIGTERM, as systemctl stop: the daemon shuts down in order.
  void StopDaemon();
  void StartAgents();
  // Starts one more agent (not waited for: it may be meant to fail).
  void AddAgent(AgentSpec spec);
  // SIGKILL one agent, as a dead host or a crash.
  void KillAgent(const std::string& name);
  // Stops one agent with `sig` (SIGTERM as systemctl restart does, SIGKILL
  // as a crash) and starts it again, as itself.
  void RestartAgent(const std::string& name, int sig);
  void WaitForNodesUp(size_t count);

  // Runs the gpusched CLI against this cluster.
  CommandResult Cli(const std::vector<std::string>& args) const;
  // Submits through the CLI; returns the job id (REQUIREs success).
  uint64_t Submit(const std::vector<std::string>& args) const;
  // Polls GetJob until the job is in a terminal state (REQUIREs it within `seconds`).
  v1::Job WaitForEnd(uint64_t id, double seconds = 20) const;
  v1::Job WaitForState(uint64_t id, v1::JobState state, double seconds = 20) const;
  v1::Job GetJob(uint64_t id) const;

  v1::Scheduler::Stub& stub() const { return *stub_; }
  const std::string& address() const { return address_; }
  const std::string& dir() const { return dir_; }
  std::string DaemonLog() const { return daemon_->Log(); }
  pid_t daemon_pid() const { return daemon_->pid(); }
  std::string AgentLog(const std::string& name) const;

 private:
  void StartAgent(const AgentSpec& spec);
  std::unique_ptr<Subprocess> SpawnAgent(const AgentSpec& spec) const;

  std::string dir_;
  std::string address_;
  int port_ = 0;
  std::vector<AgentSpec> agent_specs_;
  std::vector<std::string> daemon_args_;
  ClientTls client_tls_;
  bool started_once_ = false;
  std::unique_ptr<Subprocess> daemon_;
  std::vector<std::unique_ptr<Subprocess>> agents_;
  std::unique_ptr<v1::Scheduler::Stub> stub_;
};

}  // namespace gpusched::testing
