// gpuschedd: `serve` runs the daemon; `dev` runs it with in-process agents on
// fake GPUs for a first look; `simulate` replays a job trace through the same
// scheduling core on a virtual clock.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>

#include "CLI/CLI.hpp"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "common/config/host_port.h"
#include "common/defaults.h"
#include "common/io/logging/grpc_logging.h"
#include "common/io/logging/logging.h"
#include "common/io/systemd/systemd_notifier.h"
#include "common/io/tls/tls_files.h"
#include "common/net/network_topology_conf.h"
#include "daemon/config/daemon_config.h"
#include "daemon/config/network_topology_file.h"
#include "daemon/core/policy/placement_policy.h"
#include "daemon/dev/demo_job.h"
#include "daemon/dev/dev_cluster.h"
#include "daemon/server/daemon.h"
#include "daemon/sim/sharing_flags.h"
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

int RunServe(DaemonOptions options, const sigset_t& signals) {
  gpusched::service::SystemdNotifier systemd;  // no-op outside systemd
  if (auto interval = systemd.watchdog_interval()) {
    // The scheduler thread pings: a hung pass or a deadlock in it gets the
    // daemon restarted. It wakes at least once a tick.
    if (options.tick > *interval) {
      return Fail(absl::InvalidArgumentError(absl::StrCat(
          "tick_ms ", absl::ToInt64Milliseconds(options.tick), " is longer than half of systemd's WatchdogSec (",
          absl::ToInt64Milliseconds(*interval), " ms): lower tick_ms or raise WatchdogSec")));
    }
    options.on_scheduler_wake = [&systemd] { systemd.PingWatchdogIfDue(); };
  }
  gpusched::SystemClock clock;
  auto daemon = gpusched::server::Daemon::Start(options, clock);
  if (!daemon.ok()) return Fail(daemon.status());
  systemd.Ready(absl::StrCat("serving on ", (*daemon)->address(), ", state in ", (*daemon)->db_path()));
  gpusched::GetLogger("daemon")->info("gpuschedd {} serving on {}, state in {}", gpusched::kVersion,
                                      (*daemon)->address(), (*daemon)->db_path());
  if (!(*daemon)->metrics_url().empty()) {
    gpusched::GetLogger("daemon")->info("metrics on {}", (*daemon)->metrics_url());
  }
  int sig = WaitForStopSignal(signals);
  gpusched::GetLogger("daemon")->info("signal {}: shutting down", sig);
  systemd.Stopping();
  (*daemon)->Shutdown();
  return 0;
}

// `gpuschedd check-config FILE`: 0 and one line when the file is good, else 1
// and the message naming the line.
int CheckConfig(const std::string& path) {
  auto config = gpusched::daemon::ReadDaemonConfig(path);
  if (!config.ok()) return Fail(config.status());
  std::cout << path << ": " << gpusched::daemon::DescribeDaemonConfig(*config) << "\n";
  return 0;
}

// `gpuschedd init`: 0 once the state exists (new, or already there), 1 with
// the message when it cannot be made.
int InitState(const std::string& config_path, std::string state_dir) {
  if (state_dir.empty()) {
    std::string used;
    auto file = gpusched::daemon::LoadServeConfig(config_path, &used);
    if (!file.ok()) return Fail(file.status());
    state_dir = file->state_dir.value_or(gpusched::daemon::kDefaultStateDir);
  }
  absl::Status s = gpusched::server::Daemon::InitState(state_dir);
  if (absl::IsAlreadyExists(s)) {
    std::cout << "gpuschedd: " << s.message() << "\n";
    return 0;
  }
  if (!s.ok()) return Fail(s);
  std::cout << "gpuschedd: a new, empty state in " << state_dir << "/gpusched.db\n";
  return 0;
}

