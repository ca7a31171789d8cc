#include "daemon/core/pending_ranking.h"

#include <algorithm>

#include "absl/strings/string_view.h"
#include "daemon/core/end_forecast.h"
#include "daemon/core/pass_plan.h"
#include "daemon/core/queue/attained_service.h"
#include "daemon/core/queue/fair_share.h"

namespace gpusched::core {
namespace {

// A held job whose row says so already: a pass has nothing to tell it.
bool SaysHeld(const v1::Job& job) {
  return job.wait_cause() == v1::WAIT_CAUSE_HELD && !job.has_estimated_start_time() && job.reason() == kHeldReason;
}

}  // namespace

Ranked PendingRanking::Rank(JobTable& jobs, const RankInputs& in, absl::FunctionRef<bool(const v1::Job&)> over_limit) {
  const bool weighted = !in.queues->weights.all_zero();
  if (weighted != weighted_) {
    weighted_ = weighted;
    scored_at_ = absl::InfinitePast();  // scored the other way: all again
  }
  FollowQueue(jobs, in);
  if (RefreshDue(in)) Refresh(in);

  Ranked out;
  for (auto it = untold_held_.begin(); it != untold_held_.end();) {
    ActiveJob* a = jobs.Find(*it);
    if (a == nullptr || jobs.IsPlaced(*it) || !a->job.held() || SaysHeld(a->job)) {
      it = untold_held_.erase(it);
      continue;
    }
    out.held.push_back(a);
    ++it;
  }
  // Past the depth only array tasks are looked at, and only while some
  // array has a running limit, to say which wait for it.
  auto look_at = [&](const Entry& e) {
    if (out.order.size() >= in.queue_depth) {
      if (e.limited && over_limit(e.job->job)) out.throttled.push_back(e.job);
      return limited_ > 0;
    }
    (over_limit(e.job->job) ? out.throttled : out.order).push_back(e.job);
    return true;
  };
  // Due gangs first, oldest first: of each size, they are a prefix of its
  // gangs (the bound depends on the size alone).
  std::vector<const Entry*> due;
  for (const auto& [gpus, gangs] : gangs_) {
    for (const QueueKey& key : gangs) {
      const Entry& e = members_.at(key.job_id).entry;
      if (!Due(e, in)) break;
      due.push_back(&e);
    }
  }
  std::sort(due.begin(), due.end(), [](const Entry* a, const Entry* b) { return BySubmit()(a->key, b->key); });
  for (const Entry* e : due) {
    if (!look_at(*e)) return out;
  }
  for (const Entry& e : ranked_) {
    if (Due(e, in)) continue;  // looked at above
    if (!look_at(e)) break;
  }
  return out;
}

void PendingRanking::FollowQueue(JobTable& jobs, const RankInputs& in) {
  for (uint64_t id : jobs.TakeQueueChanges()) {
    Erase(id);
    untold_held_.erase(id);
    ActiveJob* a = jobs.Find(id);
    if (a == nullptr || jobs.IsPlaced(id)) continue;  // ended or placed
    if (a->job.held()) {
      untold_held_.insert(id);
    } else {
      Insert(a, in);
    }
  }
}

void PendingRanking::Insert(ActiveJob* a, const RankInputs& in) {
  const v1::Job& job = a->job;
  Member m{Entry{0, QueueKey::Of(job), a, false, job.array().max_running() > 0, job.spec().resources().gpus(),
                 Demoted(job, in.queues->Find(job.spec().queue()), in.now)},
           job.spec().user(), std::string(AccountOf(job.spec().user(), job.spec().account()))};
  // Scored now only when the reference holds: a refresh scores it anyway,
  // and hands all the scores on.
  if (scored_at_ != absl::InfinitePast()) {
    Score(m.entry, in, nullptr);
    NoteChanged(job.id(), scores_.at(job.id()));
  }
  ranked_.insert(m.entry);
  if (m.entry.gang) gangs_[m.entry.gpus].insert(m.entry.key);
  if (m.entry.limited) ++limited_;
  CountParty(m.user, m.account, +1);
  members_.emplace(job.id(), std::move(m));
}

void PendingRanking::Erase(uint64_t id) {
  auto it = members_.find(id);
  if (it == members_.end()) return;
  // The job may be gone already: only what the member kept is read.
  const Member& m = it->second;
  ranked_.erase(m.entry);
  if (m.entry.gang) {
    auto gangs = gangs_.find(m.entry.gpus);
    gangs->second.erase(m.entry.key);
    if (gangs->second.empty()) gangs_.erase(gangs);
  }
  if (m.entry.limited) --limited_;
  CountParty(m.user, m.account, -1);
  members_.erase(it);
  if (scores_.erase(id) > 0) NoteChanged(id, std::nullopt);
}

void PendingRanking::CountParty(const std::string& user, const std::string& account, int delta) {
  for (auto [waiting, name] : {std::pair{&waiting_users_, &user}, std::pair{&waiting_accounts_, &account}}) {
    if (delta > 0) {
      if ((*waiting)[*name]++ == 0) parties_changed_ = true;
    } else if (auto it = waiting->find(*name); it != waiting->end() && --it->second == 0) {
      waiting->erase(it);
      parties_changed_ = true;
    }
  }
}

bool PendingRanking::RefreshDue(const RankInputs& in) const {
  if (scored_at_ == absl::InfinitePast()) return true;
  if (!weighted_) return false;  // the jobs' own priorities: nothing moves
  return in.now - scored_at_ >= refresh_every_ || in.cluster_gpus != scored_cluster_gpus_ ||
         in.largest_node_gpus != scored_largest_node_ || in.history->revision() != scored_history_ ||
         (parties_changed_ && in.queues->weights.fair_share != 0);
}

void PendingRanking::Refresh(const RankInputs& in) {
  ++rescores_;
  scored_at_ = in.now;
  scored_cluster_gpus_ = in.cluster_gpus;
  scored_largest_node_ = in.largest_node_gpus;
  scored_history_ = in.history->revision();
  if (weighted_) {
    std::vector<absl::string_view> users, accounts;
    users.reserve(waiting_users_.size());
    accounts.reserve(waiting_accounts_.size());
    for (const auto& [name, count] : waiting_users_) users.push_back(name);
    for (const auto& [name, count] : waiting_accounts_) accounts.push_back(name);
    in.usage->SetWaiting(users, accounts);
  }
  parties_changed_ = false;
  ranked_.clear();
  gangs_.clear();
  scores_.clear();
  scores_.reserve(members_.size());
  // The fair-share factor once per user and account, not once per job.
  FairShareCache fair_share;
  for (auto& [id, m] : members_) {
    Score(m.entry, in, &fair_share);
    ranked_.insert(m.entry);
    if (m.entry.gang) gangs_[m.entry.gpus].insert(m.entry.key);
  }
  updates_.all = std::make_shared<const Scores>(scores_);
  updates_.changed.clear();
}

void PendingRanking::Score(Entry& e, const RankInputs& in, FairShareCache* fair_share) {
  const v1::JobSpec& spec = e.job->job.spec();
  PriorityScore score;
  if (!weighted_) {
    score.job = score.total = static_cast<double>(e.key.priority);
  } else {
    double factor;
    if (fair_share != nullptr) {
      auto [it, fresh] =
          fair_share->try_emplace(std::pair<absl::string_view, absl::string_view>(spec.user(), spec.account()), 0.0);
      if (fresh) it->second = in.usage->FairShareFactor(spec.user(), spec.account());
      factor = it->second;
    } else {
      factor = in.usage->FairShareFactor(spec.user(), spec.account());
    }
    const RuntimeEstimate estimate = in.history->Estimate(spec);
    const absl::Duration expected = EndForecast::Run(spec, estimate);
    const PriorityContext context{in.queues, scored_at_, in.cluster_gpus, in.queues->MaxTier()};
    score = ScoreJob(spec, absl::FromUnixNanos(e.key.submit_ns), factor, expected, context);
    score.expected_run = expected;
    score.estimate = estimate;
  }
  e.total = score.total;
  // A demoted gang has had its service: the starvation bound is for waiting
  // before it, and would put it back ahead of the fresh jobs that stopped it.
  e.gang = weighted_ && !e.demoted && spec.resources().gpus() > in.largest_node_gpus;
  scores_[e.job->job.id()] = score;
}

void PendingRanking::NoteChanged(uint64_t id, std::optional<PriorityScore> score) {
  updates_.changed.emplace_back(id, std::move(score));
  // Unread (a simulator reads none), they are folded into one whole copy
  // once they outnumber the jobs: what is kept stays in proportion.
  if (updates_.changed.size() > 2 * scores_.size() + 64) {
    updates_.all = std::make_shared<const Scores>(scores_);
    updates_.changed.clear();
  }
}

bool PendingRanking::Due(const Entry& e, const RankInputs& in) {
  return e.gang && in.now - absl::FromUnixNanos(e.key.submit_ns) >=
                       StarvationBound(in.head_blocks_after, e.gpus, in.largest_node_gpus);
}

std::optional<PriorityScore> PendingRanking::ScoreOf(uint64_t job_id) const {
  auto it = scores_.find(job_id);
  if (it == scores_.end()) return std::nullopt;
  return it->second;
}

PendingRanking::ScoreUpdates PendingRanking::TakeScoreUpdates() { return std::exchange(updates_, {}); }

}  // namespace gpusched::core
