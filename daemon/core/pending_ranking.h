#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "daemon/core/job_table.h"
#include "daemon/core/queue/priority.h"
#include "daemon/core/queue/queue_usage.h"
#include "daemon/core/queue/runtime_history.h"

namespace gpusched::core {

// The pending jobs a pass looks at: `order`, in the order the pass considers
// them; `throttled`, the array tasks that may not start this pass because of
// their array's limit; `held`, the held jobs whose rows do not say so yet.
// The order leaves the last two out, so that they take no place in
// queue_depth.
struct Ranked {
  std::vector<ActiveJob*> order, throttled, held;
};

// What a ranking is made against.
struct RankInputs {
  absl::Time now;
  const QueuePolicy* queues = nullptr;
  size_t queue_depth = 0;
  // A gang larger than any node that has waited its starvation bound
  // (StarvationBound of this, end_forecast.h) is due: ahead of every job
  // that is not, oldest first.
  absl::Duration head_blocks_after;
  int64_t cluster_gpus = 0;
  int64_t largest_node_gpus = 0;
  const RuntimeHistory* history = nullptr;
  QueueUsage* usage = nullptr;  // its waiting parties are set here
};

// The pending jobs that are not held, kept in rank order between passes, so
// that a pass costs what changed plus the jobs it looks at, not the whole
// queue (issue 21: a submit was ranking 10,000 jobs).
//
// Scores are taken at one reference time, for every job alike, and taken
// again (the whole queue) when the clock has moved `refresh_every` past it
// or an input of every score changed: the cluster's size or largest node,
// the run-time history (a job ended), the set of parties competing in fair
// share. In between, a job that joins the queue is scored as of the
// reference time, as its elders were, and a job that leaves is taken out.
// What moves with the clock alone (age, decaying usage) moves slowly; the
// one rule on time that must not wait, a large gang's wait past its
// starvation bound, is checked on every pass. Slurm recomputes priorities
// every PriorityCalcPeriod (5 minutes) for the same reason.
class PendingRanking {
 public:
  using Scores = absl::flat_hash_map<uint64_t, PriorityScore>;
  // What the scores' readers need since they last asked: all of them when
  // the queue was scored again, else the jobs scored or unscored since.
  struct ScoreUpdates {
    std::shared_ptr<const Scores> all;  // null: only `changed`
    std::vector<std::pair<uint64_t, std::optional<PriorityScore>>> changed;
  };

  explicit PendingRanking(absl::Duration refresh_every) : refresh_every_(refresh_every) {}

  // Follows `jobs`' queue changes (JobTable::TakeQueueChanges) and ranks.
  // `over_limit(job)` says whether an array task may not start this pass;
  // it is asked in rank order, once per job looked at.
  Ranked Rank(JobTable& jobs, const RankInputs& in, absl::FunctionRef<bool(const v1::Job&)> over_limit);

  std::optional<PriorityScore> ScoreOf(uint64_t job_id) const;
  ScoreUpdates TakeScoreUpdates();
  // How many times the whole queue was scored, and when last (for tests and
  // benchmarks).
  uint64_t rescores() const { return rescores_; }
  absl::Time scored_at() const { return scored_at_; }

 private:
  struct Entry {
    double total;
    QueueKey key;
    ActiveJob* job;
    bool gang;     // more GPUs than the largest node has: may become due
    bool limited;  // an array task with a running limit
    int64_t gpus;  // its bound's size, kept for Erase
    // Its queue has demoted it (Demoted, attained_service.h): it ranks after
    // every job that is not, and is never due. Pending, a job's service
    // changes only when it is requeued, and so joins the queue again.
    bool demoted;
  };
  struct ByRank {
    bool operator()(const Entry& a, const Entry& b) const {
      if (a.demoted != b.demoted) return b.demoted;
      return a.total > b.total || (a.total == b.total && a.key < b.key);
    }
  };
  struct BySubmit {
    bool operator()(const QueueKey& a, const QueueKey& b) const {
      return a.submit_ns < b.submit_ns || (a.submit_ns == b.submit_ns && a < b);
    }
  };

  // An entry and what is needed to take it out after its job is gone.
  struct Member {
    Entry entry;
    std::string user, account;  // the fair-share parties it counts for
  };
  // By user and account; the views are into the jobs' specs, for one refresh.
  using FairShareCache = absl::flat_hash_map<std::pair<absl::string_view, absl::string_view>, double>;

  void FollowQueue(JobTable& jobs, const RankInputs& in);
  void Insert(ActiveJob* a, const RankInputs& in);
  void Erase(uint64_t id);
  bool RefreshDue(const RankInputs& in) const;
  void Refresh(const RankInputs& in);
  // Scores the entry's job as of scored_at_ and sets its total and gang flag;
  // `fair_share` caches the factors during a refresh (null: one job).
  void Score(Entry& e, const RankInputs& in, FairShareCache* fair_share);
  void CountParty(const std::string& user, const std::string& account, int delta);
  static bool Due(const Entry& e, const RankInputs& in);
  void NoteChanged(uint64_t id, std::optional<PriorityScore> score);

  absl::Duration refresh_every_;
  // The reference the scores were taken against.
  absl::Time scored_at_ = absl::InfinitePast();
  int64_t scored_cluster_gpus_ = -1;
  int64_t scored_largest_node_ = -1;
  uint64_t scored_history_ = 0;
  bool weighted_ = false;
  bool parties_changed_ = false;
  uint64_t rescores_ = 0;

  std::set<Entry, ByRank> ranked_;
  absl::flat_hash_map<uint64_t, Member> members_;
  // The entries with gang set, by size: of one size, those due are a prefix.
  std::map<int64_t, std::set<QueueKey, BySubmit>> gangs_;
  size_t limited_ = 0;              // entries with limited set
  std::set<uint64_t> untold_held_;  // held, maybe not yet told so
  // Jobs waiting (not held) per user and per account: the parties.
  absl::flat_hash_map<std::string, int64_t> waiting_users_, waiting_accounts_;

  Scores scores_;
  ScoreUpdates updates_;
};

}  // namespace gpusched::core
