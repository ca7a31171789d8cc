#include "tests/bench/load_agents.h"

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gpusched/v1/scheduler.grpc.pb.h"
#include "grpcpp/create_channel.h"
#include "tests/bench/bench_daemon.h"
#include "tests/support/subprocess.h"

namespace gpusched::bench {

BenchAgents::BenchAgents(AgentsSpec spec) : spec_(std::move(spec)) {
  for (int i = 0; i < spec_.count; ++i) {
    const std::string name = absl::StrCat("load-node-", i);
    const std::string log_dir = absl::StrCat(spec_.dir, "/logs/", name);
    std::filesystem::create_directories(log_dir);
    // Offered CPUs and memory as on a GPU server: the bench machine's own 2
    // CPUs would make every 8-GPU job infeasible. --cpu-bind none: fake GPUs
    // have no NUMA node to bind to. Warnings only: per-job info lines would
    // bill the agents for logging rather than for running jobs.
    std::vector<std::string> argv = {spec_.agent_bin,
                                     "--daemon",
                                     spec_.daemon_address,
                                     "--node-name",
                                     name,
                                     "--advertise-address",
                                     "127.0.0.1",
                                     "--log-dir",
                                     log_dir,
                                     "--cpus",
                                     "128",
                                     "--memory-mb",
                                     "1000000",
                                     "--cpu-bind",
                                     "none",
                                     "--heartbeat-interval-ms",
                                     "1000",
                                     "--log-level",
                                     "warn"};
    if (spec_.topology_file.empty()) {
      argv.insert(argv.end(), {"--fake-gpus", std::to_string(spec_.gpus)});
    } else {
      argv.insert(argv.end(), {"--topology-file", spec_.topology_file});
    }
    const std::string log = absl::StrCat(spec_.dir, "/agent-", name, ".log");
    pids_.push_back(testing::Spawn(argv, {}, log, log));
  }
}

BenchAgents::~BenchAgents() {
  for (pid_t pid : pids_) kill(pid, SIGTERM);
  for (pid_t pid : pids_) testing::WaitForExit(pid);
}

absl::Status BenchAgents::WaitUntilUp(absl::Duration timeout) const {
  auto stub = v1::Scheduler::NewStub(grpc::CreateChannel(spec_.daemon_address, grpc::InsecureChannelCredentials()));
  const absl::Time deadline = absl::Now() + timeout;
  int up = 0;
  while (absl::Now() < deadline) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    v1::ListNodesResponse nodes;
    if (stub->ListNodes(&ctx, {}, &nodes).ok()) {
      up = 0;
      for (const auto& node : nodes.nodes()) up += node.state() == v1::NODE_STATE_UP ? 1 : 0;
      if (up >= count()) return absl::OkStatus();
    }
    for (pid_t pid : pids_) {
      if (testing::ProcessGone(pid)) {
        return absl::FailedPreconditionError(
            absl::StrCat("agent pid ", pid, " exited; see ", spec_.dir, "/agent-*.log"));
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return absl::DeadlineExceededError(absl::StrCat(up, " of ", count(), " agents UP after ",
                                                  absl::FormatDuration(timeout), "; see ", spec_.dir, "/agent-*.log"));
}

double BenchAgents::CpuSeconds() const {
  double total = 0;
  for (pid_t pid : pids_) total += std::max(0.0, ProcessCpuSeconds(pid, /*reaped_children=*/true));
  return total;
}

}  // namespace gpusched::bench
