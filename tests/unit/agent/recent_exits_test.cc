#include "agent/runner/recent_exits.h"

#include <catch2/catch.hpp>

using gpusched::agent::RecentExits;
namespace v1 = gpusched::v1;

namespace {
v1::JobUpdate Exit(uint64_t id, int code) {
  v1::JobUpdate u;
  u.set_job_id(id);
  u.set_kind(v1::JobUpdate::KIND_EXITED);
  u.set_exit_code(code);
  return u;
}
}  // namespace

TEST_CASE("recent exit reports are kept for a while, oldest first, bounded in count and age") {
  const absl::Time t0 = absl::FromUnixSeconds(1'000'000);
  RecentExits recent(3, absl::Minutes(10));
  recent.Add(Exit(1, 0), t0);
  recent.Add(Exit(2, 1), t0 + absl::Minutes(1));
  recent.Add(Exit(3, 2), t0 + absl::Minutes(2));
  REQUIRE(recent.Find(2, t0 + absl::Minutes(2)).has_value());
  CHECK(recent.Find(2, t0 + absl::Minutes(2))->exit_code() == 1);
  CHECK_FALSE(recent.Find(7, t0).has_value());

  recent.Add(Exit(4, 3), t0 + absl::Minutes(3));  // over the count: job 1 goes
  auto all = recent.All(t0 + absl::Minutes(3));
  REQUIRE(all.size() == 3);
  CHECK(all[0].job_id() == 2);
  CHECK(all[2].job_id() == 4);

  // Job 2 was added at t0+1m; at t0+11m30s it is older than ten minutes.
  all = recent.All(t0 + absl::Minutes(11) + absl::Seconds(30));
  REQUIRE(all.size() == 2);
  CHECK(all[0].job_id() == 3);

  recent.Add(Exit(3, 9), t0 + absl::Minutes(12));  // a newer report replaces the old one
  all = recent.All(t0 + absl::Minutes(12));
  REQUIRE(all.size() == 2);
  CHECK(all[1].job_id() == 3);
  CHECK(all[1].exit_code() == 9);
}
