#include "daemon/core/queue/fair_share.h"

#include <cmath>

#include "absl/container/flat_hash_set.h"
#include "common/proto_time.h"

namespace gpusched::core {
namespace {

// Below this a party's decayed usage is forgotten: keeps the ledger from
// growing with every user who ever ran anything.
constexpr double kForgetBelowGpuSeconds = 1e-3;

}  // namespace

void FairShare::Advance(absl::Time now, const std::vector<Holding>& running) {
  if (last_ == absl::InfinitePast() || now <= last_) {
    last_ = std::max(last_, now);
    return;
  }
  const double dt = absl::ToDoubleSeconds(now - last_);
  last_ = now;
  const double decay = half_life_ > absl::ZeroDuration() ? std::exp2(-dt / absl::ToDoubleSeconds(half_life_)) : 0;
  for (Ledger* ledger : {&users_, &accounts_}) {
    ledger->total = 0;
    for (auto it = ledger->usage.begin(); it != ledger->usage.end();) {
      it->second *= decay;
      if (it->second < kForgetBelowGpuSeconds) {
        ledger->usage.erase(it++);
      } else {
        ledger->total += it->second;
        ++it;
      }
    }
  }
  for (const Holding& h : running) {
    const double used = h.gpus * dt;
    if (used <= 0) continue;
    users_.usage[*h.user] += used;
    users_.total += used;
    accounts_.usage[AccountOf(*h.user, *h.account)] += used;
    accounts_.total += used;
  }
}

void FairShare::SetWaiting(const std::vector<Holding>& waiting) {
  // Views into the ledgers and the jobs, alive for this call only.
  absl::flat_hash_set<absl::string_view> users, accounts;
  for (const auto& [name, used] : users_.usage) users.insert(name);
  for (const auto& [name, used] : accounts_.usage) accounts.insert(name);
  for (const Holding& h : waiting) {
    users.insert(*h.user);
    accounts.insert(AccountOf(*h.user, *h.account));
  }
  users_.parties = users.size();
  accounts_.parties = accounts.size();
}

double FairShare::Ledger::Factor(const std::string& who) const {
  if (total <= 0 || parties == 0) return 1;
  auto it = usage.find(who);
  if (it == usage.end()) return 1;
  const double share = 1.0 / static_cast<double>(parties);
  return std::exp2(-(it->second / total) / share);
}

double FairShare::Factor(const std::string& user, const std::string& account) const {
  return (users_.Factor(user) + accounts_.Factor(AccountOf(user, account))) / 2;
}

v1::FairShareUsage FairShare::Snapshot() const {
  v1::FairShareUsage out;
  if (last_ != absl::InfinitePast()) *out.mutable_at() = ToProtoTime(last_);
  for (const auto& [name, used] : users_.usage) (*out.mutable_users())[name] = used;
  for (const auto& [name, used] : accounts_.usage) (*out.mutable_accounts())[name] = used;
  return out;
}

void FairShare::Restore(const v1::FairShareUsage& usage) {
  last_ = usage.has_at() ? FromProtoTime(usage.at()) : absl::InfinitePast();
  for (auto [ledger, from] : {std::pair{&users_, &usage.users()}, std::pair{&accounts_, &usage.accounts()}}) {
    ledger->usage.clear();
    ledger->total = 0;
    for (const auto& [name, used] : *from) {
      // A stored figure that is not a usage at all is dropped, not believed.
      if (!(used >= kForgetBelowGpuSeconds) || !std::isfinite(used)) continue;
      ledger->usage[name] = used;
    }
    // Summed in name order, not in the stored map's (hashed) order.
    for (const auto& [name, used] : ledger->usage) ledger->total += used;
  }
}

double FairShare::UserUsage(const std::string& user) const {
  auto it = users_.usage.find(user);
  return it == users_.usage.end() ? 0 : it->second;
}

}  // namespace gpusched::core
