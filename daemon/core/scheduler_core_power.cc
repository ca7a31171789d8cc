// SchedulerCore's elastic pools: nodes known before they boot, resumed for
// the jobs that need them and suspended when idle (power/boot_planner.h,
// power/suspend_planner.h decide; this file keeps the node states).
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/job_states.h"
#include "common/net/hostlist.h"
#include "common/time_limit.h"
#include "daemon/core/power/boot_planner.h"
#include "daemon/core/power/suspend_planner.h"
#include "daemon/core/scheduler_core.h"

namespace gpusched::core {
namespace {

constexpr absl::Duration kRateWindow = absl::Minutes(1);

std::string Seconds(absl::Duration d) { return absl::StrCat(absl::ToInt64Seconds(d), " s"); }

// Drops what is older than the rate window; how many nodes remain.
int InWindow(std::vector<absl::Time>& times, absl::Time now) {
  std::erase_if(times, [&](absl::Time t) { return now - t >= kRateWindow; });
  return static_cast<int>(times.size());
}

int Budget(int per_minute, int used) { return per_minute <= 0 ? -1 : std::max(0, per_minute - used); }

// Waits that more nodes would end: not held, throttled, waiting for other
// jobs, for a queue limit or for a preemption.
bool MoreNodesWouldHelp(WaitCause cause) {
  switch (cause) {
    case WaitCause::kHeld:
    case WaitCause::kArrayLimit:
    case WaitCause::kDependency:
    case WaitCause::kQueueLimit:
    case WaitCause::kPreempting:
    case WaitCause::kInternalError: return false;
    default: return true;
  }
}

}  // namespace

const PoolSpec* SchedulerCore::PoolOf(const std::string& node) const {
  auto it = pool_of_.find(node);
  return it == pool_of_.end() ? nullptr : &options_.pools[it->second];
}

void SchedulerCore::AdoptPoolNodes() {
  resumed_.assign(options_.pools.size(), {});
  suspended_.assign(options_.pools.size(), {});
  in_use_.assign(options_.pools.size(), {});
  for (int p = 0; p < static_cast<int>(options_.pools.size()); ++p) {
    const PoolSpec& pool = options_.pools[p];
    if (!pool.elastic()) continue;
    for (const std::string& name : pool.nodes) {
      pool_of_[name] = p;
      if (cluster_.Find(name) != nullptr) continue;
      UpsertNode(ShapedNode(pool, name));
      cluster_.SetState(name, v1::NODE_STATE_POWERED_DOWN, absl::StrCat("powered down (pool ", pool.name, ")"));
      power_since_[name] = clock_.Now();
    }
  }
}

void SchedulerCore::NotePowerTransition(const std::string& node, v1::NodeState to, const std::string& reason,
                                        Effects& fx) const {
  const NodeSlot* slot = cluster_.Find(node);
  const PoolSpec* pool = PoolOf(node);
  auto since = power_since_.find(node);
  fx.power_transitions.push_back({node, pool == nullptr ? "" : pool->name,
                                  slot == nullptr ? v1::NODE_STATE_UNSPECIFIED : slot->state, to, reason,
                                  since == power_since_.end() ? absl::ZeroDuration() : clock_.Now() - since->second});
}

void SchedulerCore::SetPowerState(const std::string& node, v1::NodeState state, const std::string& reason,
                                  Effects& fx) {
  NotePowerTransition(node, state, reason, fx);
  cluster_.SetState(node, state, reason);
  power_since_[node] = clock_.Now();
  if (state != v1::NODE_STATE_UP) idle_since_.erase(node);
  WriteNode(node, fx);
}

std::string SchedulerCore::BootWaitReason(const std::vector<std::string>& nodes) const {
  absl::Time started = clock_.Now();
  absl::Duration timeout = absl::ZeroDuration();
  for (const std::string& name : nodes) {
    if (auto since = power_since_.find(name); since != power_since_.end()) started = std::min(started, since->second);
    if (const PoolSpec* pool = PoolOf(name)) timeout = std::max(timeout, pool->resume_timeout);
  }
  return absl::StrCat("waiting for ", CompressHostlist(nodes), " to boot (resume started ",
                      Seconds(absl::Trunc(clock_.Now() - started, absl::Seconds(1))), " ago, timeout ",
                      FormatTimeLimit(absl::ToInt64Seconds(timeout)), ")");
}

void SchedulerCore::PlanPower(const PassPlan& plan, const Ranked& ranked, Effects& fx) {
  if (pool_of_.empty()) return;
  const absl::Time now = clock_.Now();
  for (const auto& [name, p] : pool_of_) {
    const NodeSlot* slot = cluster_.Find(name);
    if (slot != nullptr && slot->state == v1::NODE_STATE_UP && slot->jobs.empty()) {
      idle_since_.emplace(name, now);
    } else {
      idle_since_.erase(name);
    }
  }
  const size_t pools = options_.pools.size();
  BootInputs in{cluster_, *policy_, options_.pools, pool_of_, {}, {}};
  in.reservations = &plan.reservations;
  std::vector<int> suspend_budget(pools, -1);
  for (size_t p = 0; p < pools; ++p) {
    const int resumed = InWindow(resumed_[p], now);
    in.resume_budget.push_back(Budget(options_.pools[p].resumes_per_minute, resumed));
    in.resumed_none_lately.push_back(resumed == 0);
    suspend_budget[p] = Budget(options_.pools[p].suspends_per_minute, InWindow(suspended_[p], now));
  }
  absl::flat_hash_map<uint64_t, WaitCause> causes;
  for (const PlannedWait& w : plan.waits) causes.emplace(w.job_id, w.cause);
  std::vector<BootWaiter> waiting;
  std::map<uint64_t, ActiveJob*> by_id;
  for (ActiveJob* a : ranked.order) {
    auto cause = causes.find(a->job.id());
    if (cause == causes.end() || !MoreNodesWouldHelp(cause->second)) continue;
    waiting.push_back({a->job.id(), RequestFor(a->job)});
    by_id[a->job.id()] = a;
  }
  int64_t demand = 0;
  absl::Duration longest_window = absl::ZeroDuration();
  for (const BootWaiter& w : waiting) demand += w.request.total_gpus;
  for (const PoolSpec& pool : options_.pools) longest_window = std::max(longest_window, pool.demand_window);
  demand_.Add(now, demand);
  demand_.Forget(now, longest_window);
  const BootPlan boots = PlanBoots(in, waiting);

  std::set<std::string> wanted;
  std::map<int, PowerRequest> resumes;
  for (const GangBoot& gang : boots.gangs) {
    wanted.insert(gang.waits_for.begin(), gang.waits_for.end());
    for (const std::string& name : gang.to_resume) {
      const int p = pool_of_.at(name);
      SetPowerState(name, v1::NODE_STATE_POWERING_UP,
                    gang.job_id == 0 ? absl::StrCat("powering up: pool ", options_.pools[p].name, " keeps min_nodes ",
                                                    options_.pools[p].min_nodes, " on")
                                     : absl::StrCat("powering up for job ", gang.job_id),
                    fx);
      resumed_[p].push_back(now);
      PowerRequest& request = resumes[p];
      request.nodes.push_back(name);
    }
    if (gang.job_id == 0) continue;
    ActiveJob& a = *by_id.at(gang.job_id);
    const std::string reason = BootWaitReason(gang.waits_for);
    ClearEstimatedStart(a, fx);
    SetWaitReason(a, v1::WAIT_CAUSE_BOOTING, reason, fx);
    for (const std::string& name : gang.to_resume) {
      PowerRequest& request = resumes[pool_of_.at(name)];
      if (request.jobs.empty() || request.jobs.back().job_id != gang.job_id) {
        request.jobs.push_back({gang.job_id, gang.waits_for, reason});
      }
    }
  }
  for (const auto& [job_id, why] : boots.refused) {
    ActiveJob& a = *by_id.at(job_id);
    SetWaitReason(a, a.job.wait_cause(), absl::StrCat(a.job.reason(), "; ", why), fx);
  }
  std::vector<int64_t> keep_free(pools, 0);
  for (size_t p = 0; p < pools; ++p) {
    const PoolSpec& pool = options_.pools[p];
    keep_free[p] = HeadroomTarget(pool, demand_, now);
    if (pool.target_utilization > 0) {
      // Only such pools read every node of theirs each pass.
      const int64_t used = GpusInUse(cluster_, pool);
      in_use_[p].Add(now, used);
      in_use_[p].Forget(now, pool.demand_window);
      keep_free[p] = std::max(keep_free[p], UtilizationTarget(pool, in_use_[p], used, now));
    }
    if (keep_free[p] == 0) continue;
    const std::vector<std::string> ahead =
        HeadroomResumes(cluster_, pool, keep_free[p], FreeOrComing(cluster_, pool, wanted),
                        Budget(pool.resumes_per_minute, InWindow(resumed_[p], now)), NodesOn(cluster_, pool));
    for (const std::string& name : ahead) {
      SetPowerState(name, v1::NODE_STATE_POWERING_UP,
                    absl::StrCat("powering up: headroom for ", keep_free[p], " free GPUs (",
                                 absl::FormatDuration(pool.demand_window), " of demand and use)"),
                    fx);
      resumed_[p].push_back(now);
      resumes[static_cast<int>(p)].nodes.push_back(name);
    }
  }
  for (auto& [p, request] : resumes) {
    const PoolSpec& pool = options_.pools[p];
    request.kind = PowerRequest::Kind::kResume;
    request.id = next_power_request_++;
    for (const std::string& name : request.nodes) power_request_of_[name] = request.id;
    request.pool = pool.name;
    request.program = pool.resume_program;
    request.timeout = pool.resume_timeout;
    fx.power_requests.push_back(std::move(request));
  }

  std::map<int, std::vector<std::string>> suspends =
      PlanSuspends({cluster_, options_.pools, idle_since_, now, suspend_budget, wanted, keep_free});
  for (const std::string& name : suspend_again_) {
    const NodeSlot* slot = cluster_.Find(name);
    if (slot != nullptr && slot->state == v1::NODE_STATE_POWERING_DOWN) suspends[pool_of_.at(name)].push_back(name);
  }
  suspend_again_.clear();
  for (const auto& [p, nodes] : suspends) {
    RequestSuspend(
        p, nodes,
        [&](const std::string& name) {
          const absl::Time idle = idle_since_.contains(name) ? idle_since_.at(name) : now;
          return absl::StrCat("powering down: idle for ", Seconds(absl::Trunc(now - idle, absl::Seconds(1))));
        },
        fx);
  }
}

void SchedulerCore::RequestSuspend(int p, const std::vector<std::string>& nodes,
                                   const std::function<std::string(const std::string&)>& why, Effects& fx) {
  const PoolSpec& pool = options_.pools[p];
  PowerRequest request{PowerRequest::Kind::kSuspend,
                       next_power_request_++,
                       pool.name,
                       pool.suspend_program,
                       pool.suspend_timeout,
                       {},
                       {}};
  for (const std::string& name : nodes) {
    SetPowerState(name, v1::NODE_STATE_POWERING_DOWN, why(name), fx);
    suspended_[p].push_back(clock_.Now());
    power_request_of_[name] = request.id;
    request.nodes.push_back(name);
  }
  fx.power_requests.push_back(std::move(request));
}

void SchedulerCore::PowerProgramEnded(const PowerRequest& request, const absl::Status& outcome, Effects& fx) {
  const bool resume = request.kind == PowerRequest::Kind::kResume;
  for (const std::string& name : request.nodes) {
    const NodeSlot* slot = cluster_.Find(name);
    auto current = power_request_of_.find(name);
    if (slot == nullptr || current == power_request_of_.end() || current->second != request.id) continue;
    if (resume && slot->state == v1::NODE_STATE_POWERING_UP && !outcome.ok()) {
      SetPowerState(name, v1::NODE_STATE_POWERED_DOWN, absl::StrCat("resume failed: ", outcome.message()), fx);
    } else if (!resume && slot->state == v1::NODE_STATE_POWERING_DOWN) {
      if (outcome.ok()) {
        SetPowerState(name, v1::NODE_STATE_POWERED_DOWN,
                      absl::StrCat("powered down: suspend program done (", slot->reason, ")"), fx);
        liveness_.Forget(name);
      } else {
        // It may still run: it takes work again once its agent is heard.
        SetPowerState(name, v1::NODE_STATE_NOT_RESPONDING, absl::StrCat("suspend failed: ", outcome.message()), fx);
        liveness_.Heard(name, clock_.Now());
      }
    }
  }
}

void SchedulerCore::CheckBoots(absl::Time now, Effects& fx) {
  std::vector<std::pair<std::string, absl::Duration>> late;
  for (const auto& [name, p] : pool_of_) {
    const NodeSlot* slot = cluster_.Find(name);
    if (slot == nullptr || slot->state != v1::NODE_STATE_POWERING_UP) continue;
    const absl::Duration timeout = options_.pools[p].resume_timeout;
    auto since = power_since_.find(name);
    if (since != power_since_.end() && now - since->second >= timeout) late.emplace_back(name, timeout);
  }
  for (const auto& [name, timeout] : late) {
    SetPowerState(name, v1::NODE_STATE_POWERED_DOWN,
                  absl::StrCat("resume timed out: its agent did not register with its GPUs within ",
                               FormatTimeLimit(absl::ToInt64Seconds(timeout))),
                  fx);
  }
}

std::vector<v1::PoolStatus> SchedulerCore::Pools() const {
  const absl::Time now = clock_.Now();
  std::vector<v1::PoolStatus> out;
  for (size_t p = 0; p < options_.pools.size(); ++p) {
    const PoolSpec& pool = options_.pools[p];
    v1::PoolStatus& s = out.emplace_back();
    s.set_name(pool.name);
    s.set_pool_class(std::string(PoolClassName(pool.pool_class)));
    s.set_cost_per_gpu_hour(pool.cost_per_gpu_hour);
    s.set_min_nodes(pool.min_nodes);
    s.set_max_nodes(pool.max_nodes);
    s.set_elastic(pool.elastic());
    for (const std::string& name : pool.nodes) {
      const NodeSlot* slot = cluster_.Find(name);
      const v1::NodeState state = slot == nullptr ? v1::NODE_STATE_DOWN : slot->state;
      switch (state) {
        case v1::NODE_STATE_POWERED_DOWN: s.set_nodes_powered_down(s.nodes_powered_down() + 1); break;
        case v1::NODE_STATE_POWERING_UP: s.set_nodes_powering_up(s.nodes_powering_up() + 1); break;
        case v1::NODE_STATE_UP: s.set_nodes_up(s.nodes_up() + 1); break;
        case v1::NODE_STATE_POWERING_DOWN: s.set_nodes_powering_down(s.nodes_powering_down() + 1); break;
        default: s.set_nodes_other(s.nodes_other() + 1); break;
      }
      if (slot == nullptr || state == v1::NODE_STATE_POWERED_DOWN) continue;
      s.set_gpus_paid(s.gpus_paid() + slot->gpu_count);
      s.set_gpus_used(s.gpus_used() + slot->gpu_count - slot->FreeGpus());
    }
    s.set_cost_per_hour(static_cast<double>(s.gpus_paid()) * pool.cost_per_gpu_hour);
    s.set_demand_gpus(demand_.Peak(now, pool.demand_window));
    s.set_demand_window_s(absl::ToInt64Seconds(pool.demand_window));
    s.set_headroom_gpus(HeadroomTarget(pool, demand_, now));
    if (pool.target_utilization > 0 && p < in_use_.size()) {
      s.set_headroom_gpus(
          std::max(s.headroom_gpus(), UtilizationTarget(pool, in_use_[p], GpusInUse(cluster_, pool), now)));
    }
  }
  return out;
}

}  // namespace gpusched::core