int RunDev(DaemonOptions options, bool fresh, bool demo, const gpusched::agent::ContainerSettings& containers,
           const sigset_t& signals) {
  if (options.state_dir.empty()) options.state_dir = DefaultDevStateDir();
  if (fresh) {
    std::error_code ec;
    std::filesystem::remove_all(options.state_dir, ec);
  }
  gpusched::SystemClock clock;
  auto nodes = gpusched::dev::DefaultDevNodes();
  auto cluster = gpusched::dev::DevCluster::Start(options, nodes, clock, containers);
  if (!cluster.ok()) return Fail(cluster.status());
  if (absl::Status s = (*cluster)->WaitForAgents(absl::Seconds(10)); !s.ok()) return Fail(s);

  const std::string address = (*cluster)->daemon().address();
  std::cout << "gpuschedd dev: daemon on " << address << ", state in " << (*cluster)->daemon().db_path() << "\n";
  std::cout << "gpuschedd dev: single-user setup: TCP callers are not authenticated; anyone who reaches " << address
            << " acts as admin, and jobs run as the user running gpuschedd dev" << (geteuid() == 0 ? " (root)" : "")
            << "\n";
  if (!(*cluster)->daemon().metrics_url().empty()) {
    std::cout << "gpuschedd dev: Prometheus metrics on " << (*cluster)->daemon().metrics_url() << "\n";
  }
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

// dev serves metrics next to gRPC unless told otherwise: the gRPC port + 1
// (127.0.0.1:6871 by default), or a free port when gRPC takes a free one.
std::string DevMetricsAddress(const std::string& flag, const std::string& listen) {
  if (flag == "off") return "";
  if (!flag.empty()) return flag;
  const size_t colon = listen.rfind(':');
  int port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(listen.substr(colon + 1), &port)) return "";
  return absl::StrCat(listen.substr(0, colon), ":", port == 0 || port >= 65535 ? 0 : port + 1);
}

int RunSimulateCommand(const gpusched::sim::SimulateOptions& options, const sigset_t& signals) {
  // Nothing waits for signals here: let Ctrl-C end a long replay.
  pthread_sigmask(SIG_UNBLOCK, &signals, nullptr);
  if (absl::Status s = gpusched::sim::RunSimulate(options, std::cout, std::cerr); !s.ok()) return Fail(s);
  return 0;
}

