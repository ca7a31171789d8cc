// What the daemon keeps behaves the same on both engines: each case runs
// on a SQLite file and on a database of a real PostgreSQL server.

#include <algorithm>
#include <catch2/catch.hpp>
#include <vector>

#include "common/proto_time.h"
#include "tests/skip.h"
#include "tests/unit/store/store_engines.h"

using namespace gpusched;
using gpusched::testing::PostgresEngine;
using gpusched::testing::SqliteEngine;

namespace {

v1::Job MakeJob(uint64_t id, v1::JobState state, const std::string& user = "alice", const std::string& request = "") {
  v1::Job job;
  job.set_id(id);
  job.set_state(state);
  job.mutable_spec()->set_user(user);
  job.mutable_spec()->set_queue("default");
  job.mutable_spec()->add_argv("/bin/true");
  job.set_client_request_id(request);
  *job.mutable_submit_time() = ToProtoTime(absl::FromUnixSeconds(1'700'000'000 + id));
  return job;
}

v1::JobEvent Event(uint64_t id, v1::JobState state, const std::string& reason) {
  v1::JobEvent e;
  e.set_job_id(id);
  e.set_state(state);
  e.set_reason(reason);
  *e.mutable_time() = ToProtoTime(absl::FromUnixSeconds(1'700'000'100));
  return e;
}

}  // namespace

TEMPLATE_TEST_CASE("committed jobs, events and nodes come back after reopening the store", "", SqliteEngine,
                   PostgresEngine) {
  TestType engine;
  if (!engine.skipped().empty()) GPUSCHED_SKIP(engine.skipped());
  {
    auto store = engine.OpenStore();
    REQUIRE(store.ok());
    store::StoreBatch batch;
    batch.jobs = {MakeJob(1, v1::JOB_STATE_COMPLETED, "alice", "r1"), MakeJob(2, v1::JOB_STATE_RUNNING),
                  MakeJob(3, v1::JOB_STATE_PENDING, "bob")};
    batch.events = {Event(1, v1::JOB_STATE_PENDING, "submitted"), Event(1, v1::JOB_STATE_COMPLETED, "done")};
    v1::Node node;
    node.mutable_info()->set_name("gpu01");
    node.set_gpus_free(3);
    batch.nodes = {node};
    REQUIRE((*store)->Commit(batch).ok());
  }
  auto store = engine.OpenStore();
  REQUIRE(store.ok());
  auto recovered = (*store)->Recover();
  REQUIRE(recovered.ok());
  REQUIRE(recovered->unfinished_jobs.size() == 2);
  CHECK(recovered->unfinished_jobs[0].id() == 2);
  CHECK(recovered->unfinished_jobs[1].id() == 3);
  CHECK(recovered->max_job_id == 3);
  REQUIRE(recovered->nodes.size() == 1);
  CHECK(recovered->nodes[0].gpus_free() == 3);
  REQUIRE(recovered->client_requests.size() == 1);
  CHECK(recovered->client_requests[0] == ClientRequest{"alice", "r1", 1});

  auto reader = engine.OpenReader();
  REQUIRE(reader.ok());
  auto job = (*reader)->GetJob(1, true);
  REQUIRE(job.ok());
  REQUIRE(job->has_value());
  REQUIRE((*job)->events_size() == 2);
  CHECK((*job)->events(1).reason() == "done");
  auto missing = (*reader)->GetJob(42, true);
  REQUIRE(missing.ok());
  CHECK_FALSE(missing->has_value());
}

TEMPLATE_TEST_CASE("a later write of the same job replaces its row", "", SqliteEngine, PostgresEngine) {
  TestType engine;
  if (!engine.skipped().empty()) GPUSCHED_SKIP(engine.skipped());
  auto store = engine.OpenStore();
  REQUIRE(store.ok());
  store::StoreBatch first;
  first.jobs = {MakeJob(7, v1::JOB_STATE_PENDING)};
  REQUIRE((*store)->Commit(first).ok());
  store::StoreBatch second;
  second.jobs = {MakeJob(7, v1::JOB_STATE_FAILED)};
  second.jobs[0].set_exit_code(3);
  REQUIRE((*store)->Commit(second).ok());
  auto reader = engine.OpenReader();
  auto job = (*reader)->GetJob(7, false);
  REQUIRE(job.ok());
  CHECK((*job)->state() == v1::JOB_STATE_FAILED);
  CHECK((*job)->exit_code() == 3);
}

TEMPLATE_TEST_CASE("a batch that cannot be written leaves nothing behind", "", SqliteEngine, PostgresEngine) {
  TestType engine;
  if (!engine.skipped().empty()) GPUSCHED_SKIP(engine.skipped());
  auto store = engine.OpenStore();
  REQUIRE(store.ok());
  store::StoreBatch ok;
  ok.jobs = {MakeJob(1, v1::JOB_STATE_PENDING, "alice", "same")};
  REQUIRE((*store)->Commit(ok).ok());
  store::StoreBatch bad;  // job 2 is fine, job 3 reuses a request id: the whole batch must fail
  bad.jobs = {MakeJob(2, v1::JOB_STATE_PENDING), MakeJob(3, v1::JOB_STATE_PENDING, "alice", "same")};
  bad.events = {Event(2, v1::JOB_STATE_PENDING, "submitted")};
  CHECK_FALSE((*store)->Commit(bad).ok());
  auto reader = engine.OpenReader();
  auto two = (*reader)->GetJob(2, true);
  REQUIRE(two.ok());
  CHECK_FALSE(two->has_value());
  // And the store still works afterwards.
  store::StoreBatch after;
  after.jobs = {MakeJob(4, v1::JOB_STATE_PENDING)};
  CHECK((*store)->Commit(after).ok());
}

TEMPLATE_TEST_CASE("a client request id is its user's own: two users may pick the same, one user not twice", "",
                   SqliteEngine, PostgresEngine) {
  TestType engine;
  if (!engine.skipped().empty()) GPUSCHED_SKIP(engine.skipped());
  {
    auto store = engine.OpenStore();
    REQUIRE(store.ok());
    store::StoreBatch both;
    both.jobs = {MakeJob(1, v1::JOB_STATE_PENDING, "alice", "train-1"),
                 MakeJob(2, v1::JOB_STATE_PENDING, "bob", "train-1")};
    REQUIRE((*store)->Commit(both).ok());
    store::StoreBatch again;
    again.jobs = {MakeJob(3, v1::JOB_STATE_PENDING, "alice", "train-1")};
    CHECK_FALSE((*store)->Commit(again).ok());
  }
  auto store = engine.OpenStore();
  REQUIRE(store.ok());
  auto recovered = (*store)->Recover();
  REQUIRE(recovered.ok());
  std::vector<ClientRequest> requests = recovered->client_requests;
  std::sort(requests.begin(), requests.end(), [](const auto& a, const auto& b) { return a.job_id < b.job_id; });
  CHECK(requests == std::vector<ClientRequest>{{"alice", "train-1", 1}, {"bob", "train-1", 2}});
  CHECK(recovered->max_job_id == 2);
}

TEMPLATE_TEST_CASE("ListJobs filters by state, user and queue, and pages by id", "", SqliteEngine, PostgresEngine) {
  TestType engine;
  if (!engine.skipped().empty()) GPUSCHED_SKIP(engine.skipped());
  auto store = engine.OpenStore();
  REQUIRE(store.ok());
  store::StoreBatch batch;
  for (uint64_t id = 1; id <= 25; ++id) {
    batch.jobs.push_back(
        MakeJob(id, id % 2 ? v1::JOB_STATE_PENDING : v1::JOB_STATE_COMPLETED, id % 5 == 0 ? "bob" : "alice"));
  }
  REQUIRE((*store)->Commit(batch).ok());
  auto reader = engine.OpenReader();
  REQUIRE(reader.ok());

  store::JobFilter pending;
  pending.states = {v1::JOB_STATE_PENDING};
  std::vector<uint64_t> seen;
  uint64_t after = 0;
  int pages = 0;
  do {
    auto page = (*reader)->ListJobs(pending, 5, after);
    REQUIRE(page.ok());
    for (const auto& job : page->jobs) seen.push_back(job.id());
    after = page->last_id;
    ++pages;
  } while (after != 0);
  CHECK(seen.size() == 13);
  CHECK(pages == 3);
  CHECK(std::is_sorted(seen.begin(), seen.end()));

  store::JobFilter bob;
  bob.user = "bob";
  auto page = (*reader)->ListJobs(bob, 100, 0);
  REQUIRE(page.ok());
  CHECK(page->jobs.size() == 5);
  CHECK(page->last_id == 0);
  store::JobFilter other_queue;
  other_queue.queue = "gold";
  CHECK((*reader)->ListJobs(other_queue, 100, 0)->jobs.empty());
}

TEMPLATE_TEST_CASE("fair-share usage is kept in one row: the latest batch's, and none until a batch carries it", "",
                   SqliteEngine, PostgresEngine) {
  TestType engine;
  if (!engine.skipped().empty()) GPUSCHED_SKIP(engine.skipped());
  {
    auto store = engine.OpenStore();
    REQUIRE(store.ok());
    auto fresh = (*store)->Recover();
    REQUIRE(fresh.ok());
    CHECK_FALSE(fresh->fair_share.has_value());
    for (double alice : {100.0, 250.5}) {
      store::StoreBatch batch;
      v1::FairShareUsage usage;
      *usage.mutable_at() = ToProtoTime(absl::FromUnixSeconds(1'700'000'000));
      (*usage.mutable_users())["alice"] = alice;
      (*usage.mutable_accounts())["ml"] = alice;
      batch.fair_share = usage;
      REQUIRE((*store)->Commit(batch).ok());
    }
  }
  auto store = engine.OpenStore();
  REQUIRE(store.ok());
  auto recovered = (*store)->Recover();
  REQUIRE(recovered.ok());
  REQUIRE(recovered->fair_share.has_value());
  CHECK(recovered->fair_share->users().at("alice") == 250.5);
  CHECK(recovered->fair_share->accounts().at("ml") == 250.5);
  CHECK(FromProtoTime(recovered->fair_share->at()) == absl::FromUnixSeconds(1'700'000'000));
}

TEMPLATE_TEST_CASE("recovery returns the latest runs that ended on their own, oldest first, to learn run times from",
                   "", SqliteEngine, PostgresEngine) {
  TestType engine;
  if (!engine.skipped().empty()) GPUSCHED_SKIP(engine.skipped());
  {
    auto store = engine.OpenStore();
    REQUIRE(store.ok());
    REQUIRE((*store)->Recover().ok());
    store::StoreBatch batch;
    auto ran = [](v1::Job job, int64_t seconds) {
      *job.mutable_start_time() = ToProtoTime(absl::FromUnixSeconds(1'700'000'100));
      *job.mutable_end_time() = ToProtoTime(absl::FromUnixSeconds(1'700'000'100 + seconds));
      return job;
    };
    batch.jobs = {ran(MakeJob(1, v1::JOB_STATE_COMPLETED), 60),
                  ran(MakeJob(2, v1::JOB_STATE_FAILED), 5),
                  ran(MakeJob(3, v1::JOB_STATE_CANCELLED), 999),  // stopped: says nothing of its run time
                  MakeJob(4, v1::JOB_STATE_FAILED),               // never started
                  ran(MakeJob(5, v1::JOB_STATE_COMPLETED), 3600),
                  MakeJob(6, v1::JOB_STATE_PENDING)};
    REQUIRE((*store)->Commit(batch).ok());
  }
  auto store = engine.OpenStore();
  REQUIRE(store.ok());
  auto recovered = (*store)->Recover();
  REQUIRE(recovered.ok());
  std::vector<uint64_t> ids;
  for (const v1::Job& job : recovered->recent_runs) ids.push_back(job.id());
  CHECK(ids == std::vector<uint64_t>{1, 2, 5});
  CHECK(FromProtoTime(recovered->recent_runs[2].end_time()) - FromProtoTime(recovered->recent_runs[2].start_time()) ==
        absl::Seconds(3600));
}

TEMPLATE_TEST_CASE("a job array's record stands for its tasks not yet made jobs: recovered, read, listed, deleted", "",
                   SqliteEngine, PostgresEngine) {
  TestType engine;
  if (!engine.skipped().empty()) GPUSCHED_SKIP(engine.skipped());
  // Array 10: tasks 10-19 (indices 0,2,...,18); tasks 10-12 are jobs. Job 9 before it, job 20 after.
  JobArrayRecord record;
  record.prototype = MakeJob(10, v1::JOB_STATE_PENDING, "alice", "req-a");
  record.prototype.set_held(true);
  record.prototype.set_reason("held: waits until released (gpusched release)");
  v1::ArrayTask* array = record.prototype.mutable_array();
  array->set_array_id(10);
  array->set_count(10);
  record.indices = "0-18:2";
  record.materialized = 3;
  {
    auto store = engine.OpenStore();
    REQUIRE(store.ok());
    store::StoreBatch batch;
    batch.jobs = {MakeJob(9, v1::JOB_STATE_PENDING), MakeJob(20, v1::JOB_STATE_PENDING, "bob")};
    for (int position = 0; position < 3; ++position)
      batch.jobs.push_back(ArrayRecordTask(record, position, 2 * position));
    batch.arrays = {record};
    REQUIRE((*store)->Commit(batch).ok());
  }
  auto store = engine.OpenStore();
  REQUIRE(store.ok());
  auto recovered = (*store)->Recover();
  REQUIRE(recovered.ok());
  REQUIRE(recovered->arrays.size() == 1);
  CHECK(recovered->arrays[0].indices == "0-18:2");
  CHECK(recovered->arrays[0].materialized == 3);
  CHECK(recovered->arrays[0].prototype.held());
  CHECK(recovered->arrays[0].array_id() == 10);

  auto reader = engine.OpenReader();
  REQUIRE(reader.ok());
  auto task = (*reader)->GetJob(17, /*with_events=*/true);
  REQUIRE(task.ok());
  REQUIRE(task->has_value());
  CHECK((*task)->id() == 17);
  CHECK((*task)->array().index() == 14);
  CHECK((*task)->state() == v1::JOB_STATE_PENDING);
  CHECK((*task)->held());
  CHECK((*task)->client_request_id().empty());
  CHECK((*reader)->GetJob(12, false)->value().array().index() == 4);  // a job: its own row
  CHECK_FALSE((*reader)->GetJob(21, false)->has_value());

  // Pages by id across rows and the record's tasks alike.
  store::JobFilter pending;
  pending.states = {v1::JOB_STATE_PENDING};
  std::vector<uint64_t> seen;
  uint64_t after = 0;
  do {
    auto page = (*reader)->ListJobs(pending, 4, after);
    REQUIRE(page.ok());
    for (const auto& job : page->jobs) seen.push_back(job.id());
    after = page->last_id;
  } while (after != 0);
  CHECK(seen == std::vector<uint64_t>{9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20});
  store::JobFilter bob;
  bob.user = "bob";
  CHECK((*reader)->ListJobs(bob, 100, 0)->jobs.size() == 1);
  store::JobFilter running;
  running.states = {v1::JOB_STATE_RUNNING};
  CHECK((*reader)->ListJobs(running, 100, 0)->jobs.empty());

  // Every task made: the record goes.
  store::StoreBatch done;
  record.materialized = 10;
  done.arrays = {record};
  REQUIRE((*store)->Commit(done).ok());
  CHECK((*store)->Recover()->arrays.empty());
  CHECK_FALSE((*reader)->GetJob(17, false)->has_value());
}
