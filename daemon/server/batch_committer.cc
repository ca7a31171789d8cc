#include "daemon/server/batch_committer.h"

#include <chrono>

#include "absl/time/clock.h"
#include "common/io/logging/logging.h"
#include "common/job_states.h"
#include "common/threads/mutex.h"
#include "daemon/store/fencing.h"

namespace gpusched::server {
namespace {

constexpr absl::Duration kRetryEvery = absl::Seconds(1);
constexpr absl::Duration kFailureReport = absl::Minutes(1);  // one error line per

}  // namespace

BatchCommitter::~BatchCommitter() { Stop(); }

void BatchCommitter::Start() {
  commit_thread_ = std::thread([this] { RunCommits(); });
  release_thread_ = std::thread([this] { RunReleases(); });
}

void BatchCommitter::Stop() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  wake_.Signal();
  if (commit_thread_.joinable()) commit_thread_.join();
  if (release_thread_.joinable()) release_thread_.join();
}

void BatchCommitter::StopRetrying() {
  {
    MutexLock lock(&mu_);
    stop_retrying_ = true;
  }
  wake_.SignalAll();
}

void BatchCommitter::Hand(CommittedBatch batch) {
  {
    MutexLock lock(&mu_);
    while (queue_.size() >= kMaxQueuedBatches) space_.Wait(&mu_);
    queue_.push_back(std::move(batch));
  }
  wake_.Signal();
}

void BatchCommitter::RunCommits() {
  while (true) {
    std::vector<CommittedBatch> group;
    {
      MutexLock lock(&mu_);
      while (queue_.empty() && !stopping_) wake_.Wait(&mu_);
      if (queue_.empty()) {
        commits_done_ = true;
        released_wake_.Signal();
        return;
      }
      while (!queue_.empty()) {
        group.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
    }
    space_.SignalAll();
    if (!CommitGroup(group)) continue;
    bool release_here = false;
    {
      MutexLock lock(&mu_);
      // Nothing waits to be committed and nothing is being released: this
      // thread releases the group itself, and a lone submit costs no
      // wake-up of the release thread. Still in commit order: only this
      // thread adds groups, and the release thread has none left.
      release_here = queue_.empty() && committed_.empty() && !releasing_;
      if (!release_here) {
        while (committed_.size() >= kMaxQueuedBatches) space_.Wait(&mu_);
        committed_.push_back(std::move(group));
      }
    }
    if (release_here) {
      Release(group);
    } else {
      released_wake_.Signal();
    }
  }
}

void BatchCommitter::RunReleases() {
  while (true) {
    std::vector<CommittedBatch> group;
    {
      MutexLock lock(&mu_);
      while (committed_.empty() && !commits_done_) released_wake_.Wait(&mu_);
      if (committed_.empty()) return;
      group = std::move(committed_.front());
      committed_.pop_front();
      releasing_ = true;
    }
    space_.SignalAll();
    Release(group);
    MutexLock lock(&mu_);
    releasing_ = false;
  }
}

bool BatchCommitter::CommitGroup(std::vector<CommittedBatch>& group) {
  store::StoreBatch rows;
  std::map<uint64_t, const v1::Job*> jobs;           // a later batch's version of a job wins
  std::map<uint64_t, const JobArrayRecord*> arrays;  // and of an array's record
  std::map<std::string, const v1::Node*> nodes;
  for (const CommittedBatch& batch : group) {
    for (const auto& [id, job] : batch.jobs) jobs[id] = &job;
    for (const auto& [id, record] : batch.arrays) arrays[id] = &record;
    for (const auto& [name, node] : batch.nodes) nodes[name] = &node;
    if (batch.fair_share) rows.fair_share = batch.fair_share;  // the latest wins
    rows.events.insert(rows.events.end(), batch.events.begin(), batch.events.end());
  }
  for (const auto& [id, job] : jobs) rows.jobs.push_back(*job);
  for (const auto& [id, record] : arrays) rows.arrays.push_back(*record);
  for (const auto& [name, node] : nodes) rows.nodes.push_back(*node);

  static const std::shared_ptr<spdlog::logger> log = GetLogger("daemon");
  const absl::Time first_try = absl::Now();
  absl::Time last_said = absl::InfinitePast();
  while (!gave_up_) {
    const absl::Status committed = store_.Commit(rows);
    if (store::IsFencedOut(committed)) {
      fenced_ = true;
      if (on_fenced_) on_fenced_(committed);  // says why, and ends the process
      log->critical("{}", std::string(committed.message()));
      break;
    }
    if (committed.ok()) {
      if (health_.CommitSucceeded()) {
        log->warn("scheduler state written again after {}; accepting changes again",
                  absl::FormatDuration(absl::Trunc(absl::Now() - first_try, absl::Seconds(1))));
      }
      return true;
    }
    health_.CommitFailed(committed);
    if (absl::Now() - last_said >= kFailureReport) {
      last_said = absl::Now();
      log->error("cannot write scheduler state ({}): refusing new changes, serving reads, retrying every {}",
                 std::string(committed.message()), absl::FormatDuration(kRetryEvery));
    }
    MutexLock lock(&mu_);
    if (stopping_ || stop_retrying_) break;  // tried once more since the stop began
    const CondVar::Deadline retry_at = CondVar::DeadlineIn(kRetryEvery);
    while (!stopping_ && !stop_retrying_ && wake_.WaitUntil(&mu_, retry_at)) {
    }
  }
  // Stopping with the store refusing, or fenced out: what memory holds
  // beyond the disk is lost with the process, and was never acknowledged.
  gave_up_ = true;
  log->error("{} {} batch(es) of changes not written; they were not acknowledged",
             fenced_ ? "another replica leads now:" : "stopping with", group.size());
  const absl::Status failed = absl::UnavailableError(fenced_ ? "this gpuschedd is no longer the active replica"
                                                             : "gpuschedd stopped before it could persist the change");
  for (const CommittedBatch& batch : group) {
    for (const AfterCommit& done : batch.after_commit) done(failed, batch);
  }
  return false;
}

void BatchCommitter::Release(std::vector<CommittedBatch>& group) {
  // One key=value line per durable change, for the journal and log search:
  // `journalctl -u gpuschedd | grep job=12`.
  static const std::shared_ptr<spdlog::logger> log = GetLogger("state");
  for (const CommittedBatch& batch : group) {
    for (const v1::JobEvent& event : batch.events) {
      log->info("job={} state={} reason=\"{}\"", event.job_id(), std::string(StateName(event.state())), event.reason());
    }
    for (const auto& [name, node] : batch.nodes) {
      log->info("node={} state={} drained={} reason=\"{}\"", name, std::string(NodeStateName(node.state())),
                node.drain_reason().empty() ? "no" : "yes",
                node.drain_reason().empty() ? node.reason() : node.drain_reason());
    }
  }
  for (const CommittedBatch& batch : group) {
    for (const auto& [channel, message] : batch.messages) channel->Send(message);
    hub_.Publish(batch.events);
    for (const AfterCommit& done : batch.after_commit) done(absl::OkStatus(), batch);
  }
}

}  // namespace gpusched::server
