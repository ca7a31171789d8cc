#include "daemon/server/daemon.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/io/logging/logging.h"
#include "common/io/metrics/metrics_endpoint.h"
#include "common/io/tls/grpc_credentials.h"
#include "common/proto_time.h"
#include "daemon/metrics/daemon_metrics.h"
#include "daemon/server/agent_gateway_service.h"
#include "daemon/server/batch_committer.h"
#include "daemon/server/job_event_hub.h"
#include "daemon/server/local_callers.h"
#include "daemon/server/read_pool.h"
#include "daemon/server/scheduler_loop.h"
#include "daemon/server/scheduler_service.h"
#include "daemon/server/session_relay.h"
#include "daemon/server/undecodable_request.h"
#include "daemon/server/unix_listener.h"
#include "daemon/store/pg_job_reader.h"
#include "daemon/store/pg_job_store.h"
#include "daemon/store/sqlite_job_reader.h"
#include "daemon/store/sqlite_job_store.h"
#include "daemon/store/store_url.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"

namespace gpusched::server {
namespace {

// Takes `path` (made if missing) for this process alone; `what` says what
// it guards, for the error when another process holds it.
absl::StatusOr<int> LockFile(const std::string& path, const std::string& what) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return absl::FailedPreconditionError(absl::StrCat("cannot open ", path, ": ", strerror(errno)));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return absl::FailedPreconditionError(
        absl::StrCat("another gpuschedd is already using ", what, " (", path, " is locked)"));
  }
  return fd;
}

// One daemon per state directory: two writers would each believe they own
// every job in it.
absl::StatusOr<int> LockStateDir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::FailedPreconditionError(absl::StrCat("cannot create state directory ", dir, ": ", ec.message()));
  return LockFile(dir + "/gpuschedd.lock", absl::StrCat("state directory ", dir));
}

// A file with no bytes is no state: SQLite would take it for an empty
// database, and the daemon for a cluster with no jobs.
bool HasState(const std::string& db_path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(db_path, ec);
  return !ec && size > 0;
}

absl::Status CheckStateExists(const std::string& db_path) {
  if (HasState(db_path)) return absl::OkStatus();
  const bool exists = std::filesystem::exists(db_path);
  return absl::FailedPreconditionError(absl::StrCat(
      exists ? "the state database " : "there is no state database ", db_path, exists ? " is empty (0 bytes)" : "",
      ": if this cluster had state, restore gpusched.db (and gpusched.db-wal) from a backup; to start a new, "
      "empty one, run `gpuschedd init` (or `serve --init`) once"));
}

// Opens a reader of the engine's kind for each read thread.
template <typename Reader, typename Where>
std::function<absl::StatusOr<std::unique_ptr<store::JobReader>>()> ReaderOpener(Where where) {
  return [where]() -> absl::StatusOr<std::unique_ptr<store::JobReader>> {
    auto reader = Reader::Open(where);
    if (!reader.ok()) return reader.status();
    return std::unique_ptr<store::JobReader>(std::move(*reader));
  };
}

}  // namespace

