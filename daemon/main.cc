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
#include "common/flags/setting_flags.h"
#include "common/io/logging/grpc_logging.h"
#include "common/io/logging/logging.h"
#include "common/io/program_pages/startup_pages.h"
#include "common/io/systemd/systemd_notifier.h"
#include "common/io/tls/tls_files.h"
#include "common/net/network_topology_conf.h"
#include "daemon/config/daemon_config.h"
#include "daemon/config/network_topology_file.h"
#include "daemon/config/serve_settings.h"
#include "daemon/core/policy/placement_policy.h"
#include "daemon/dev/demo_job.h"
#include "daemon/dev/dev_cluster.h"
#include "daemon/server/daemon.h"
#include "daemon/server/replica.h"
#include "daemon/sim/sharing_flags.h"
#include "daemon/sim/simulate_flags.h"
#include "daemon/store/pg_job_store.h"
#include "daemon/store/store_url.h"

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

// Exits the process: another replica leads now, and this one's memory is
// behind the store. systemd (Restart=always) brings it back as a standby.
constexpr int kSteppedDownExit = 75;

int RunReplicaServe(DaemonOptions options, const gpusched::server::ReplicaOptions& replica,
                    const gpusched::Clock& clock, gpusched::service::SystemdNotifier& systemd,
                    const sigset_t& signals) {
  options.on_lost_leadership = [](const absl::Status& why) {
    gpusched::GetLogger("daemon")->critical("stepping down: {}; exiting with status {}", std::string(why.message()),
                                            kSteppedDownExit);
    gpusched::GetLogger("daemon")->flush();
    std::_Exit(kSteppedDownExit);
  };
  gpusched::server::ReplicaHooks hooks;
  hooks.stop_within = [&signals](absl::Duration wait) {
    const timespec timeout = absl::ToTimespec(wait);
    if (sigtimedwait(&signals, nullptr, &timeout) < 0) return false;
    gpusched::GetLogger("daemon")->info("shutting down");
    return true;
  };
  hooks.ready = [&systemd](const std::string& status) {
    systemd.Ready(status);
    gpusched::io::ReleaseStartupPages("daemon");
  };
  hooks.alive = [&systemd] { systemd.PingWatchdogIfDue(); };
  absl::Status ran = gpusched::server::RunReplica(std::move(options), replica, clock, hooks);
  systemd.Stopping();
  if (!ran.ok()) return Fail(ran);
  return 0;
}

int RunServe(DaemonOptions options, const gpusched::server::ReplicaOptions& replica, const sigset_t& signals) {
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
  if (!options.store_url.empty()) {
    auto url = gpusched::store::ParseStoreUrl(options.store_url);
    if (!url.ok()) return Fail(url.status());
    if (url->engine == gpusched::store::StoreUrl::Engine::kPostgres) {
      return RunReplicaServe(std::move(options), replica, clock, systemd, signals);
    }
  }
  auto daemon = gpusched::server::Daemon::Start(options, clock);
  if (!daemon.ok()) return Fail(daemon.status());
  systemd.Ready(absl::StrCat("serving on ", (*daemon)->address(), ", state in ", (*daemon)->db_path()));
  gpusched::GetLogger("daemon")->info("gpuschedd {} serving on {}, state in {}", gpusched::kVersion,
                                      (*daemon)->address(), (*daemon)->db_path());
  if (!(*daemon)->metrics_url().empty()) {
    gpusched::GetLogger("daemon")->info("metrics on {}", (*daemon)->metrics_url());
  }
  // Start-up's code and read-only data stop being resident (a fresh daemon
  // with 16 agents held about 1 MiB less).
  gpusched::io::ReleaseStartupPages("daemon");
  int sig = WaitForStopSignal(signals);
  gpusched::GetLogger("daemon")->info("signal {}: shutting down", sig);
  systemd.Stopping();
  (*daemon)->Shutdown();
  return 0;
}

