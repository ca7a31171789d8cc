#pragma once

#include <cstdint>
#include <memory>

#include "daemon/store/job_store.h"
#include "daemon/store/pg_connection.h"
#include "daemon/store/store_url.h"

namespace gpusched::store {

// JobStore on PostgreSQL: a commit is one transaction, durable on the
// server (synchronous_commit, and the replicas it waits for) when Commit
// returns. Opened with a leader epoch, every commit also checks in its own
// transaction that the leader row's epoch is still this replica's, so a
// replica that lost the leadership can never write after the next leader
// took over (fencing.h).
class PgJobStore final : public JobStore {
 public:
  // Connects and migrates the database to the current schema. Without
  // `create`, a database with no gpusched tables is refused: a wrong
  // database name must not pass for a new, empty cluster. `epoch` >= 0:
  // every commit is fenced with it (a replica's; -1: a single daemon).
  static absl::StatusOr<std::unique_ptr<PgJobStore>> Open(const StoreUrl& url, bool create, int64_t epoch = -1);

  // The database migrated to the current schema, without a store: `gpuschedd
  // init`, and a replica before it stands by. True when it made a new, empty
  // state (`create`); false when the database held one already.
  static absl::StatusOr<bool> Prepare(const StoreUrl& url, bool create);

  absl::StatusOr<RecoveredState> Recover() override;
  absl::Status Commit(const StoreBatch& batch) override;

 private:
  PgJobStore(std::unique_ptr<PgConnection> db, int64_t epoch) : db_(std::move(db)), epoch_(epoch) {}
  absl::Status CheckEpoch();
  absl::Status WriteBatch(const StoreBatch& batch);

  std::unique_ptr<PgConnection> db_;
  const int64_t epoch_;  // -1: not fenced
};

}  // namespace gpusched::store
