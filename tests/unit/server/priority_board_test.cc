// PriorityBoard: what the read handlers show of the pending jobs' priorities,
// from a pass that scored all of them or from the few scored since.
#include "daemon/server/priority_board.h"

#include <catch2/catch.hpp>

namespace gpusched::server {
namespace {

core::PriorityScore Total(double total) {
  core::PriorityScore score;
  score.total = total;
  return score;
}

std::optional<double> Shown(const PriorityBoard& board, uint64_t id, v1::JobState state = v1::JOB_STATE_PENDING) {
  v1::Job job;
  job.set_id(id);
  job.set_state(state);
  board.Fill(job);
  if (!job.has_priority()) return std::nullopt;
  return job.priority().total();
}

TEST_CASE("the board shows the last whole scoring, then the jobs scored or unranked since") {
  PriorityBoard board;
  CHECK_FALSE(Shown(board, 1).has_value());
  board.Publish({std::make_shared<const core::PendingRanking::Scores>(
                     core::PendingRanking::Scores{{1, Total(10)}, {2, Total(20)}}),
                 {}});
  CHECK(Shown(board, 1) == 10);
  CHECK(Shown(board, 2) == 20);
  // A job placed or ended shows none, whatever was published.
  CHECK_FALSE(Shown(board, 1, v1::JOB_STATE_RUNNING).has_value());

  // Since then: job 3 submitted, job 2 held (no longer ranked), job 4 came and went.
  board.Publish({nullptr, {{3, Total(30)}, {2, std::nullopt}, {4, Total(40)}, {4, std::nullopt}}});
  CHECK(Shown(board, 1) == 10);
  CHECK_FALSE(Shown(board, 2).has_value());
  CHECK(Shown(board, 3) == 30);
  CHECK_FALSE(Shown(board, 4).has_value());

  // A whole scoring again replaces everything.
  board.Publish(
      {std::make_shared<const core::PendingRanking::Scores>(core::PendingRanking::Scores{{2, Total(21)}}), {}});
  CHECK_FALSE(Shown(board, 1).has_value());
  CHECK(Shown(board, 2) == 21);
  CHECK_FALSE(Shown(board, 3).has_value());
}

}  // namespace
}  // namespace gpusched::server
