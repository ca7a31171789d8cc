#pragma once

#include <memory>
#include <string>

#include "daemon/store/job_store.h"
#include "daemon/store/sqlite_db.h"

namespace gpusched::store {

// JobStore on one SQLite file in WAL mode with synchronous=FULL: a commit is on
// disk when Commit returns, and readers (SqliteJobReader) never block it.
class SqliteJobStore final : public JobStore {
 public:
  // Creates the file if needed and migrates it to the current schema.
  static absl::StatusOr<std::unique_ptr<SqliteJobStore>> Open(const std::string& path);

  absl::StatusOr<RecoveredState> Recover() override;
  absl::Status Commit(const StoreBatch& batch) override;

 private:
  explicit SqliteJobStore(std::unique_ptr<SqliteDb> db) : db_(std::move(db)) {}
  absl::Status PrepareStatements();
  absl::Status WriteBatch(const StoreBatch& batch);

  std::unique_ptr<SqliteDb> db_;
  std::unique_ptr<Statement> upsert_job_;
  std::unique_ptr<Statement> insert_event_;
  std::unique_ptr<Statement> upsert_node_;
  std::unique_ptr<Statement> upsert_fair_share_;
  std::unique_ptr<Statement> upsert_array_;
  std::unique_ptr<Statement> delete_array_;
};

}  // namespace gpusched::store
