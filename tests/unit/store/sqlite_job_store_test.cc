#include "daemon/store/sqlite_job_store.h"

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
  auto job = [](uint64_t id, const std::string& user) {
    v1::Job j;
    j.set_id(id);
    j.set_state(v1::JOB_STATE_PENDING);
    j.mutable_spec()->set_user(user);
    j.mutable_spec()->set_queue("default");
    j.set_client_request_id("train-1");
    return j;
  };
  {
    auto db = store::SqliteDb::Open(path, false);
    REQUIRE(db.ok());
    REQUIRE(store::ApplyMigrations(**db, 3).ok());  // as gpuschedd wrote it before
    auto insert = (*db)->Prepare("INSERT INTO jobs VALUES(1, ?1, 'alice', 'default', 0, 0, 'train-1', ?2)");
    REQUIRE(insert.ok());
    insert->Bind(1, int64_t{v1::JOB_STATE_PENDING}).BindBlob(2, job(1, "alice").SerializeAsString());
    REQUIRE(insert->Step().ok());
  }
  auto store = store::SqliteJobStore::Open(path);
  REQUIRE(store.ok());
  auto recovered = (*store)->Recover();
  REQUIRE(recovered.ok());
  REQUIRE(recovered->unfinished_jobs.size() == 1);
  CHECK(recovered->unfinished_jobs[0].spec().user() == "alice");
  CHECK(recovered->client_requests == std::vector<ClientRequest>{{"alice", "train-1", 1}});
  store::StoreBatch bobs;
  bobs.jobs = {job(2, "bob")};
  CHECK((*store)->Commit(bobs).ok());
  store::StoreBatch alices_again;
  alices_again.jobs = {job(3, "alice")};
  CHECK_FALSE((*store)->Commit(alices_again).ok());
  // The table's indexes were made again with it.
  auto db = store::SqliteDb::Open(path, true);
  REQUIRE(db.ok());
  auto indexes = (*db)->Prepare(
      "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'jobs' "
      "AND name IN ('jobs_by_state', 'jobs_by_user', 'jobs_by_queue')");
  REQUIRE(indexes.ok());
  REQUIRE(*indexes->Step());
  CHECK(indexes->ColumnInt(0) == 3);
}