absl::StatusOr<std::unique_ptr<Daemon>> Daemon::Start(const DaemonOptions& options, const Clock& clock) {
  if (options.state_dir.empty()) return absl::InvalidArgumentError("state directory is not set");
  std::unique_ptr<Daemon> d(new Daemon());
  d->options_ = options;
  auto lock = LockStateDir(options.state_dir);
  if (!lock.ok()) return lock.status();
  d->lock_fd_ = *lock;
  auto opened = OpenStore(options, *d);
  if (!opened.ok()) return opened.status();
  auto recovered = (*opened)->Recover();
  if (!recovered.ok()) return recovered.status();
  d->store_ = std::move(*opened);
  d->core_ = std::make_unique<core::SchedulerCore>(clock, options.core);
  GetLogger("daemon")->info("recovered {} unfinished jobs and {} nodes from {}", recovered->unfinished_jobs.size(),
                            recovered->nodes.size(), d->db_path_);
  if (!options.metrics_listen.empty()) d->metrics_ = std::make_unique<metrics::DaemonMetrics>();
  // The metrics count recovered jobs where they are, not as new submits.
  if (d->metrics_) d->metrics_->RestoreJobs(recovered->unfinished_jobs, recovered->arrays);
  if (recovered->fair_share) d->core_->RestoreFairShare(*recovered->fair_share);
  for (const v1::Job& run : recovered->recent_runs) {
    d->core_->LearnRunTime(run.spec(), FromProtoTime(run.end_time()) - FromProtoTime(run.start_time()));
  }
  d->core_->Restore(std::move(recovered->unfinished_jobs), recovered->nodes, recovered->max_job_id,
                    recovered->client_requests, recovered->ended_jobs);
  if (absl::Status s = d->core_->RestoreArrays(std::move(recovered->arrays)); !s.ok()) return s;
  if (d->metrics_) d->metrics_->RestoreNodes(d->core_->Nodes());

  d->hub_ = std::make_unique<JobEventHub>();
  d->committer_ = std::make_unique<BatchCommitter>(*d->store_, *d->hub_, d->store_health_, options.on_lost_leadership);
  d->loop_ = std::make_unique<SchedulerLoop>(clock, *d->core_, *d->committer_, d->store_health_, options.tick,
                                             d->metrics_.get());
  if (!options.core.pools.empty()) {
    SchedulerLoop* loop = d->loop_.get();
    d->power_programs_ = std::make_shared<PowerPrograms>(
        options.state_dir + "/power", [loop](const core::PowerRequest& request, const absl::Status& outcome) {
          loop->Post([request, outcome](LoopContext& ctx) { ctx.core.PowerProgramEnded(request, outcome, ctx.fx); });
        });
    d->loop_->set_power_programs(d->power_programs_);
  }
  auto reads = ReadPool::Open(d->open_reader_, options.read_threads);
  if (!reads.ok()) return reads.status();
  d->reads_ = std::move(*reads);
  d->local_callers_ = std::make_unique<LocalCallers>();
  CallerPolicy callers{d->local_callers_.get(), options.admins,
                       // Unauthenticated TCP callers act as the daemon's own user.
                       options.allow_unauthenticated_tcp ? UserName(geteuid()) : ""};
  d->sessions_ = std::make_unique<SessionRelay>();
  d->scheduler_calls_ = std::make_unique<SchedulerCalls>(*d->loop_, *d->reads_, d->store_health_, d->metrics_.get(),
                                                         options.core.allow_root_jobs);
  d->scheduler_service_ =
      std::make_unique<SchedulerService>(*d->scheduler_calls_, *d->loop_, *d->hub_, *d->sessions_, callers);
  d->agent_service_ = std::make_unique<AgentGatewayService>(*d->loop_, *d->sessions_, callers);
  if (d->metrics_) {
    // Before the scheduler thread starts: a bad address fails start-up
    // without a daemon half running.
    std::vector<std::shared_ptr<prometheus::Collectable>> served = options.more_metrics;
    served.push_back(d->metrics_->registry());
    auto endpoint = metrics::MetricsEndpoint::Start(options.metrics_listen, std::move(served));
    if (!endpoint.ok()) return endpoint.status();
    d->metrics_endpoint_ = std::move(*endpoint);
  }
  d->committer_->Start();
  d->loop_->set_on_wake(options.on_scheduler_wake);
  d->loop_->Start();

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.listen_address, tls::ServerCredentials(options.tls), &d->port_);
  // Ping idle agent streams so that a vanished host ends its stream (and its
  // node goes DOWN) in seconds, and let agents ping us for the same reason.
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 20000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 5000);
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(std::make_unique<UndecodableRequestInterceptorFactory>());
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  builder.RegisterService(d->scheduler_service_.get());
  builder.RegisterService(d->agent_service_.get());
  d->server_ = builder.BuildAndStart();
  if (d->server_ == nullptr || d->port_ == 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", options.listen_address, " (address in use, or not a local address?)"));
  }
  if (!options.unix_socket.empty()) {
    auto listener =
        UnixListener::Start(options.unix_socket, *d->server_, *d->local_callers_, *d->scheduler_calls_, callers);
    if (!listener.ok()) return listener.status();
    d->unix_listener_ = std::move(*listener);
  }
  return d;
}

