#include "daemon/core/power/boot_planner.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include "absl/strings/str_cat.h"
#include "daemon/core/backfill.h"

namespace gpusched::core {
namespace {

constexpr absl::string_view kNotBooted = "powered down";

// The order resumes prefer pools in: class, then cost, then name.
std::vector<int> PoolPreference(const std::vector<PoolSpec>& pools) {
  std::vector<int> order;
  for (int p = 0; p < static_cast<int>(pools.size()); ++p) {
    if (pools[p].elastic()) order.push_back(p);
  }
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    const PoolSpec& x = pools[a];
    const PoolSpec& y = pools[b];
    if (x.pool_class != y.pool_class) return x.pool_class < y.pool_class;
    if (x.cost_per_gpu_hour != y.cost_per_gpu_hour) return x.cost_per_gpu_hour < y.cost_per_gpu_hour;
    return x.name < y.name;
  });
  return order;
}

class BootTrial {
 public:
  BootTrial(const BootInputs& in, const std::vector<BootWaiter>& waiting)
      : in_(in), trial_(in.cluster), on_(in.pools.size(), 0), preference_(PoolPreference(in.pools)) {
    for (size_t p = 0; p < in.pools.size(); ++p) on_[p] = NodesOn(in.cluster, in.pools[p]);
    budget_ = in.resume_budget;
    budget_.resize(in.pools.size(), -1);
    for (const auto& [name, slot] : in.cluster.nodes()) {
      // A booting node will take work once its agent registers: jobs placed
      // on it now wait for that boot rather than start another.
      if (slot.state != v1::NODE_STATE_POWERING_UP) continue;
      trial_.SetState(name, v1::NODE_STATE_UP, "");
      booting_.insert(name);
    }
    // A reservation binds the jobs ranked after its owner: held from the
    // owner's turn on (Try), or from the start when its owner is not among
    // the waiters (a preempting job).
    if (in.reservations != nullptr) {
      std::set<uint64_t> waiters;
      for (const BootWaiter& w : waiting) waiters.insert(w.job_id);
      for (const PlannedReservation& r : *in.reservations) {
        if (waiters.contains(r.reservation.job_id)) {
          held_at_turn_.emplace(r.reservation.job_id, &r.reservation);
        } else {
          holds_.push_back(std::make_unique<ReservationHold>(trial_, r.reservation));
        }
      }
    }
  }

  void Minimums(BootPlan& plan) {
    for (size_t p = 0; p < in_.pools.size(); ++p) {
      const PoolSpec& pool = in_.pools[p];
      if (!pool.elastic() || on_[p] >= pool.min_nodes) continue;
      GangBoot boot;
      for (const std::string& name : pool.nodes) {
        if (on_[p] >= pool.min_nodes) break;
        const NodeSlot* slot = trial_.Find(name);
        if (slot == nullptr || slot->state != v1::NODE_STATE_POWERED_DOWN) continue;
        boot.to_resume.push_back(name);
        ++on_[p];
        Enable(name);
      }
      boot.waits_for = boot.to_resume;
      if (!boot.to_resume.empty()) plan.gangs.push_back(std::move(boot));
    }
  }

  void Try(const BootWaiter& waiter, BootPlan& plan) {
    const bool placed = TryPlace(waiter, plan);
    auto own = held_at_turn_.find(waiter.job_id);
    if (own == held_at_turn_.end()) return;
    // Placed in the trial (on its reserved GPUs or on nodes it boots), it
    // needs the reservation no more. Else the jobs behind it keep off it.
    if (!placed) holds_.push_back(std::make_unique<ReservationHold>(trial_, *own->second));
    held_at_turn_.erase(own);
  }

