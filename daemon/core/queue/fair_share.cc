#include "daemon/core/queue/fair_share.h"

#include <cmath>

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
  users_.CountParties();
  accounts_.CountParties();
}

void FairShare::SetWaiting(const std::vector<absl::string_view>& users,
                           const std::vector<absl::string_view>& accounts) {
  for (auto [ledger, waiting] : {std::pair{&users_, &users}, std::pair{&accounts_, &accounts}}) {
    ledger->waiting.clear();
    for (absl::string_view name : *waiting) ledger->waiting.emplace_back(name);
    ledger->CountParties();
  }
}

void FairShare::Ledger::CountParties() {
  parties = usage.size();
  for (const std::string& name : waiting) {
    if (!usage.contains(name)) ++parties;
  }
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
    ledger->CountParties();
  }
}

double FairShare::UserUsage(const std::string& user) const {
  auto it = users_.usage.find(user);
  return it == users_.usage.end() ? 0 : it->second;
}

}  // namespace gpusched::core