int RunSimulateSharingCommand(const gpusched::sim::SimulateSharingOptions& options, const sigset_t& signals) {
  pthread_sigmask(SIG_UNBLOCK, &signals, nullptr);
  if (absl::Status s = gpusched::sim::RunSimulateSharing(options, std::cout, std::cerr); !s.ok()) return Fail(s);
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
  using gpusched::daemon::kKillGraceMs, gpusched::daemon::kTickMs, gpusched::daemon::kNodeNotRespondingMs,
      gpusched::daemon::kNodeDownMs, gpusched::daemon::kProbeDrainBelowPercent, gpusched::daemon::kPreflightMinPercent;
  int64_t kill_grace_ms = kKillGraceMs.default_value;
  int64_t tick_ms = kTickMs.default_value;
  int64_t not_responding_ms = kNodeNotRespondingMs.default_value;
  int64_t down_ms = kNodeDownMs.default_value;
  int64_t head_blocks_after_h = gpusched::daemon::kHeadBlocksAfterH.default_value;
  int64_t probe_drain_below_percent = kProbeDrainBelowPercent.default_value;
  int64_t preflight_min_percent = kPreflightMinPercent.default_value;

  CLI::App* serve = app.add_subcommand("serve", "run the daemon");
  options.state_dir = gpusched::daemon::kDefaultStateDir;
  std::string config_path;
  serve
      ->add_option("--config", config_path,
                   "settings file; every key is the flag of the same name, and a flag given here wins "
                   "(default: /etc/gpusched/gpuschedd.toml when it exists)")
      ->check(CLI::ExistingFile);
  serve->add_option("--listen", options.listen_address, "address to serve gRPC on")->capture_default_str();
  serve->add_option("--state-dir", options.state_dir, "directory of the SQLite state file")->capture_default_str();
  serve->add_option("--kill-grace-ms", kill_grace_ms, "SIGTERM to SIGKILL on cancel and time limit")
      ->check(CLI::Range(kKillGraceMs.min, kKillGraceMs.max))
      ->capture_default_str();
  serve->add_option("--tick-ms", tick_ms, "period of time-limit checks")
      ->check(CLI::Range(kTickMs.min, kTickMs.max))
      ->capture_default_str();
  serve->add_option("--node-not-responding-ms", not_responding_ms, "silence before a node takes no new jobs")
      ->check(CLI::Range(kNodeNotRespondingMs.min, kNodeNotRespondingMs.max))
      ->capture_default_str();
  serve
      ->add_option("--head-blocks-after-h", head_blocks_after_h,
                   "hours a job that can start neither now nor by a reservation (the jobs it waits for have no "
                   "time limits) lets smaller jobs pass it before it holds them back until it starts; 0 = strict "
                   "queue order")
      ->check(CLI::Range(gpusched::daemon::kHeadBlocksAfterH.min, gpusched::daemon::kHeadBlocksAfterH.max))
      ->capture_default_str();
  serve->add_option("--node-down-ms", down_ms, "silence before a node is DOWN and its gangs end NODE_FAIL")
      ->check(CLI::Range(kNodeDownMs.min, kNodeDownMs.max))
      ->capture_default_str();
  serve
      ->add_option("--probe-drain-below-percent", probe_drain_below_percent,
                   "drain a node whose NCCL link calibration measures a GPU pair below this share of its "
                   "link's estimate (0: never)")
      ->check(CLI::Range(kProbeDrainBelowPercent.min, kProbeDrainBelowPercent.max))
      ->capture_default_str();
  serve
      ->add_option("--preflight-min-percent", preflight_min_percent,
                   "a job's NCCL preflight fails below this share of its GPUs' estimated ring bandwidth: "
                   "the job is requeued and the node drained (0: only a probe error fails)")
      ->check(CLI::Range(kPreflightMinPercent.min, kPreflightMinPercent.max))
      ->capture_default_str();

  std::string placement_policy = gpusched::core::kDefaultPlacementPolicy;
  serve->add_option("--metrics-listen", options.metrics_listen,
                    "serve Prometheus metrics at http://ADDR:PORT/metrics (e.g. 0.0.0.0:6871); off when not given");
  serve->add_option(
      "--socket", options.unix_socket,
      "also serve the CLI on this Unix socket, telling users apart by uid (e.g. /run/gpusched/gpuschedd.sock)");
  std::vector<std::string> admins;
  serve->add_option("--admin", admins,
                    "a user who may act on anyone's jobs and the nodes (repeatable; root always may)");
  serve->add_flag("--allow-unauthenticated-tcp", options.allow_unauthenticated_tcp,
                  "single-user setups only: TCP callers without a client certificate act as the daemon's user "
                  "(an admin), and any agent may register");
  serve->add_flag("--allow-root-jobs", options.core.allow_root_jobs, "jobs may run as root");
  serve->add_flag("--init", options.init_state,
                  "where there is no state database (or a 0-byte one), start a new, empty one instead of refusing");
  serve
      ->add_option("--placement-policy", placement_policy,
                   "where gangs go: topology (NCCL-aware), best-fit, first-fit or spread")
      ->check(CLI::IsMember(gpusched::core::PlacementPolicyNames()))
      ->capture_default_str();
  std::string share_packing = gpusched::core::kDefaultSharePacking;
  serve
      ->add_option("--share-packing", share_packing,
                   "where shares of GPUs go: best-fit (the tightest fit, idle nodes kept whole) or fgd (least "
                   "growth of the fragmentation expected for the cluster's jobs)")
      ->check(CLI::IsMember(gpusched::core::SharePackingNames()))
      ->capture_default_str();
  std::string default_topology = "prefer";
  serve
      ->add_option("--default-topology", default_topology,
                   "placement a job gets when it does not choose: prefer (best free now), strict (wait for the "
                   "idle cluster's best) or any")
      ->check(CLI::IsMember({"prefer", "strict", "any"}))
      ->capture_default_str();
  std::string network_topology_file;
  serve
      ->add_option("--network-topology", network_topology_file,
                   "the cluster network in Slurm topology.conf terms: SwitchName=leaf01 Nodes=gpu[001-032], "
                   "SwitchName=spine01 Switches=leaf[01-02], BlockName=nvl01 Nodes=gb[001-018]; "
                   "where it names a node it wins over the node's labels")
      ->check(CLI::ExistingFile);
  gpusched::tls::TlsFiles tls_files;
  serve->add_option("--tls-cert", tls_files.cert,
                    "PEM certificate (then its chain) to serve gRPC over TLS with; with --tls-key");
  serve->add_option("--tls-key", tls_files.key, "PEM private key of --tls-cert, unencrypted");
  serve->add_option("--tls-client-ca", tls_files.ca,
                    "PEM CA certificates: every client (agents, CLI) must present a certificate signed by one "
                    "(mutual TLS); without it, clients are not asked for one");

  CLI::App* dev = app.add_subcommand("dev", "daemon + two agents with fake GPUs on loopback, for a first look");
  std::string dev_state_dir;
  std::string dev_listen = gpusched::kDefaultDaemonAddress;
  bool fresh = false, no_demo = false;
  dev->add_option("--listen", dev_listen, "address to serve gRPC on")->capture_default_str();
  dev->add_option("--state-dir", dev_state_dir, "state directory (default: $TMPDIR/gpusched-dev-UID)");
  dev->add_flag("--fresh", fresh, "start from an empty state directory");
  dev->add_flag("--no-demo", no_demo, "do not submit the demo job");
  gpusched::agent::ContainerSettings dev_containers;
  dev->add_option("--container-runtime", dev_containers.runtime,
                  "let jobs run in container images (--image) with this runtime: podman; default none");
  dev->add_option("--container-oci-runtime", dev_containers.oci_runtime, "podman --runtime for job containers (runc)");
  dev->add_option("--container-run-arg", dev_containers.run_args,
                  "one more podman run argument, as --container-run-arg=--ulimit (repeatable)");
  std::string dev_metrics;
  dev->add_option("--metrics-listen", dev_metrics,
                  "Prometheus metrics address (default: the --listen host and port + 1, 127.0.0.1:6871; off: none)");

  gpusched::sim::SimulateFlags simulate(app);
  gpusched::sim::SimulateSharingFlags simulate_sharing(app);

  CLI::App* init = app.add_subcommand(
      "init", "create the empty state database where `serve` will look (state_dir), once, before the first start");
  std::string init_config_path;
  std::string init_state_dir;
  init->add_option("--config", init_config_path,
                   "settings file to take state_dir from (default: " +
                       std::string(gpusched::daemon::kDefaultDaemonConfigPath) + ")");
  init->add_option("--state-dir", init_state_dir,
                   "the state directory (default: the file's state_dir, else " +
                       std::string(gpusched::daemon::kDefaultStateDir) + ")");

  CLI::App* check_config =
      app.add_subcommand("check-config", "check a gpuschedd.toml: exit 0 with a summary, or 1 naming the bad line");
  std::string check_config_path;
  check_config->add_option("FILE", check_config_path, "the file to check")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  if (*check_config) return CheckConfig(check_config_path);
  if (*init) return InitState(init_config_path, init_state_dir);
  std::string config_used;
  if (*serve) {
    // gpuschedd.toml under the command line: a key counts where its flag was not given.
    auto file = gpusched::daemon::LoadServeConfig(config_path, &config_used);
    if (!file.ok()) return Fail(file.status());
    auto unless_flag = [](CLI::App* command, const char* flag, const auto& value, auto& target) {
      if (value.has_value() && command->get_option(flag)->count() == 0) target = *value;
    };
    unless_flag(&app, "--log-level", file->log_level, log_level);
    unless_flag(serve, "--listen", file->listen, options.listen_address);
    unless_flag(serve, "--state-dir", file->state_dir, options.state_dir);
    unless_flag(serve, "--kill-grace-ms", file->kill_grace_ms, kill_grace_ms);
    unless_flag(serve, "--tick-ms", file->tick_ms, tick_ms);
    unless_flag(serve, "--node-not-responding-ms", file->node_not_responding_ms, not_responding_ms);
    unless_flag(serve, "--node-down-ms", file->node_down_ms, down_ms);
    unless_flag(serve, "--head-blocks-after-h", file->head_blocks_after_h, head_blocks_after_h);
    unless_flag(serve, "--probe-drain-below-percent", file->probe_drain_below_percent, probe_drain_below_percent);
    unless_flag(serve, "--preflight-min-percent", file->preflight_min_percent, preflight_min_percent);
    unless_flag(serve, "--metrics-listen", file->metrics_listen, options.metrics_listen);
    unless_flag(serve, "--socket", file->socket, options.unix_socket);
    unless_flag(serve, "--admin", file->admins, admins);
    unless_flag(serve, "--allow-unauthenticated-tcp", file->allow_unauthenticated_tcp,
                options.allow_unauthenticated_tcp);
    unless_flag(serve, "--allow-root-jobs", file->allow_root_jobs, options.core.allow_root_jobs);
    unless_flag(serve, "--placement-policy", file->placement_policy, placement_policy);
    unless_flag(serve, "--share-packing", file->share_packing, share_packing);
    unless_flag(serve, "--default-topology", file->default_topology, default_topology);
    unless_flag(serve, "--network-topology", file->network_topology, network_topology_file);
    unless_flag(serve, "--tls-cert", file->tls_cert, tls_files.cert);
    unless_flag(serve, "--tls-key", file->tls_key, tls_files.key);
    unless_flag(serve, "--tls-client-ca", file->tls_client_ca, tls_files.ca);
    // Queues have no flags: a cluster's queue layout belongs in one file.
    if (file->queues) options.core.queues = *file->queues;
    // Pools neither: their nodes and programs are a file's to name.
    options.core.pools = file->pools;
  }
  gpusched::SetLogLevel(log_level);
  if (!config_used.empty()) gpusched::GetLogger("daemon")->info("settings from {}", config_used);
  if (simulate.chosen()) return RunSimulateCommand(simulate.Options(), signals);
  if (simulate_sharing.chosen()) return RunSimulateSharingCommand(simulate_sharing.Options(), signals);
  options.core.kill_grace = absl::Milliseconds(kill_grace_ms);
  options.tick = absl::Milliseconds(tick_ms);
  options.core.node_not_responding_after = absl::Milliseconds(not_responding_ms);
  options.core.node_down_after = absl::Milliseconds(std::max(down_ms, not_responding_ms));
  options.core.head_blocks_after = absl::Hours(head_blocks_after_h);
  options.core.probe.drain_below = static_cast<double>(probe_drain_below_percent) / 100;
  options.core.probe.preflight_min = static_cast<double>(preflight_min_percent) / 100;

  options.core.placement_policy = placement_policy;
  options.core.share_packing = *gpusched::core::ParseSharePacking(share_packing);
  options.admins = std::set<std::string>(admins.begin(), admins.end());
  options.core.defaults.topology = default_topology == "strict" ? gpusched::v1::TOPOLOGY_MODE_STRICT
                                   : default_topology == "any"  ? gpusched::v1::TOPOLOGY_MODE_ANY
                                                                : gpusched::v1::TOPOLOGY_MODE_PREFER;
  if (!network_topology_file.empty()) {
    auto network = gpusched::daemon::ReadNetworkTopologyFile(network_topology_file);
    if (!network.ok()) return Fail(network.status());
    options.core.network = *std::move(network);
  }
  if (*serve) {
    auto tls = gpusched::tls::LoadTls(tls_files, gpusched::tls::kServerTlsKeys);
    if (!tls.ok()) return Fail(tls.status());
    options.tls = *std::move(tls);
    // A refused client shows up only in gRPC's own log line; say what it means.
    gpusched::RouteGrpcLogsToSpdlog(
        tls_files.ca.empty() ? ""
                             : "a client without a certificate signed by tls_client_ca (or speaking plaintext) "
                               "was refused");
    if (options.tls) {
      gpusched::GetLogger("daemon")->info("TLS with certificate {}; {}", tls_files.cert,
                                          tls_files.ca.empty()
                                              ? "clients are not asked for certificates"
                                              : "clients must present a certificate signed by " + tls_files.ca);
    }
    return RunServe(options, signals);
  }
  // dev stays plaintext on loopback: its agents live in this process, and
  // it is one user's cluster, made on first use. Its TCP callers are admins
  // unasked, so a port other machines can reach would hand them this user.
  if (!gpusched::config::IsLoopbackAddress(dev_listen)) {
    return Fail(absl::InvalidArgumentError(absl::StrCat(
        "dev --listen ", dev_listen,
        " is not a loopback address: dev takes unauthenticated TCP callers as admins and runs their jobs as "
        "this user, so it listens on 127.0.0.1, localhost or [::1] only (gpuschedd serve, with TLS, is for other "
        "machines)")));
  }
  options.init_state = true;
  options.allow_unauthenticated_tcp = true;
  options.core.allow_root_jobs = true;
  options.listen_address = dev_listen;
  options.metrics_listen = DevMetricsAddress(dev_metrics, dev_listen);
  options.state_dir = dev_state_dir;
  options.core.kill_grace = absl::Seconds(3);
  if (!dev_containers.runtime.empty()) {
    // One user's cluster: any registry, and mounts from /tmp and the home directory.
    dev_containers.mount_sources.push_back("/tmp");
    if (const char* home = std::getenv("HOME"); home != nullptr && home[0] == '/')
      dev_containers.mount_sources.push_back(home);
  }
  return RunDev(options, fresh, !no_demo, dev_containers, signals);
}
