#include "daemon/server/replica.h"

#include <unistd.h>

#include <thread>

#include "absl/strings/str_cat.h"
#include "common/io/logging/logging.h"
#include "common/io/metrics/metrics_endpoint.h"
#include "common/threads/mutex.h"
#include "daemon/metrics/replica_metrics.h"
#include "daemon/server/standby_server.h"
#include "daemon/store/fencing.h"
#include "daemon/store/pg_job_store.h"
#include "daemon/store/pg_leadership.h"
#include "daemon/store/store_url.h"

namespace gpusched::server {
namespace {

constexpr absl::Duration kSayAgainAfter = absl::Seconds(30);  // one line per outage of the database

std::string HolderName() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return absl::StrCat(host, ":", getpid());
}

// Renews the lease until stopped; tells `lost` when another replica took over.
class LeaseKeeper {
 public:
  LeaseKeeper(store::PgLeadership& leadership, int64_t epoch, absl::Duration every,
              std::function<void(const absl::Status&)> lost)
      : thread_([this, &leadership, epoch, every, lost = std::move(lost)] { Run(leadership, epoch, every, lost); }) {}
  ~LeaseKeeper() {
    {
      MutexLock lock(&mu_);
      stop_ = true;
    }
    wake_.Signal();
    thread_.join();
  }

 private:
  void Run(store::PgLeadership& leadership, int64_t epoch, absl::Duration every,
           const std::function<void(const absl::Status&)>& lost) {
    absl::Time said = absl::InfinitePast();
    while (true) {
      const absl::Status renewed = leadership.Renew(epoch);
      if (store::IsFencedOut(renewed)) {
        if (lost) lost(renewed);  // says why, and ends the process
        GetLogger("daemon")->critical("{}", std::string(renewed.message()));
        return;
      }
      if (!renewed.ok() && absl::Now() - said > kSayAgainAfter) {
        said = absl::Now();
        GetLogger("daemon")->error("cannot renew the leader's lease: {}", std::string(renewed.message()));
      }
      MutexLock lock(&mu_);
      const CondVar::Deadline next = CondVar::DeadlineIn(every);
      while (!stop_ && wake_.WaitUntil(&mu_, next)) {
      }
      if (stop_) return;
    }
  }

  Mutex mu_;
  CondVar wake_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;  // last: it starts at construction
};

}  // namespace

absl::Status RunReplica(DaemonOptions options, const ReplicaOptions& replica, const Clock& clock,
                        const ReplicaHooks& hooks) {
  auto url = store::ParseStoreUrl(options.store_url);
  if (!url.ok()) return url.status();
  const std::shared_ptr<spdlog::logger> log = GetLogger("daemon");
  const store::PgLeadership::Identity me{HolderName(), replica.advertise};
  // The schema first (made with --init, migrated by a newer gpuschedd): the
  // leadership lives in it. A database that cannot be reached yet is waited for.
  for (absl::Time said_at = absl::InfinitePast();;) {
    auto prepared = store::PgJobStore::Prepare(*url, options.init_state);
    if (prepared.ok()) break;
    if (!absl::IsUnavailable(prepared.status())) return prepared.status();
    if (absl::Now() - said_at > kSayAgainAfter) {
      said_at = absl::Now();
      log->error("cannot reach the store yet: {}", std::string(prepared.status().message()));
    }
    if (hooks.alive) hooks.alive();
    if (hooks.stop_within(replica.poll)) return absl::OkStatus();
  }
  std::unique_ptr<store::PgLeadership> leadership;
  std::unique_ptr<StandbyServer> standby;
  std::optional<int64_t> epoch;
  absl::Time said = absl::InfinitePast();
  std::string leader_said;
  // Served while a standby; the daemon serves them beside its own once active.
  std::shared_ptr<metrics::ReplicaMetrics> replica_metrics;
  std::unique_ptr<metrics::MetricsEndpoint> standby_metrics;
  if (!options.metrics_listen.empty()) replica_metrics = std::make_shared<metrics::ReplicaMetrics>();
  while (!epoch) {
    absl::Status tried = absl::OkStatus();
    if (!leadership) {
      auto opened = store::PgLeadership::Open(*url, me, replica.lease);
      if (opened.ok()) leadership = std::move(*opened);
      tried = opened.status();
    }
    if (leadership) {
      auto taken = leadership->TryTake();
      tried = taken.status();
      if (taken.ok()) epoch = *taken;
    }
    if (!tried.ok() && absl::Now() - said > kSayAgainAfter) {
      said = absl::Now();
      log->error("standby: cannot reach the store to take or watch the leadership: {}", std::string(tried.message()));
    }
    if (epoch) break;
    if (!standby) {
      auto started = StandbyServer::Start(options.listen_address, options.tls);
      if (!started.ok()) return started.status();
      standby = std::move(*started);
      if (replica_metrics) {
        replica_metrics->Standby(0);
        auto endpoint = metrics::MetricsEndpoint::Start(options.metrics_listen, {replica_metrics->registry()});
        if (!endpoint.ok()) return endpoint.status();
        standby_metrics = std::move(*endpoint);
      }
      if (hooks.ready) hooks.ready(absl::StrCat("standby on ", options.listen_address, ", store ", url->shown));
      log->info("standby replica {} on {}: another replica is active", me.holder, options.listen_address);
    }
    if (leadership) {
      if (auto leader = leadership->Current(); leader.ok()) {
        standby->SetLeader(leader->live ? leader->address : "");
        if (replica_metrics) replica_metrics->Standby(leader->epoch);
        if (leader->live && leader->address != leader_said) {
          leader_said = leader->address;
          log->info("the active replica is {} at {} (epoch {})", leader->holder, leader->address, leader->epoch);
        }
      }
    }
    if (hooks.alive) hooks.alive();
    if (hooks.stop_within(replica.poll)) return absl::OkStatus();
  }
  standby.reset();  // the ports are the leader's now
  standby_metrics.reset();
  if (replica_metrics) {
    replica_metrics->Active(*epoch);
    options.more_metrics.push_back(replica_metrics->registry());
  }
  log->info("replica {} is the active one now (leader epoch {})", me.holder, *epoch);
  options.leader_epoch = *epoch;
  auto daemon = Daemon::Start(options, clock);
  if (!daemon.ok()) {
    leadership->Release(*epoch).IgnoreError();
    return daemon.status();
  }
  {
    LeaseKeeper keeper(*leadership, *epoch, replica.lease / 4, options.on_lost_leadership);
    if (hooks.ready) {
      hooks.ready(absl::StrCat("active, serving on ", (*daemon)->address(), ", state in ", (*daemon)->db_path()));
    }
    log->info("gpuschedd serving on {} as the active replica, state in {}", (*daemon)->address(), (*daemon)->db_path());
    while (!hooks.stop_within(absl::Seconds(1))) {
    }
    (*daemon)->Shutdown();
  }
  // A standby takes over at once rather than after the lease.
  if (absl::Status released = leadership->Release(*epoch); !released.ok()) {
    log->warn("could not let the leadership go ({}): a standby takes over when the lease runs out",
              std::string(released.message()));
  }
  return absl::OkStatus();
}

}  // namespace gpusched::server
