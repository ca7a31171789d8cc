// JobTable: where each job is (queue, placed, ended), what it remembers of
// ended jobs, request ids and arrays.
#include "daemon/core/job_table.h"

#include <catch2/catch.hpp>

#include "common/proto_time.h"

namespace gpusched::core {
namespace {

ActiveJob Pending(JobTable& table, int64_t priority = 0, absl::Time submitted = absl::UnixEpoch()) {
  ActiveJob a;
  a.job.set_id(table.TakeId());
  a.job.set_state(v1::JOB_STATE_PENDING);
  a.job.mutable_spec()->set_priority(priority);
  *a.job.mutable_submit_time() = ToProtoTime(submitted);
  return a;
}

std::vector<uint64_t> QueueOrder(const JobTable& table) {
  std::vector<uint64_t> ids;
  for (const auto& [key, a] : table.pending()) ids.push_back(a->job.id());
  return ids;
}

TEST_CASE("pending jobs queue by priority, then submit time, then id", "[job_table]") {
  JobTable table;
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  table.Add(Pending(table, 0, t0 + absl::Seconds(5)));   // 1
  table.Add(Pending(table, 0, t0));                      // 2
  table.Add(Pending(table, 10, t0 + absl::Seconds(9)));  // 3
  table.Add(Pending(table, 0, t0));                      // 4
  CHECK(QueueOrder(table) == std::vector<uint64_t>{3, 2, 4, 1});
  CHECK(table.placed().empty());
  CHECK(table.active().size() == 4);
}

TEST_CASE("a job placed leaves the queue; requeued it comes back at its old place", "[job_table]") {
  JobTable table;
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  ActiveJob& first = table.Add(Pending(table, 0, t0));
  table.Add(Pending(table, 0, t0 + absl::Seconds(1)));
  first.job.set_state(v1::JOB_STATE_STARTING);
  table.Place(first);
  CHECK(QueueOrder(table) == std::vector<uint64_t>{2});
  CHECK(table.IsPlaced(1));
  CHECK(table.StateOf(1) == v1::JOB_STATE_STARTING);

  first.job.set_state(v1::JOB_STATE_PENDING);
  table.Requeue(first);
  CHECK_FALSE(table.IsPlaced(1));
  CHECK(QueueOrder(table) == std::vector<uint64_t>{1, 2});
}

TEST_CASE("an ended job is forgotten but for how it ended", "[job_table]") {
  JobTable table;
  ActiveJob& placed = table.Add(Pending(table));
  table.Add(Pending(table));
  placed.job.set_state(v1::JOB_STATE_RUNNING);
  table.Place(placed);

  table.End(1, v1::JOB_STATE_COMPLETED);
  table.End(2, v1::JOB_STATE_CANCELLED);
  CHECK(table.active().empty());
  CHECK(table.pending().empty());
  CHECK(table.placed().empty());
  CHECK(table.Find(1) == nullptr);
  CHECK(table.StateOf(1) == v1::JOB_STATE_COMPLETED);
  CHECK(table.EndedAs(2) == v1::JOB_STATE_CANCELLED);
  CHECK_FALSE(table.StateOf(3).has_value());  // never a job
  CHECK_FALSE(table.EndedAs(3).has_value());
}

TEST_CASE("a restored table goes on after the largest id and knows the jobs restored as placed", "[job_table]") {
  JobTable table;
  table.ContinueAfter(41);
  ActiveJob running;
  running.job.set_id(17);
  running.job.set_state(v1::JOB_STATE_RUNNING);
  table.Add(std::move(running));
  table.RestoreEnded(9, v1::JOB_STATE_FAILED);
  CHECK(table.TakeId() == 42);
  CHECK(table.IsPlaced(17));
  CHECK(table.pending().empty());
  CHECK(table.StateOf(9) == v1::JOB_STATE_FAILED);
}

TEST_CASE("request ids find the job their user submitted; an empty one finds nothing", "[job_table]") {
  JobTable table;
  table.RememberRequest("alice", "req-a", 5);
  table.RememberRequest("alice", "", 6);
  table.RememberRequest("bob", "req-a", 7);
  CHECK(table.RequestedAs("alice", "req-a") == uint64_t{5});
  CHECK(table.RequestedAs("bob", "req-a") == uint64_t{7});
  CHECK_FALSE(table.RequestedAs("carol", "req-a").has_value());
  CHECK_FALSE(table.RequestedAs("alice", "req-b").has_value());
  CHECK_FALSE(table.RequestedAs("alice", "").has_value());
}

TEST_CASE("an array's active tasks are found by its id, and its size is kept after they end", "[job_table]") {
  JobTable table;
  table.Add(Pending(table));  // 1: on its own
  const uint64_t array_id = table.next_id();
  table.NoteArray(array_id, 3);
  for (int32_t index = 0; index < 3; ++index) {
    ActiveJob task = Pending(table);
    task.job.mutable_array()->set_array_id(array_id);
    task.job.mutable_array()->set_index(index);
    table.Add(std::move(task));
  }
  table.Add(Pending(table));  // 5: after the array
  CHECK(table.ActiveTasks(array_id, 1000) == std::vector<uint64_t>{2, 3, 4});
  CHECK(table.ActiveTasks(array_id, 2) == std::vector<uint64_t>{2, 3});  // no array is longer than that
  CHECK(table.ActiveTasks(1, 1000).empty());                             // job 1 is no array

  for (uint64_t id : {2, 3, 4}) table.End(id, v1::JOB_STATE_COMPLETED);
  CHECK(table.ActiveTasks(array_id, 1000).empty());
  CHECK(table.TasksOf(array_id) == 3);
  CHECK(table.TasksOf(1) == 1);
}

}  // namespace
}  // namespace gpusched::core
