#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "gpusched/v1/types.pb.h"

namespace gpusched::core {

// GPU usage per user and per account, decaying with a half-life, and the
// fair-share factor it gives (PriorityFactors.fair_share). Pure: the caller
// says what ran and when.
//
// The factor is Slurm's classic 2^(-usage/share), computed once for the user
// and once for the account and averaged: usage is the party's fraction of
// all decayed usage, share is an equal split among the parties that used GPUs
// lately or have jobs waiting. Nothing used lately gives 1; exactly one's
// share gives 0.5; twice it 0.25.
class FairShare {
 public:
  struct Holding {
    const std::string* user;
    const std::string* account;
    // GPUs held: a job with a share of its GPUs holds that fraction of each.
    double gpus;
  };

  explicit FairShare(absl::Duration half_life) : half_life_(half_life) {}

  // Decays what was used before by the time since the last call, then
  // charges `running` for that time (they held those GPUs all along).
  void Advance(absl::Time now, const std::vector<Holding>& running);

  // Who is competing: the users and accounts with jobs waiting, held ones
  // aside (usage alone counts too).
  void SetWaiting(const std::vector<absl::string_view>& users, const std::vector<absl::string_view>& accounts);

  double Factor(const std::string& user, const std::string& account) const;
  // What a restart needs to go on where this left off, as of the last
  // Advance; and taking it back (Advance then decays it from `at`).
  v1::FairShareUsage Snapshot() const;
  void Restore(const v1::FairShareUsage& usage);
  // Decayed GPU-seconds.
  double UserUsage(const std::string& user) const;

 private:
  struct Ledger {
    // Decayed GPU-seconds, in name order: the total is summed in one order
    // in every process, so that a replay gives the same priorities bit for
    // bit (a hash map's order changes with its per-process seed).
    std::map<std::string, double, std::less<>> usage;
    double total = 0;
    std::vector<std::string> waiting;  // with jobs waiting
    size_t parties = 0;                // with usage or jobs waiting
    double Factor(const std::string& who) const;
    void CountParties();
  };

  absl::Duration half_life_;
  absl::Time last_ = absl::InfinitePast();
  Ledger users_;
  Ledger accounts_;
};

// The account a job is charged to: its own, else its user's name.
inline const std::string& AccountOf(const std::string& user, const std::string& account) {
  return account.empty() ? user : account;
}

}  // namespace gpusched::core
