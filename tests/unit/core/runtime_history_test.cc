#include "daemon/core/queue/runtime_history.h"

#include <catch2/catch.hpp>

namespace gpusched::core {
namespace {

v1::JobSpec Job(const std::string& user, const std::string& name, int64_t gpus) {
  v1::JobSpec spec;
  spec.set_user(user);
  spec.set_name(name);
  spec.mutable_resources()->set_gpus(gpus);
  return spec;
}

void Record(RuntimeHistory& h, const v1::JobSpec& spec, std::initializer_list<int> seconds) {
  for (int s : seconds) h.Record(spec, absl::Seconds(s));
}

TEST_CASE("size classes are powers of two") {
  CHECK(RuntimeHistory::SizeClass(0) == 0);
  CHECK(RuntimeHistory::SizeClass(1) == 1);
  CHECK(RuntimeHistory::SizeClass(2) == 2);
  CHECK(RuntimeHistory::SizeClass(3) == 3);
  CHECK(RuntimeHistory::SizeClass(4) == 3);
  CHECK(RuntimeHistory::SizeClass(5) == 4);
  CHECK(RuntimeHistory::SizeClass(8) == 4);
  CHECK(RuntimeHistory::SizeClass(9) == 5);
  CHECK(RuntimeHistory::SizeClass(64) == 7);
}

TEST_CASE("no estimate before enough runs have ended") {
  RuntimeHistory h;
  CHECK_FALSE(h.Estimate(Job("alice", "train", 8)).known());
  Record(h, Job("alice", "train", 8), {100, 200});
  CHECK_FALSE(h.Estimate(Job("alice", "train", 8)).known());
  Record(h, Job("alice", "train", 8), {300});
  const RuntimeEstimate e = h.Estimate(Job("alice", "train", 8));
  REQUIRE(e.known());
  CHECK(e.basis == EstimateBasis::kUserAndName);
  CHECK(e.samples == 3);
  CHECK(e.typical == absl::Seconds(200));
  CHECK(e.high == absl::Seconds(300));
}

TEST_CASE("the most specific group with enough runs gives the estimate") {
  RuntimeHistory h;
  Record(h, Job("alice", "train", 8), {1000, 1000, 1000});
  Record(h, Job("alice", "eval", 8), {10, 10, 10});
  Record(h, Job("bob", "x", 1), {50, 50, 50});
  // Same user and name.
  CHECK(h.Estimate(Job("alice", "train", 8)).typical == absl::Seconds(1000));
  CHECK(h.Estimate(Job("alice", "eval", 8)).typical == absl::Seconds(10));
  // A new name: alice's jobs of 5-8 GPUs (the median of all six runs).
  const RuntimeEstimate by_size = h.Estimate(Job("alice", "new", 6));
  CHECK(by_size.basis == EstimateBasis::kUserAndSize);
  CHECK(by_size.samples == 6);
  // Another user of that size: every user's jobs of that size.
  CHECK(h.Estimate(Job("carol", "new", 8)).basis == EstimateBasis::kSize);
  // A size nobody ran: all jobs.
  const RuntimeEstimate all = h.Estimate(Job("carol", "new", 64));
  CHECK(all.basis == EstimateBasis::kAll);
  CHECK(all.samples == 9);
  CHECK(all.Describe(Job("carol", "new", 64)) == "from the last 9 runs of any job");
}

TEST_CASE("the estimate follows the recent runs and says how uncertain it is") {
  RuntimeHistory h;
  const v1::JobSpec job = Job("alice", "train", 1);
  for (int i = 0; i < RuntimeHistory::kKept; ++i) h.Record(job, absl::Seconds(10));
  CHECK(h.Estimate(job).high == absl::Seconds(10));
  // The old runs drop out of the ring one by one.
  for (int i = 0; i < RuntimeHistory::kKept; ++i) h.Record(job, absl::Seconds(i < 4 ? 5000 : 100));
  const RuntimeEstimate e = h.Estimate(job);
  CHECK(e.samples == RuntimeHistory::kKept);
  CHECK(e.typical == absl::Seconds(100));
  CHECK(e.high == absl::Seconds(5000));  // 4 of 32 runs took 50x longer: backfill plans with them
  CHECK(e.mean == absl::Seconds((4 * 5000 + 28 * 100) / 32.0));  // and costs are weighed with them
}

}  // namespace
}  // namespace gpusched::core
