#include "tests/unit/store/store_engines.h"

#include <catch2/catch.hpp>

#include "daemon/store/pg_job_reader.h"
#include "daemon/store/pg_job_store.h"
#include "daemon/store/sqlite_job_reader.h"
#include "daemon/store/sqlite_job_store.h"

namespace gpusched::testing {
namespace {

struct SharedServer {
  TempDir dir;
  absl::StatusOr<std::unique_ptr<PostgresServer>> server = PostgresServer::Start(dir.path().string());
};

SharedServer& Shared() {
  static SharedServer* shared = new SharedServer();  // stopped by the destructor below at exit
  static struct StopAtExit {
    ~StopAtExit() { delete shared; }
  } stop;
  return *shared;
}

}  // namespace

SqliteEngine::SqliteEngine() : path_(dir_ / "gpusched.db") {}

absl::StatusOr<std::unique_ptr<store::JobStore>> SqliteEngine::OpenStore() {
  auto store = store::SqliteJobStore::Open(path_);
  if (!store.ok()) return store.status();
  return std::unique_ptr<store::JobStore>(std::move(*store));
}

absl::StatusOr<std::unique_ptr<store::JobReader>> SqliteEngine::OpenReader() {
  auto reader = store::SqliteJobReader::Open(path_);
  if (!reader.ok()) return reader.status();
  return std::unique_ptr<store::JobReader>(std::move(*reader));
}

PostgresServer* PostgresEngine::server() {
  SharedServer& shared = Shared();
  return shared.server.ok() ? shared.server->get() : nullptr;
}

PostgresEngine::PostgresEngine() {
  SharedServer& shared = Shared();
  if (absl::IsNotFound(shared.server.status())) {
    skipped_ = std::string(shared.server.status().message());
    return;
  }
  REQUIRE(shared.server.ok());  // installed but failing: a failure, with why
  static int n = 0;
  auto url = (*shared.server)->CreateDatabase("store_" + std::to_string(++n));
  REQUIRE(url.ok());
  url_ = *url;
}

absl::StatusOr<std::unique_ptr<store::JobStore>> PostgresEngine::OpenStore() {
  auto parsed = store::ParseStoreUrl(url_);
  if (!parsed.ok()) return parsed.status();
  auto store = store::PgJobStore::Open(*parsed, /*create=*/true);
  if (!store.ok()) return store.status();
  return std::unique_ptr<store::JobStore>(std::move(*store));
}

absl::StatusOr<std::unique_ptr<store::JobReader>> PostgresEngine::OpenReader() {
  auto parsed = store::ParseStoreUrl(url_);
  if (!parsed.ok()) return parsed.status();
  auto reader = store::PgJobReader::Open(*parsed);
  if (!reader.ok()) return reader.status();
  return std::unique_ptr<store::JobReader>(std::move(*reader));
}

}  // namespace gpusched::testing
