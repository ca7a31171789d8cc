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
