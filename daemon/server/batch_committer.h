#pragma once

#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "common/threads/mutex.h"
#include "daemon/server/committed_batch.h"
#include "daemon/server/job_event_hub.h"
#include "daemon/server/store_health.h"
#include "daemon/store/job_store.h"

namespace gpusched::server {

// The store writer of DESIGN.md: commits the scheduler thread's batches in
// order and only then lets their replies, agent messages and watch events
// out. Batches that queue up while a commit is on disk are written together
// in one transaction, so the scheduler thread never waits for an fsync and a
// burst of submits costs few of them. Releasing (serializing replies, writing
// to sockets) runs on a thread of its own, in commit order, so that the next
// commit need not wait for it; when no commit waits, the commit thread
// releases its group itself, sparing a lone change a thread hand-off.
//
// A commit that fails (a full disk) is retried until it succeeds: the
// scheduler's memory is then ahead of the disk, but nothing of it has left
// the daemon, and the disk always holds a prefix of what memory went
// through. `health` says so meanwhile, so that no new change is accepted.
// Stopping while it fails gives the waiting batches up, unacknowledged.
//
// A commit fenced out (another replica leads now: store/fencing.h) is not
// retried: `on_fenced` is told, and the group is given up unacknowledged.
// Once a group is given up, so is every group after it, even one the store
// would take: each was computed on top of the lost one, and the disk must
// still hold a prefix of what memory went through.
class BatchCommitter {
 public:
  using OnFenced = std::function<void(const absl::Status&)>;
  BatchCommitter(store::JobStore& store, JobEventHub& hub, StoreHealth& health, OnFenced on_fenced = nullptr)
      : store_(store), hub_(hub), health_(health), on_fenced_(std::move(on_fenced)) {}
  ~BatchCommitter();

  void Start();
  void Stop();  // commits what is queued, then joins
  // The first step of a stop: a commit that fails is given up instead of
  // retried (its callers told, and every group after it given up too), so
  // that the calls waiting on it end and the server can stop; commits that
  // succeed go on as before.
  void StopRetrying();
  // Blocks only when far behind, so that memory stays bounded under overload.
  void Hand(CommittedBatch batch);

 private:
  static constexpr size_t kMaxQueuedBatches = 256;

  void RunCommits();
  void RunReleases();
  // False when it gave up (stopping while the store refuses writes): the
  // group's callers were told, and nothing of it may be released.
  bool CommitGroup(std::vector<CommittedBatch>& group);
  void Release(std::vector<CommittedBatch>& group);

  store::JobStore& store_;
  JobEventHub& hub_;
  StoreHealth& health_;
  const OnFenced on_fenced_;
  bool fenced_ = false;   // the commit thread's own
  bool gave_up_ = false;  // the same: a group was given up
  Mutex mu_;
  CondVar wake_;
  CondVar space_;
  CondVar released_wake_;
  std::deque<CommittedBatch> queue_ ABSL_GUARDED_BY(mu_);
  std::deque<std::vector<CommittedBatch>> committed_ ABSL_GUARDED_BY(mu_);  // durable, waiting to be released
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_retrying_ ABSL_GUARDED_BY(mu_) = false;
  bool commits_done_ ABSL_GUARDED_BY(mu_) = false;
  bool releasing_ ABSL_GUARDED_BY(mu_) = false;  // the release thread is in Release
  std::thread commit_thread_;
  std::thread release_thread_;
};

}  // namespace gpusched::server