// What `serve` runs with: the settings (flags over the file) in the daemon's
// own units, the file's queues and pools, and the network and TLS files read.
absl::StatusOr<DaemonOptions> ServeOptions(const gpusched::daemon::ServeSettings& s,
                                           const gpusched::daemon::DaemonConfig& file) {
  DaemonOptions options;
  options.listen_address = s.listen;
  options.state_dir = s.state_dir;
  options.store_url = s.store;
  options.metrics_listen = s.metrics_listen;
  options.unix_socket = s.socket;
  options.admins = std::set<std::string>(s.admins.begin(), s.admins.end());
  options.allow_unauthenticated_tcp = s.allow_unauthenticated_tcp;
  options.tick = absl::Milliseconds(s.tick_ms);
  gpusched::core::CoreOptions& core = options.core;
  core.allow_root_jobs = s.allow_root_jobs;
  core.kill_grace = absl::Milliseconds(s.kill_grace_ms);
  core.node_not_responding_after = absl::Milliseconds(s.node_not_responding_ms);
  core.node_down_after = absl::Milliseconds(std::max(s.node_down_ms, s.node_not_responding_ms));
  core.head_blocks_after = absl::Hours(s.head_blocks_after_h);
  core.priority_refresh = absl::Seconds(s.priority_refresh_s);
  core.probe.drain_below = static_cast<double>(s.probe_drain_below_percent) / 100;
  core.probe.preflight_min = static_cast<double>(s.preflight_min_percent) / 100;
  core.placement_policy = s.placement_policy;
  core.share_packing = *gpusched::core::ParseSharePacking(s.share_packing);
  core.defaults.topology = s.default_topology == "strict" ? gpusched::v1::TOPOLOGY_MODE_STRICT
                           : s.default_topology == "any"  ? gpusched::v1::TOPOLOGY_MODE_ANY
                                                          : gpusched::v1::TOPOLOGY_MODE_PREFER;
  // Queues and pools have no flags: a cluster's queue layout, and the nodes
  // and programs of its pools, belong in one file.
  if (file.queues) core.queues = *file.queues;
  core.pools = file.pools;
  if (file.network != nullptr && s.network_topology == file.settings.values.network_topology) {
    core.network = file.network;  // the file's own, read and checked with it
  } else if (!s.network_topology.empty()) {
    auto network = gpusched::daemon::ReadNetworkTopologyFile(s.network_topology);
    if (!network.ok()) return network.status();
    core.network = *std::move(network);
  }
  auto tls = gpusched::tls::LoadTls({.cert = s.tls_cert, .key = s.tls_key, .ca = s.tls_client_ca},
                                    gpusched::tls::kServerTlsKeys);
  if (!tls.ok()) return tls.status();
  options.tls = *std::move(tls);
  return options;
}