 private:
  // Whether the trial placed it (on what runs, or on nodes it boots).
  bool TryPlace(const BootWaiter& waiter, BootPlan& plan) {
    PlacementResult placed = in_.policy.Place(trial_, waiter.request);
    if (placed.placed()) {
      // Fits on what runs or boots already: it waits for those boots, or for
      // the order of the queue, and boots nothing more.
      GangBoot boot{waiter.job_id, Booting(placed.allocation()), {}};
      Take(waiter.job_id, placed.allocation());
      if (!boot.waits_for.empty()) plan.gangs.push_back(std::move(boot));
      return true;
    }
    std::vector<std::string> enabled;
    for (int p : preference_) {
      for (const std::string& name : in_.pools[p].nodes) {
        const NodeSlot* slot = trial_.Find(name);
        if (slot == nullptr || slot->state != v1::NODE_STATE_POWERED_DOWN) continue;
        Enable(name);
        enabled.push_back(name);
      }
      placed = in_.policy.Place(trial_, waiter.request);
      if (placed.placed()) break;
    }
    if (!placed.placed()) {
      Disable(enabled);
      return false;
    }
    std::set<std::string> used;
    for (const auto& part : placed.allocation().nodes()) used.insert(part.node());
    std::vector<std::string> resume;
    std::vector<int> per_pool(in_.pools.size(), 0);
    for (const std::string& name : enabled) {
      if (!used.contains(name)) continue;
      resume.push_back(name);
      ++per_pool[in_.pool_of.at(name)];
    }
    for (size_t p = 0; p < in_.pools.size(); ++p) {
      if (per_pool[p] == 0) continue;
      const PoolSpec& pool = in_.pools[p];
      std::string why;
      if (on_[p] + per_pool[p] > pool.max_nodes) {
        why = absl::StrCat("pool ", pool.name, " would need ", per_pool[p], " more node(s) but has ", on_[p],
                           " of its max_nodes ", pool.max_nodes, " on");
      } else if (budget_[p] >= 0 && per_pool[p] > budget_[p] &&
                 !(in_.resumed_none_lately[p] && budget_[p] == pool.resumes_per_minute)) {
        why = absl::StrCat("pool ", pool.name, " resumes at most ", pool.resumes_per_minute,
                           " node(s) a minute; this gang needs ", per_pool[p], " at once");
      }
      if (!why.empty()) {
        plan.refused.emplace_back(waiter.job_id, why);
        Disable(enabled);
        return false;
      }
    }
    for (size_t p = 0; p < in_.pools.size(); ++p) {
      on_[p] += per_pool[p];
      if (budget_[p] >= 0) budget_[p] = std::max(0, budget_[p] - per_pool[p]);
    }
    std::vector<std::string> unused;
    for (const std::string& name : enabled) {
      if (!used.contains(name)) unused.push_back(name);
    }
    Disable(unused);
    for (const std::string& name : resume) booting_.insert(name);
    GangBoot boot{waiter.job_id, Booting(placed.allocation()), std::move(resume)};
    Take(waiter.job_id, placed.allocation());
    plan.gangs.push_back(std::move(boot));
    return true;
  }

  std::vector<std::string> Booting(const v1::Allocation& allocation) const {
    std::vector<std::string> out;
    for (const auto& part : allocation.nodes()) {
      if (booting_.contains(part.node())) out.push_back(part.node());
    }
    return out;
  }
  void Take(uint64_t job_id, const v1::Allocation& allocation) {
    // The trial's own accounting: what later waiters cannot count on.
    trial_.Allocate(job_id, allocation).IgnoreError();
  }
  void Enable(const std::string& name) { trial_.SetState(name, v1::NODE_STATE_UP, ""); }
  void Disable(const std::vector<std::string>& names) {
    for (const std::string& name : names) trial_.SetState(name, v1::NODE_STATE_POWERED_DOWN, std::string(kNotBooted));
  }

  const BootInputs& in_;
  ClusterState trial_;
  std::vector<int> on_;
  std::vector<int> budget_;
  const std::vector<int> preference_;  // PoolPreference
  std::set<std::string> booting_;
  // The pass's reservations: held in the trial, or to be held once their
  // owner has had its turn.
  std::vector<std::unique_ptr<ReservationHold>> holds_;
  std::map<uint64_t, const Reservation*> held_at_turn_;
};

}  // namespace

int NodesOn(const ClusterState& cluster, const PoolSpec& pool) {
  int on = 0;
  for (const std::string& name : pool.nodes) {
    const NodeSlot* slot = cluster.Find(name);
    if (slot != nullptr && slot->state != v1::NODE_STATE_POWERED_DOWN && slot->state != v1::NODE_STATE_DOWN) ++on;
  }
  return on;
}

BootPlan PlanBoots(const BootInputs& in, const std::vector<BootWaiter>& waiting) {
  BootPlan plan;
  bool below_minimum = false;
  for (const PoolSpec& pool : in.pools) below_minimum |= pool.elastic() && NodesOn(in.cluster, pool) < pool.min_nodes;
  // The trial copies the cluster: not made when it has nothing to decide.
  if (waiting.empty() && !below_minimum) return plan;
  BootTrial trial(in, waiting);
  trial.Minimums(plan);
  size_t tried = 0;
  for (const BootWaiter& waiter : waiting) {
    if (tried++ >= in.max_waiters) break;
    trial.Try(waiter, plan);
  }
  return plan;
}

}  // namespace gpusched::core
