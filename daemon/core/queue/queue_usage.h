#pragma once

#include <optional>
#include <string>

#include "absl/time/time.h"
#include "daemon/core/job_table.h"
#include "daemon/core/queue/fair_share.h"
#include "daemon/core/queue/limit_ledger.h"
#include "daemon/core/queue/queue_policy.h"

namespace gpusched::core {

// What the queues' users have used and what they hold: the fair-share usage
// (GPU time by user and account, decaying), what the placed jobs hold
// against queue and array limits, and when the usage is next due to be kept
// across a restart.
class QueueUsage {
 public:
  // `queues` must outlive this (SchedulerCore's options hold them).
  explicit QueueUsage(const QueuePolicy& queues)
      : queues_(queues), fair_share_(queues.weights.fair_share_half_life), limits_(queues) {}

  // A job placed (+1) or no longer placed (-1): what it holds counts
  // against its queue's and its array's limits.
  void Charge(const v1::Job& job, int sign) { limits_.Charge(job, sign); }
  const LimitLedger& limits() const { return limits_; }

  // Fair share up to `now`: the jobs placed held their GPUs all along (a
  // share or a MIG instance as the part of a GPU it is).
  void Advance(absl::Time now, const JobTable& jobs);
  // The users and accounts with jobs waiting: they compete for a share.
  void SetWaiting(const std::vector<absl::string_view>& users, const std::vector<absl::string_view>& accounts) {
    fair_share_.SetWaiting(users, accounts);
  }
  double FairShareFactor(const std::string& user, const std::string& account) const {
    return fair_share_.Factor(user, account);
  }

  // The usage a previous run kept, decayed from then on as if the daemon
  // had never stopped.
  void Restore(const v1::FairShareUsage& usage) { fair_share_.Restore(usage); }
  // How often the usage is kept: a restart forgets at most this much of it.
  static constexpr absl::Duration kKeepEvery = absl::Minutes(1);
  // The usage to keep when kKeepEvery has passed since it was last kept
  // and fair share weighs anything; nullopt otherwise.
  std::optional<v1::FairShareUsage> DueToKeep(absl::Time now);
  // The usage to keep at once (a daemon that is stopping).
  v1::FairShareUsage KeepNow(absl::Time now);

 private:
  const QueuePolicy& queues_;
  FairShare fair_share_;
  LimitLedger limits_;
  absl::Time kept_ = absl::InfinitePast();
};

}  // namespace gpusched::core
