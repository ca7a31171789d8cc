#include "daemon/store/sqlite_job_store.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>

#include "daemon/store/migrations.h"
#include "daemon/store/sqlite_job_reader.h"
#include "tests/support/temp_dir.h"

using namespace gpusched;
namespace fs = std::filesystem;

namespace {

// A fresh state file's path, in a directory removed when the tests end.
std::string TempDbPath() {
  static int n = 0;
  static const testing::TempDir dir;
  return dir / ("state-" + std::to_string(n++) + ".db");
}

}  // namespace

TEST_CASE("a state file from a newer gpuschedd is refused, not touched") {
  const std::string path = TempDbPath();
  {
    auto db = store::SqliteDb::Open(path, false);
    REQUIRE(db.ok());
    REQUIRE((*db)->Exec("PRAGMA user_version = 99").ok());
  }
  auto store = store::SqliteJobStore::Open(path);
  REQUIRE_FALSE(store.ok());
  CHECK(store.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(store.status().message().find("schema version 99") != std::string::npos);
}

TEST_CASE("the file is in WAL mode and at the latest schema") {
  const std::string path = TempDbPath();
  REQUIRE(store::SqliteJobStore::Open(path).ok());
  auto db = store::SqliteDb::Open(path, true);
  auto mode = (*db)->Prepare("PRAGMA journal_mode");
  REQUIRE(mode.ok());
  REQUIRE(*mode->Step());
  CHECK(mode->ColumnText(0) == "wal");
  auto version = (*db)->Prepare("PRAGMA user_version");
  REQUIRE(*version->Step());
  CHECK(version->ColumnInt(0) == store::LatestSchemaVersion());
}

TEST_CASE("a state file from before request ids were each user's own keeps its jobs and ids, now per user") {
  const std::string path = TempDbPath();
  auto job = [](uint64_t id, const std::string& user, v1::JobState state, const std::string& request) {
    v1::Job j;
    j.set_id(id);
    j.set_state(state);
    j.mutable_spec()->set_user(user);
    j.mutable_spec()->set_queue("default");
    j.set_client_request_id(request);
    return j;
  };
  // Every column of every row, as text.
  auto rows = [](store::SqliteDb& db) {
    auto select = db.Prepare(
        "SELECT id, state, user, queue, priority, submit_time_ns, quote(client_request_id), hex(job) FROM jobs "
        "ORDER BY id");
    REQUIRE(select.ok());
    std::vector<std::string> out;
    REQUIRE(select
                ->ForEachRow([&] {
                  std::string row;
                  for (int c = 0; c < 8; ++c) row += select->ColumnText(c) + "|";
                  out.push_back(row);
                  return absl::OkStatus();
                })
                .ok());
    return out;
  };
  std::vector<std::string> before;
  {
    auto db = store::SqliteDb::Open(path, false);
    REQUIRE(db.ok());
    REQUIRE(store::ApplyMigrations(**db, 3).ok());  // as gpuschedd wrote it before
    auto insert = (*db)->Prepare("INSERT INTO jobs VALUES(?1, ?2, ?3, 'default', ?4, ?5, ?6, ?7)");
    REQUIRE(insert.ok());
    for (const v1::Job& j : {job(1, "alice", v1::JOB_STATE_PENDING, "train-1"),
                             job(2, "bob", v1::JOB_STATE_COMPLETED, ""), job(3, "carol", v1::JOB_STATE_FAILED, "x")}) {
      insert->Bind(1, static_cast<int64_t>(j.id()))
          .Bind(2, int64_t{j.state()})
          .Bind(3, j.spec().user())
          .Bind(4, static_cast<int64_t>(j.id()) * 10)
          .Bind(5, 1'700'000'000'000'000'000 + static_cast<int64_t>(j.id()))
          .BindBlob(7, j.SerializeAsString());
      if (j.client_request_id().empty()) {
        insert->BindNull(6);
      } else {
        insert->Bind(6, j.client_request_id());
      }
      REQUIRE(insert->Run().ok());
    }
    before = rows(**db);
    REQUIRE(before.size() == 3);
  }
  auto store = store::SqliteJobStore::Open(path);
  REQUIRE(store.ok());
  {
    auto db = store::SqliteDb::Open(path, true);
    REQUIRE(db.ok());
    CHECK(rows(**db) == before);
    // The table's indexes were made again with it.
    auto indexes = (*db)->Prepare(
        "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'jobs' "
        "AND name IN ('jobs_by_state', 'jobs_by_user', 'jobs_by_queue')");
    REQUIRE(indexes.ok());
    REQUIRE(*indexes->Step());
    CHECK(indexes->ColumnInt(0) == 3);
  }
  auto recovered = (*store)->Recover();
  REQUIRE(recovered.ok());
  REQUIRE(recovered->unfinished_jobs.size() == 1);
  CHECK(recovered->unfinished_jobs[0].spec().user() == "alice");
  std::vector<ClientRequest> requests = recovered->client_requests;
  std::sort(requests.begin(), requests.end(), [](const auto& a, const auto& b) { return a.job_id < b.job_id; });
  CHECK(requests == std::vector<ClientRequest>{{"alice", "train-1", 1}, {"carol", "x", 3}});
  store::StoreBatch bobs;
  bobs.jobs = {job(4, "bob", v1::JOB_STATE_PENDING, "train-1")};
  CHECK((*store)->Commit(bobs).ok());
  store::StoreBatch alices_again;
  alices_again.jobs = {job(5, "alice", v1::JOB_STATE_PENDING, "train-1")};
  CHECK_FALSE((*store)->Commit(alices_again).ok());
}
