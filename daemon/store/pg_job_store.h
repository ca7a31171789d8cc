#pragma once

#include <cstdint>
#include <memory>

#include "daemon/store/job_store.h"
#include "daemon/store/pg_connection.h"
#include "daemon/store/store_url.h"

namespace gpusched::store {

// JobStore on PostgreSQL: a commit is one transaction, durable on the
// server (synchronous_commit, and the replicas it waits for) when Commit
// returns. Once fenced (FenceWith), every commit also checks in its own
// transaction that the leader row's epoch is still this replica's, so a
// replica that lost the leadership can never write after the next leader
// took over (fencing.h).
class PgJobStore final : public JobStore {
 public:
  // Connects and migrates the database to the current schema. Without
  // `create`, a database with no gpusched tables is refused: a wrong
  // database name must not pass for a new, empty cluster.
  static absl::StatusOr<std::unique_ptr<PgJobStore>> Open(const StoreUrl& url, bool create);

  // The database migrated to the current schema, without a store: `gpuschedd
  // init`, and a replica before it stands by. True when it made a new, empty
  // state (`create`); false when the database held one already.
  static absl::StatusOr<bool> Prepare(const StoreUrl& url, bool create);

  absl::StatusOr<RecoveredState> Recover() override;
  absl::Status Commit(const StoreBatch& batch) override;
  void FenceWith(int64_t epoch) { epoch_ = epoch; }

 private:
  explicit PgJobStore(std::unique_ptr<PgConnection> db) : db_(std::move(db)) {}
  absl::Status CheckEpoch();
  absl::Status WriteBatch(const StoreBatch& batch);

  std::unique_ptr<PgConnection> db_;
  int64_t epoch_ = -1;  // -1: not fenced (a single replica, tests)
};

}  // namespace gpusched::store