// How a replica on a PostgreSQL store takes part: its lease, and the
// address the others name to clients.
gpusched::server::ReplicaOptions ReplicaSettings(const gpusched::daemon::ServeSettings& s, const std::string& listen) {
  gpusched::server::ReplicaOptions replica;
  replica.lease = absl::Milliseconds(s.leader_lease_ms);
  replica.advertise = s.advertise_address;
  if (replica.advertise.empty()) {
    const size_t colon = listen.rfind(':');
    const std::string host = colon == std::string::npos ? "" : listen.substr(0, colon);
    char name[256] = {};
    gethostname(name, sizeof name - 1);
    replica.advertise = host.empty() || host == "0.0.0.0" || host == "[::]"
                            ? absl::StrCat(name, colon == std::string::npos ? "" : listen.substr(colon))
                            : listen;
  }
  return replica;
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
int InitState(const std::string& config_path, std::string state_dir, std::string store) {
  if (state_dir.empty() || store.empty()) {
    std::string used;
    auto file = gpusched::daemon::LoadServeConfig(config_path, &used);
    if (!file.ok()) return Fail(file.status());
    if (state_dir.empty()) state_dir = file->settings.values.state_dir;
    if (store.empty()) store = file->settings.values.store;
  }
  std::string db_path = gpusched::store::SqliteFileIn(state_dir);
  if (!store.empty()) {
    auto url = gpusched::store::ParseStoreUrl(store);
    if (!url.ok()) return Fail(url.status());
    if (url->engine == gpusched::store::StoreUrl::Engine::kPostgres) {
      auto made = gpusched::store::PgJobStore::Prepare(*url, /*create=*/true);
      if (!made.ok()) return Fail(made.status());
      std::cout << "gpuschedd: " << (*made ? "a new, empty state in " : "a state is already kept in ") << url->shown
                << (*made ? "\n" : "; nothing was changed\n");
      return 0;
    }
    db_path = url->sqlite_path;
  }
  absl::Status s = gpusched::server::Daemon::InitState(state_dir, db_path);
  if (absl::IsAlreadyExists(s)) {
    std::cout << "gpuschedd: " << s.message() << "\n";
    return 0;
  }
  if (!s.ok()) return Fail(s);
  std::cout << "gpuschedd: a new, empty state in " << db_path << "\n";
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
  CLI::App* serve = app.add_subcommand("serve", "run the daemon");
  gpusched::daemon::ServeSettings settings;
  gpusched::flags::AddSettingFlags(serve, gpusched::daemon::ServeSettingsTable(), &settings);
  std::string config_path;
  serve
      ->add_option("--config", config_path,
                   "settings file; every key is the flag of the same name, and a flag given here wins "
                   "(default: /etc/gpusched/gpuschedd.toml when it exists)")
      ->check(CLI::ExistingFile);
  bool init_state = false;
  serve->add_flag("--init", init_state,
                  "where there is no state database (or a 0-byte one), start a new, empty one instead of refusing");

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
  std::string init_store;
  init->add_option("--store", init_store,
                   "the store (default: the file's store, else the SQLite file in the state directory); for "
                   "postgresql://..., makes gpusched's tables in that database");
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
  if (*init) return InitState(init_config_path, init_state_dir, init_store);
  std::string config_used;
  if (*serve) {
    auto file = gpusched::daemon::LoadServeConfig(config_path, &config_used);
    if (!file.ok()) return Fail(file.status());
    gpusched::flags::ApplyFileUnderFlags(serve, gpusched::daemon::ServeSettingsTable(), file->settings, &settings);
    gpusched::SetLogLevel(settings.log_level);
    if (!config_used.empty()) gpusched::GetLogger("daemon")->info("settings from {}", config_used);
    auto options = ServeOptions(settings, *file);
    if (!options.ok()) return Fail(options.status());
    options->init_state = init_state;
    // A refused client shows up only in gRPC's own log line; say what it means.
    gpusched::RouteGrpcLogsToSpdlog(settings.tls_client_ca.empty()
                                        ? ""
                                        : "a client without a certificate signed by tls_client_ca (or speaking "
                                          "plaintext) was refused");
    if (options->tls) {
      gpusched::GetLogger("daemon")->info(
          "TLS with certificate {}; {}", settings.tls_cert,
          settings.tls_client_ca.empty() ? "clients are not asked for certificates"
                                         : "clients must present a certificate signed by " + settings.tls_client_ca);
    }
    const gpusched::server::ReplicaOptions replica = ReplicaSettings(settings, options->listen_address);
    return RunServe(*std::move(options), replica, signals);
  }
  gpusched::SetLogLevel(settings.log_level);
  if (simulate.chosen()) return RunSimulateCommand(simulate.Options(), signals);
  if (simulate_sharing.chosen()) return RunSimulateSharingCommand(simulate_sharing.Options(), signals);
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
  // dev's defaults are serve's, but for what it sets here.
  auto defaults = ServeOptions(gpusched::daemon::ServeSettings{}, gpusched::daemon::DaemonConfig{});
  if (!defaults.ok()) return Fail(defaults.status());
  DaemonOptions options = *std::move(defaults);
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
