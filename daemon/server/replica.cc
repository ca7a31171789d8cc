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

// An error line when a try against the database fails, at most one per
// 30 s: one line per outage, not one per try.
class OutageLog {
 public:
  explicit OutageLog(std::string what) : what_(std::move(what)) {}
  void Failed(const absl::Status& why) {
    if (absl::Now() - said_ < absl::Seconds(30)) return;
    said_ = absl::Now();
    GetLogger("daemon")->error("{}: {}", what_, std::string(why.message()));
  }

 private:
  const std::string what_;
  absl::Time said_ = absl::InfinitePast();
};

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
    OutageLog outage("cannot renew the leader's lease");
    while (true) {
      const absl::Status renewed = leadership.Renew(epoch);
      if (store::IsFencedOut(renewed)) {
        if (lost) lost(renewed);  // says why, and ends the process
        GetLogger("daemon")->critical("{}", std::string(renewed.message()));
        return;
      }
      if (!renewed.ok()) outage.Failed(renewed);
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

// One run of a replica: the schema, then standing by, then leading.
class ReplicaRun {
 public:
  ReplicaRun(const store::StoreUrl& url, const ReplicaOptions& replica, const ReplicaHooks& hooks)
      : url_(url), replica_(replica), hooks_(hooks), me_{HolderName(), replica.advertise} {}

  // Makes or migrates the schema (the leadership lives in it), waiting for
  // a database that cannot be reached yet. False: told to stop meanwhile.
  absl::StatusOr<bool> PrepareSchema(bool create) {
    OutageLog outage("cannot reach the store yet");
    while (true) {
      auto prepared = store::PgJobStore::Prepare(url_, create);
      if (prepared.ok()) return true;
      if (!absl::IsUnavailable(prepared.status())) return prepared.status();
      outage.Failed(prepared.status());
      if (StoppedWhileWaiting()) return false;
    }
  }

  // Serves as a standby until this replica takes the leadership: its epoch,
  // or nullopt when told to stop first.
  absl::StatusOr<std::optional<int64_t>> StandBy(const DaemonOptions& options) {
    std::unique_ptr<StandbyServer> standby;
    std::unique_ptr<metrics::MetricsEndpoint> standby_metrics;
    OutageLog outage("standby: cannot reach the store to take or watch the leadership");
    std::string leader_said;
    while (true) {
      absl::Status tried = absl::OkStatus();
      if (!leadership_) {
        auto opened = store::PgLeadership::Open(url_, me_, replica_.lease);
        if (opened.ok()) leadership_ = std::move(*opened);
        tried = opened.status();
      }
      if (leadership_) {
        auto taken = leadership_->TryTake();
        if (taken.ok() && taken->has_value()) return *taken;  // the standby's ports close with it
        tried = taken.status();
      }
      if (!tried.ok()) outage.Failed(tried);
      if (!standby) {
        auto started = StandbyServer::Start(options.listen_address, options.tls);
        if (!started.ok()) return started.status();
        standby = std::move(*started);
        if (metrics_) {
          auto endpoint = metrics::MetricsEndpoint::Start(options.metrics_listen, {metrics_->registry()});
          if (!endpoint.ok()) return endpoint.status();
          standby_metrics = std::move(*endpoint);
        }
        if (hooks_.ready) hooks_.ready(absl::StrCat("standby on ", options.listen_address, ", store ", url_.shown));
        log_->info("standby replica {} on {}: another replica is active", me_.holder, options.listen_address);
      }
      if (auto leader = leadership_ ? leadership_->Current() : absl::UnavailableError(""); leader.ok()) {
        standby->SetLeader(leader->live ? leader->address : "");
        if (metrics_) metrics_->Standby(leader->epoch);
        if (leader->live && leader->address != leader_said) {
          leader_said = leader->address;
          log_->info("the active replica is {} at {} (epoch {})", leader->holder, leader->address, leader->epoch);
        }
      }
      if (StoppedWhileWaiting()) return std::optional<int64_t>();
    }
  }

  // Runs the daemon as the active replica of `epoch` until told to stop,
  // then lets the leadership go so that a standby takes over at once.
  absl::Status Lead(DaemonOptions options, int64_t epoch, const Clock& clock) {
    log_->info("replica {} is the active one now (leader epoch {})", me_.holder, epoch);
    options.leader_epoch = epoch;
    if (metrics_) {
      metrics_->Active(epoch);
      options.more_metrics.push_back(metrics_->registry());
    }
    {
      // Renewing from now on: recovering a large state may take longer than the lease.
      LeaseKeeper keeper(*leadership_, epoch, replica_.lease / 4, options.on_lost_leadership);
      auto daemon = Daemon::Start(options, clock);
      if (!daemon.ok()) {
        leadership_->Release(epoch).IgnoreError();
        return daemon.status();
      }
      if (hooks_.ready) {
        hooks_.ready(absl::StrCat("active, serving on ", (*daemon)->address(), ", state in ", (*daemon)->db_path()));
      }
      log_->info("gpuschedd serving on {} as the active replica, state in {}", (*daemon)->address(),
                 (*daemon)->db_path());
      while (!hooks_.stop_within(absl::Seconds(1))) {
      }
      (*daemon)->Shutdown();
    }
    if (absl::Status released = leadership_->Release(epoch); !released.ok()) {
      log_->warn("could not let the leadership go ({}): a standby takes over when the lease runs out",
                 std::string(released.message()));
    }
    return absl::OkStatus();
  }

  void MeasureWith(std::shared_ptr<metrics::ReplicaMetrics> metrics) { metrics_ = std::move(metrics); }

 private:
  // Waits one poll, alive for the watchdog; true when told to stop meanwhile.
  bool StoppedWhileWaiting() {
    if (hooks_.alive) hooks_.alive();
    return hooks_.stop_within(replica_.poll);
  }

  const store::StoreUrl url_;
  const ReplicaOptions replica_;
  const ReplicaHooks& hooks_;
  const store::PgLeadership::Identity me_;
  const std::shared_ptr<spdlog::logger> log_ = GetLogger("daemon");
  std::unique_ptr<store::PgLeadership> leadership_;
  std::shared_ptr<metrics::ReplicaMetrics> metrics_;  // null without metrics_listen
};

}  // namespace

absl::Status RunReplica(DaemonOptions options, const ReplicaOptions& replica, const Clock& clock,
                        const ReplicaHooks& hooks) {
  auto url = store::ParseStoreUrl(options.store_url);
  if (!url.ok()) return url.status();
  ReplicaRun run(*url, replica, hooks);
  if (!options.metrics_listen.empty()) run.MeasureWith(std::make_shared<metrics::ReplicaMetrics>());
  auto prepared = run.PrepareSchema(options.init_state);
  if (!prepared.ok() || !*prepared) return prepared.status();
  auto epoch = run.StandBy(options);
  if (!epoch.ok() || !epoch->has_value()) return epoch.status();
  return run.Lead(std::move(options), **epoch, clock);
}

}  // namespace gpusched::server
