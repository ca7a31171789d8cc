// PendingRanking: the queue kept in rank order between passes. Its oracle is
// a ranking made from scratch: kept up to date job by job, it must give the
// order a fresh one gives when scored at the same reference time.
#include "daemon/core/pending_ranking.h"

#include <catch2/catch.hpp>
#include <random>

#include "common/proto_time.h"
#include "daemon/core/end_forecast.h"
#include "daemon/core/pass_plan.h"

namespace gpusched::core {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1'700'000'000);

struct RankingWorld {
  QueuePolicy queues = QueuePolicy::Default();
  QueueUsage usage{queues};
  RuntimeHistory history;
  JobTable jobs;
  absl::Time now = kT0;
  int64_t largest_node_gpus = 8;
  size_t depth = 500;

  RankingWorld() { REQUIRE(queues.Compile().ok()); }

  uint64_t Submit(const std::string& user, int gpus, int64_t priority = 0, bool held = false) {
    ActiveJob a;
    a.job.set_id(jobs.TakeId());
    a.job.set_state(v1::JOB_STATE_PENDING);
    a.job.set_held(held);
    a.job.mutable_spec()->set_user(user);
    a.job.mutable_spec()->set_queue("default");
    a.job.mutable_spec()->set_priority(priority);
    a.job.mutable_spec()->mutable_resources()->set_gpus(gpus);
    *a.job.mutable_submit_time() = ToProtoTime(now);
    return jobs.Add(std::move(a)).job.id();
  }
  RankInputs Inputs() {
    return RankInputs{.now = now,
                      .queues = &queues,
                      .queue_depth = depth,
                      .head_blocks_after = absl::Hours(24),
                      .cluster_gpus = 64,
                      .largest_node_gpus = largest_node_gpus,
                      .history = &history,
                      .usage = &usage};
  }
  Ranked Rank(PendingRanking& ranking) {
    usage.Advance(now, jobs);
    return ranking.Rank(jobs, Inputs(), [](const v1::Job&) { return false; });
  }
};

std::vector<uint64_t> Ids(const std::vector<ActiveJob*>& jobs) {
  std::vector<uint64_t> ids;
  for (const ActiveJob* a : jobs) ids.push_back(a->job.id());
  return ids;
}

// The order a ranking made from scratch gives, scored at `at`.
std::vector<uint64_t> FreshOrder(RankingWorld& w, absl::Time at) {
  // A copy of the table: the fresh ranking takes all of its jobs as changes.
  JobTable copy;
  for (const auto& [id, a] : w.jobs.active()) copy.Add(a);
  PendingRanking fresh(absl::Hours(1));
  RankInputs in = w.Inputs();
  in.now = at;
  return Ids(fresh.Rank(copy, in, [](const v1::Job&) { return false; }).order);
}

TEST_CASE("a ranking kept job by job gives the order a fresh one gives at its reference time", "[ranking]") {
  RankingWorld w;
  // Usage moves with every job that runs; the fresh ranking would see it as
  // of now, not as of the reference time. Age and the other weights remain.
  w.queues.weights.fair_share = 0;
  PendingRanking ranking(absl::Hours(1));
  std::mt19937 rng(7);
  const std::vector<std::string> users = {"ana", "ben", "cy"};
  // Every user waits from the start, so no later submit brings a new party.
  for (const std::string& user : users) w.Submit(user, 1);
  w.Rank(ranking);
  REQUIRE(ranking.rescores() == 1);
  for (int step = 0; step < 400; ++step) {
    w.now += absl::Seconds(std::uniform_int_distribution<int>(0, 5)(rng));
    const int op = std::uniform_int_distribution<int>(0, 9)(rng);
    if (op < 6) {
      w.Submit(users[rng() % users.size()], 1 << (rng() % 5), static_cast<int64_t>(rng() % 3));
    } else if (op < 8 && !w.jobs.pending().empty()) {
      // Start one (it leaves the queue) or hold or release one.
      auto it = std::next(w.jobs.pending().begin(), static_cast<std::ptrdiff_t>(rng() % w.jobs.pending().size()));
      ActiveJob& a = *it->second;
      if (op == 6 && !a.job.held()) {
        w.jobs.Place(a);
        a.job.set_state(v1::JOB_STATE_RUNNING);
      } else {
        w.jobs.SetHeld(a, !a.job.held());
      }
    } else if (!w.jobs.placed().empty()) {
      w.jobs.End(*w.jobs.placed().begin(), v1::JOB_STATE_COMPLETED);
    }
    const Ranked ranked = w.Rank(ranking);
    INFO("step " << step);
    REQUIRE(Ids(ranked.order) == FreshOrder(w, ranking.scored_at()));
  }
  // Submits, starts, ends, holds and releases were taken in without
  // scoring the queue again.
  REQUIRE(w.now - kT0 < absl::Hours(1));
  CHECK(ranking.rescores() == 1);
}

TEST_CASE("held jobs are not ranked, and each is handed out until its row says it is held", "[ranking]") {
  RankingWorld w;
  PendingRanking ranking(absl::Hours(1));
  const uint64_t runnable = w.Submit("ana", 1);
  const uint64_t held = w.Submit("ana", 1, 0, /*held=*/true);
  Ranked ranked = w.Rank(ranking);
  CHECK(Ids(ranked.order) == std::vector<uint64_t>{runnable});
  CHECK(Ids(ranked.held) == std::vector<uint64_t>{held});
  CHECK_FALSE(ranking.ScoreOf(held).has_value());
  // Not yet told: handed out again.
  CHECK(Ids(w.Rank(ranking).held) == std::vector<uint64_t>{held});
  ActiveJob& a = w.jobs.at(held);
  a.job.set_wait_cause(v1::WAIT_CAUSE_HELD);
  a.job.set_reason(std::string(kHeldReason));
  CHECK(w.Rank(ranking).held.empty());
  // Released, it is ranked behind the older job.
  w.jobs.SetHeld(a, false);
  CHECK(Ids(w.Rank(ranking).order) == std::vector<uint64_t>{runnable, held});
  CHECK(ranking.ScoreOf(held).has_value());
}

TEST_CASE("a user whose jobs are all held does not compete: the others' fair shares are not split with them",
          "[ranking]") {
  auto ana_fair_share = [](bool ben_held) {
    RankingWorld w;
    PendingRanking ranking(absl::Hours(1));
    ActiveJob& running = w.jobs.at(w.Submit("ana", 4));
    w.jobs.Place(running);
    running.job.set_state(v1::JOB_STATE_RUNNING);
    const uint64_t ana = w.Submit("ana", 1);
    w.Submit("ben", 1, 0, ben_held);
    w.Rank(ranking);
    w.now += absl::Hours(1);
    w.Rank(ranking);  // an hour on: scored again
    return ranking.ScoreOf(ana)->fair_share;
  };
  // All of the usage is ana's: against one competitor her share is half the
  // cluster (factor 2^-2), alone all of it (2^-1).
  CHECK(ana_fair_share(/*ben_held=*/false) == Approx(0.25));
  CHECK(ana_fair_share(/*ben_held=*/true) == Approx(0.5));
}

TEST_CASE("the queue is scored again when the clock, a new party, the run-time history or the nodes say so",
          "[ranking]") {
  RankingWorld w;
  PendingRanking ranking(absl::Seconds(30));
  w.Submit("ana", 1);
  w.Rank(ranking);
  REQUIRE(ranking.rescores() == 1);
  w.now += absl::Seconds(29);
  w.Submit("ana", 2);
  w.Rank(ranking);
  CHECK(ranking.rescores() == 1);  // a submit of a party already waiting
  w.now += absl::Seconds(1);
  w.Rank(ranking);
  CHECK(ranking.rescores() == 2);  // the clock
  w.Submit("ben", 1);
  w.Rank(ranking);
  CHECK(ranking.rescores() == 3);  // a new party splits the shares
  v1::JobSpec spec;
  spec.set_user("ana");
  w.history.Record(spec, absl::Minutes(5));
  w.Rank(ranking);
  CHECK(ranking.rescores() == 4);  // a run time learned
  w.largest_node_gpus = 16;
  w.Rank(ranking);
  CHECK(ranking.rescores() == 5);  // the nodes
  w.Rank(ranking);
  CHECK(ranking.rescores() == 5);
}

TEST_CASE("a gang larger than any node goes first once it has waited its bound, between scorings", "[ranking]") {
  RankingWorld w;
  PendingRanking ranking(absl::Hours(48));
  const uint64_t gang = w.Submit("ana", 16);      // two nodes: its bound is 24h x (16 / 32)^2 = 6h
  const uint64_t big_gang = w.Submit("ana", 32);  // four nodes: 24h
  w.now += absl::Seconds(1);
  const uint64_t small = w.Submit("ben", 1, /*priority=*/1000);  // ahead by priority
  CHECK(Ids(w.Rank(ranking).order) == std::vector<uint64_t>{small, big_gang, gang});
  w.now += absl::Hours(6);
  CHECK(Ids(w.Rank(ranking).order) == std::vector<uint64_t>{gang, small, big_gang});
  w.now += absl::Hours(18);  // both due: oldest first
  CHECK(Ids(w.Rank(ranking).order) == std::vector<uint64_t>{gang, big_gang, small});
  CHECK(ranking.rescores() == 1);
}

TEST_CASE("a gang's starvation bound grows with the square of its size, up to four times the bound", "[ranking]") {
  const absl::Duration bound = absl::Hours(24);
  CHECK(StarvationBound(bound, 1, 8) == bound);
  CHECK(StarvationBound(bound, 8, 8) == bound);  // fits a node: no gang
  CHECK(StarvationBound(bound, 16, 8) == absl::Hours(6));
  CHECK(StarvationBound(bound, 32, 8) == bound);  // kBoundGangNodes nodes
  CHECK(StarvationBound(bound, 64, 8) == absl::Hours(96));
  CHECK(StarvationBound(bound, 512, 8) == absl::Hours(96));                     // at most kMaxBoundScale x
  CHECK(StarvationBound(absl::ZeroDuration(), 64, 8) == absl::ZeroDuration());  // strict order stays strict
}

TEST_CASE("a pass looks at queue_depth jobs; past them only array tasks, to say which wait for their limit",
          "[ranking]") {
  RankingWorld w;
  w.depth = 2;
  PendingRanking ranking(absl::Hours(1));
  for (int i = 0; i < 4; ++i) w.Submit("ana", 1, /*priority=*/10);
  std::vector<uint64_t> tasks;
  for (int i = 0; i < 3; ++i) {
    tasks.push_back(w.Submit("ana", 1));
    ActiveJob& a = w.jobs.at(tasks.back());
    a.job.mutable_array()->set_array_id(tasks.front());
    a.job.mutable_array()->set_max_running(1);
  }
  w.usage.Advance(w.now, w.jobs);
  int asked = 0;
  const Ranked ranked = ranking.Rank(w.jobs, w.Inputs(), [&](const v1::Job& job) {
    ++asked;
    return job.has_array();
  });
  CHECK(ranked.order.size() == 2);
  CHECK(Ids(ranked.throttled) == tasks);
  CHECK(asked == 2 + 3);  // the depth, then the array tasks only
}

}  // namespace
}  // namespace gpusched::core
