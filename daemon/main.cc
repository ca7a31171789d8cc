// gpuschedd: `serve` runs the daemon; `dev` runs it with in-process agents on
// fake GPUs for a first look; `simulate` replays a job trace through the same
// scheduling core on a virtual clock.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <iostream>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "common/defaults.h"
#include "common/logging.h"
#include "common/net/network_topology_conf.h"
#include "daemon/core/policy/placement_policy.h"
#include "daemon/dev/demo_job.h"
#include "daemon/dev/dev_cluster.h"
#include "daemon/server/daemon.h"
#include "daemon/sim/simulate_flags.h"

namespace {

using gpusched::server::DaemonOptions;

// Blocks SIGINT/SIGTERM in every thread (call before any thread starts) so
// that WaitForStopSignal can take them synchronously.
sigset_t BlockStopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

int WaitForStopSignal(const sigset_t& set) {
  int sig = 0;
  sigwait(&set, &sig);
  return sig;
}

std::string DefaultDevStateDir() {
  const char* tmp = std::getenv("TMPDIR");
  return absl::StrCat(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp", "/gpusched-dev-", getuid());
}

int Fail(const absl::Status& status) {
  std::cerr << "gpuschedd: " << status.message() << "\n";
  return 1;
}

int RunServe(const DaemonOptions& options, const sigset_t& signals) {
  gpusched::SystemClock clock;
  auto daemon = gpusched::server::Daemon::Start(options, clock);
  if (!daemon.ok()) return Fail(daemon.status());
  gpusched::GetLogger("daemon")->info("gpuschedd {} serving on {}, state in {}", gpusched::kVersion,
                                      (*daemon)->address(), (*daemon)->db_path());
  int sig = WaitForStopSignal(signals);
  gpusched::GetLogger("daemon")->info("signal {}: shutting down", sig);
  (*daemon)->Shutdown();
  return 0;
}

// Read here, parsed by the pure parser; errors name the file and line.
absl::StatusOr<std::shared_ptr<const gpusched::NetworkTopologyConf>> LoadNetworkTopology(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read network topology file ", path));
  std::stringstream text;
  text << in.rdbuf();
  auto conf = gpusched::ParseNetworkTopologyConf(text.str());
  if (!conf.ok()) return absl::InvalidArgumentError(absl::StrCat(path, ": ", conf.status().message()));
  return std::make_shared<const gpusched::NetworkTopologyConf>(*std::move(conf));
}

int RunDev(DaemonOptions options, bool fresh, bool demo, const sigset_t& signals) {
  if (options.state_dir.empty()) options.state_dir = DefaultDevStateDir();
  if (fresh) {
    std::error_code ec;
    std::filesystem::remove_all(options.state_dir, ec);
  }
  gpusched::SystemClock clock;
  auto nodes = gpusched::dev::DefaultDevNodes();
  auto cluster = gpusched::dev::DevCluster::Start(options, nodes, clock);
  if (!cluster.ok()) return Fail(cluster.status());
  if (absl::Status s = (*cluster)->WaitForAgents(absl::Seconds(10)); !s.ok()) return Fail(s);

  const std::string address = (*cluster)->daemon().address();
  std::cout << "gpuschedd dev: daemon on " << address << ", state in " << (*cluster)->daemon().db_path() << "\n";
  for (const auto& node : nodes) {
    std::cout << "gpuschedd dev: agent " << node.name << " with " << node.gpus << "x " << node.gpu_model << " ("
              << (node.topology_text.empty() ? "fake GPUs, no topology"
                                             : absl::StrCat("fake GPUs wired as in ", node.topology_name))
              << ", real processes)\n";
  }
  if (demo) {
    if (absl::Status s = gpusched::dev::RunDemoJob(address); !s.ok()) {
      (*cluster)->Shutdown();
      return Fail(s);
    }
  }
  const std::string addr_hint =
      address == gpusched::kDefaultDaemonAddress ? "" : absl::StrCat("GPUSCHED_ADDR=", address, " ");
  std::cout << "\ngpuschedd dev is running. In another terminal:\n"
            << "  " << addr_hint << "gpusched nodes\n"
            << "  " << addr_hint << "gpusched nodes show " << nodes.front().name << "\n"
            << "  " << addr_hint << "gpusched submit --gpus 4 -- sh -c 'echo rank $RANK of $WORLD_SIZE'\n"
            << "  " << addr_hint << "gpusched status\n"
            << "Press Ctrl-C to stop.\n"
            << std::flush;
  WaitForStopSignal(signals);
  std::cout << "gpuschedd dev: stopping\n";
  (*cluster)->Shutdown();
  return 0;
}

int RunSimulateCommand(const gpusched::sim::SimulateOptions& options, const sigset_t& signals) {
  // Nothing waits for signals here: let Ctrl-C end a long replay.
  pthread_sigmask(SIG_UNBLOCK, &signals, nullptr);
  if (absl::Status s = gpusched::sim::RunSimulate(options, std::cout, std::cerr); !s.ok()) return Fail(s);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const sigset_t signals = BlockStopSignals();
  // Debian's Abseil checks every gRPC mutex for lock-order cycles; that
  // costs several percent of the daemon's CPU on the submit path.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);

  CLI::App app{"gpuschedd: the gpusched scheduler daemon"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("gpuschedd ") + gpusched::kVersion);
  std::string log_level = "info";
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error");

  DaemonOptions options;
  int64_t kill_grace_ms = 10000;
  int64_t tick_ms = 200;
  int64_t not_responding_ms = 30000;
  int64_t down_ms = 120000;

  CLI::App* serve = app.add_subcommand("serve", "run the daemon");
  options.state_dir = "/var/lib/gpusched";
  serve->add_option("--listen", options.listen_address, "address to serve gRPC on")->capture_default_str();
  serve->add_option("--state-dir", options.state_dir, "directory of the SQLite state file")->capture_default_str();
  serve->add_option("--kill-grace-ms", kill_grace_ms, "SIGTERM to SIGKILL on cancel and time limit")
      ->check(CLI::Range(int64_t{0}, int64_t{3600000}))
      ->capture_default_str();
  serve->add_option("--tick-ms", tick_ms, "period of time-limit checks")
      ->check(CLI::Range(int64_t{10}, int64_t{60000}))
      ->capture_default_str();
  serve->add_option("--node-not-responding-ms", not_responding_ms, "silence before a node takes no new jobs")
      ->check(CLI::Range(int64_t{100}, int64_t{86400000}))
      ->capture_default_str();
  serve->add_option("--node-down-ms", down_ms, "silence before a node is DOWN and its gangs end NODE_FAIL")
      ->check(CLI::Range(int64_t{100}, int64_t{86400000}))
      ->capture_default_str();

  std::string placement_policy = gpusched::core::kDefaultPlacementPolicy;
  serve->add_option("--placement-policy", placement_policy,
                    "where gangs go: topology (NCCL-aware), best-fit, first-fit or spread")
      ->check(CLI::IsMember(gpusched::core::PlacementPolicyNames()))
      ->capture_default_str();
  std::string network_topology_file;
  serve->add_option("--network-topology", network_topology_file,
                    "the cluster network in Slurm topology.conf terms: SwitchName=leaf01 Nodes=gpu[001-032], "
                    "SwitchName=spine01 Switches=leaf[01-02], BlockName=nvl01 Nodes=gb[001-018]; "
                    "where it names a node it wins over the node's labels")
      ->check(CLI::ExistingFile);

  CLI::App* dev = app.add_subcommand("dev", "daemon + two agents with fake GPUs on loopback, for a first look");
  std::string dev_state_dir;
  std::string dev_listen = gpusched::kDefaultDaemonAddress;
  bool fresh = false, no_demo = false;
  dev->add_option("--listen", dev_listen, "address to serve gRPC on")->capture_default_str();
  dev->add_option("--state-dir", dev_state_dir, "state directory (default: $TMPDIR/gpusched-dev-UID)");
  dev->add_flag("--fresh", fresh, "start from an empty state directory");
  dev->add_flag("--no-demo", no_demo, "do not submit the demo job");

  gpusched::sim::SimulateFlags simulate(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  gpusched::SetLogLevel(log_level);
  if (simulate.chosen()) return RunSimulateCommand(simulate.Options(), signals);
  options.core.kill_grace = absl::Milliseconds(kill_grace_ms);
  options.tick = absl::Milliseconds(tick_ms);
  options.core.node_not_responding_after = absl::Milliseconds(not_responding_ms);
  options.core.node_down_after = absl::Milliseconds(std::max(down_ms, not_responding_ms));

  options.core.placement_policy = placement_policy;
  if (!network_topology_file.empty()) {
    auto network = LoadNetworkTopology(network_topology_file);
    if (!network.ok()) return Fail(network.status());
    options.core.network = *std::move(network);
  }
  if (*serve) return RunServe(options, signals);
  options.listen_address = dev_listen;
  options.state_dir = dev_state_dir;
  options.core.kill_grace = absl::Seconds(3);
  return RunDev(options, fresh, !no_demo, signals);
}