absl::StatusOr<std::unique_ptr<store::JobStore>> Daemon::OpenStore(const DaemonOptions& options, Daemon& d) {
  if (options.store_url.empty()) return OpenSqlite(options, d, store::SqliteFileIn(options.state_dir));
  auto url = store::ParseStoreUrl(options.store_url);
  if (!url.ok()) return url.status();
  d.db_path_ = url->shown;
  if (url->engine == store::StoreUrl::Engine::kSqlite) return OpenSqlite(options, d, url->sqlite_path);
  auto pg = store::PgJobStore::Open(*url, options.init_state, options.leader_epoch);
  if (!pg.ok()) return pg.status();
  d.open_reader_ = ReaderOpener<store::PgJobReader>(*url);
  return std::unique_ptr<store::JobStore>(std::move(*pg));
}

absl::StatusOr<std::unique_ptr<store::JobStore>> Daemon::OpenSqlite(const DaemonOptions& options, Daemon& d,
                                                                    const std::string& path) {
  d.db_path_ = path;
  // The same for the database itself, which a store URL may put outside the
  // state directory: two daemons with their own state directories and one
  // database would hand out the same job ids.
  auto store_lock = LockFile(path + ".lock", absl::StrCat("the SQLite store ", path));
  if (!store_lock.ok()) return store_lock.status();
  d.store_lock_fd_ = *store_lock;
  if (!options.init_state) {
    if (absl::Status s = CheckStateExists(path); !s.ok()) return s;
  } else if (!HasState(path)) {
    GetLogger("daemon")->info("no state in {}: starting a new, empty one (--init)", path);
  }
  auto sqlite = store::SqliteJobStore::Open(path);
  if (!sqlite.ok()) return sqlite.status();
  d.open_reader_ = ReaderOpener<store::SqliteJobReader>(path);
  return std::unique_ptr<store::JobStore>(std::move(*sqlite));
}

absl::Status Daemon::InitState(const std::string& state_dir, const std::string& db_path) {
  auto lock = LockStateDir(state_dir);
  if (!lock.ok()) return lock.status();
  absl::Status result = absl::OkStatus();
  if (HasState(db_path)) {
    result = absl::AlreadyExistsError(absl::StrCat(db_path, " already holds a state; nothing was changed"));
  } else {
    auto store = store::SqliteJobStore::Open(db_path);
    if (!store.ok()) result = store.status();
    if (store.ok()) result = (*store)->Recover().status();
  }
  ::close(*lock);
  return result;
}

std::string Daemon::address() const {
  std::vector<std::string> parts = absl::StrSplit(options_.listen_address, absl::MaxSplits(':', 1));
  return absl::StrCat(parts.empty() ? "127.0.0.1" : parts[0], ":", port_);
}

std::string Daemon::metrics_url() const { return metrics_endpoint_ ? metrics_endpoint_->url() : ""; }

void Daemon::Shutdown() {
  // A call waiting on a commit the store keeps refusing is answered now:
  // the server's stop waits for every call.
  if (committer_) committer_->StopRetrying();
  unix_listener_.reset();  // no new connections while the server stops
  if (server_) {
    // Streams (agents, watchers) are cancelled after a short grace.
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
    server_.reset();
  }
  if (loop_) {
    // What fair share counted since its last minute's keeping is not lost
    // to a restart; the loop runs this before it stops, and the committer
    // writes it.
    loop_->Post([](LoopContext& ctx) { ctx.core.KeepFairShareNow(ctx.fx); });
    loop_->Stop();
  }
  // The last batches' after-commit callbacks, which the committer may still
  // run, find no runner from here on: a program is not started while the
  // daemon stops (a restarted one waits out its resume_timeout instead).
  if (loop_) loop_->set_power_programs(nullptr);
  power_programs_.reset();  // a program that ends now is heard by no one
  if (committer_) committer_->Stop();
  reads_.reset();
  metrics_endpoint_.reset();
  for (int* fd : {&store_lock_fd_, &lock_fd_}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

Daemon::~Daemon() { Shutdown(); }

}  // namespace gpusched::server
