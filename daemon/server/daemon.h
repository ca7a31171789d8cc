#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/defaults.h"
#include "common/io/tls/tls_files.h"
#include "daemon/core/scheduler_core.h"
#include "daemon/server/store_health.h"
#include "daemon/store/job_store.h"

namespace grpc {
class Server;
}

namespace prometheus {
class Collectable;
}

namespace gpusched::metrics {
class DaemonMetrics;
class MetricsEndpoint;
}  // namespace gpusched::metrics

namespace gpusched::server {

struct DaemonOptions {
  std::string listen_address = kDefaultDaemonAddress;  // port 0 picks a free one
  std::string state_dir;                               // holds gpusched.db (unless store_url says otherwise)
  // Where the state is kept (store/store_url.h); empty: gpusched.db in
  // state_dir. On PostgreSQL the daemon is one of several replicas, and
  // leader_epoch (PgLeadership) fences its commits.
  std::string store_url;
  int64_t leader_epoch = -1;
  // A commit found that another replica took over: this one must stop
  // acting (gpuschedd serve exits). Empty: the commit just fails.
  std::function<void(const absl::Status&)> on_lost_leadership;
  absl::Duration tick = absl::Milliseconds(200);  // time-limit checks, periodic passes
  int read_threads = 2;
  // HOST:PORT to serve Prometheus metrics on (port 0 picks a free one);
  // empty: no metrics, and none are measured.
  std::string metrics_listen;
  // More series for the same endpoint (a replica's: ReplicaMetrics).
  std::vector<std::shared_ptr<prometheus::Collectable>> more_metrics;
  // A Unix socket for the CLI on this host, where callers are told apart by
  // their uid (SO_PEERCRED); empty: none. `admins` (and root) may act on
  // anyone's jobs there.
  std::string unix_socket;
  std::set<std::string> admins;
  // TCP callers without a client certificate act as the user the daemon
  // runs as, an admin, and any agent may register: a single-user
  // development setup (`gpuschedd dev`). Off: they are refused.
  bool allow_unauthenticated_tcp = false;
  // A missing or 0-byte gpusched.db (or a PostgreSQL database without
  // gpusched's tables) is made a new, empty state. Off, it is an error: a
  // lost or truncated file must not pass for an empty cluster.
  bool init_state = false;
  // TLS on listen_address, checked already (tls::LoadTls); std::nullopt:
  // plaintext. With ca_certs, every client must present a certificate signed
  // by them, or its connection ends in the handshake.
  std::optional<tls::TlsMaterial> tls;
  core::CoreOptions core;
  // Called on the scheduler thread every time it wakes, at least every tick
  // (gpuschedd serve: the systemd watchdog ping). May be empty.
  std::function<void()> on_scheduler_wake;
};

class AgentGatewayService;
class BatchCommitter;
class JobEventHub;
class ReadPool;
class SchedulerLoop;
class SchedulerCalls;
class SchedulerService;
class SessionRelay;
class LocalCallers;
class PowerPrograms;
class UnixListener;

// gpuschedd put together: state file, scheduler thread, gRPC services (with
// health checking and reflection) on one listening address.
class Daemon {
 public:
  // Recovers the state in state_dir and starts serving. Fails with a message
  // naming the directory, file or address at fault.
  static absl::StatusOr<std::unique_ptr<Daemon>> Start(const DaemonOptions& options, const Clock& clock);
  // `gpuschedd init`: an empty state in the SQLite file `db_path` (with
  // state_dir locked), made only where there is none (no file, or 0
  // bytes); AlreadyExists where there is one.
  static absl::Status InitState(const std::string& state_dir, const std::string& db_path);
  ~Daemon();

  void Shutdown();
  int port() const { return port_; }
  std::string address() const;  // host:port actually bound
  // The SQLite file, or the PostgreSQL URL without its password.
  const std::string& db_path() const { return db_path_; }
  // http://HOST:PORT/metrics, or "" without metrics.
  std::string metrics_url() const;

 private:
  Daemon() = default;
  // The store options name (or the SQLite file in state_dir), recovered by
  // the caller; sets db_path_ and open_reader_.
  static absl::StatusOr<std::unique_ptr<store::JobStore>> OpenStore(const DaemonOptions& options, Daemon& d);
  static absl::StatusOr<std::unique_ptr<store::JobStore>> OpenSqlite(const DaemonOptions& options, Daemon& d,
                                                                     const std::string& path);

  DaemonOptions options_;
  std::string db_path_;
  int lock_fd_ = -1;
  int store_lock_fd_ = -1;  // a SQLite store's own lock, wherever the file is
  int port_ = 0;
  std::unique_ptr<store::JobStore> store_;
  std::function<absl::StatusOr<std::unique_ptr<store::JobReader>>()> open_reader_;
  std::unique_ptr<core::SchedulerCore> core_;
  std::unique_ptr<metrics::DaemonMetrics> metrics_;  // null without metrics_listen
  std::unique_ptr<JobEventHub> hub_;
  std::unique_ptr<SessionRelay> sessions_;  // before the services, which use it
  StoreHealth store_health_;
  std::unique_ptr<BatchCommitter> committer_;
  std::unique_ptr<SchedulerLoop> loop_;
  std::shared_ptr<PowerPrograms> power_programs_;  // shared with the loop's after-commit callbacks
  std::unique_ptr<ReadPool> reads_;
  std::unique_ptr<SchedulerCalls> scheduler_calls_;
  std::unique_ptr<SchedulerService> scheduler_service_;
  std::unique_ptr<AgentGatewayService> agent_service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<LocalCallers> local_callers_;
  std::unique_ptr<UnixListener> unix_listener_;  // null without unix_socket
  std::unique_ptr<metrics::MetricsEndpoint> metrics_endpoint_;
};

}  // namespace gpusched::server
