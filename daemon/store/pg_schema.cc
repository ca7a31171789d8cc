#include "daemon/store/pg_schema.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"

namespace gpusched::store {
namespace {

// Any number, the same in every replica: the transaction-scoped advisory
// lock that serializes migrations.
constexpr int64_t kMigrationLock = 0x6770757363686564;  // "gpusched"

// Append only: a released step is never edited, since databases in the field
// have already run it. The same tables as the SQLite file, every integer a
// BIGINT (PgRows::Int reads eight bytes).
const std::vector<const char*>& Steps() {
  static const std::vector<const char*> steps = {
      // 1: jobs, their event history, nodes, fair-share usage.
      R"sql(
        CREATE TABLE jobs (
          id                BIGINT PRIMARY KEY,
          state             BIGINT NOT NULL,
          "user"            TEXT NOT NULL,
          queue             TEXT NOT NULL,
          priority          BIGINT NOT NULL,
          submit_time_ns    BIGINT NOT NULL,
          client_request_id TEXT UNIQUE,
          job               BYTEA NOT NULL  -- gpusched.v1.Job without events
        );
        CREATE INDEX jobs_by_state ON jobs(state, id);
        CREATE INDEX jobs_by_user ON jobs("user", id);
        CREATE INDEX jobs_by_queue ON jobs(queue, id);
        CREATE TABLE job_events (
          seq     BIGSERIAL PRIMARY KEY,
          job_id  BIGINT NOT NULL,
          time_ns BIGINT NOT NULL,
          state   BIGINT NOT NULL,
          reason  TEXT NOT NULL
        );
        CREATE INDEX job_events_by_job ON job_events(job_id, seq);
        CREATE TABLE nodes (
          name TEXT PRIMARY KEY,
          node BYTEA NOT NULL  -- gpusched.v1.Node
        );
        CREATE TABLE fair_share (
          id    BIGINT PRIMARY KEY CHECK (id = 1),
          usage BYTEA NOT NULL  -- gpusched.v1.FairShareUsage
        );
      )sql",
      // 2: the active replica. `epoch` grows by one at each change of
      // leader and fences every commit; the lease, and the session the
      // leader renews it from (backend_pid, since renewed_at), say whether
      // the leader is still there.
      R"sql(
        CREATE TABLE leader (
          id          BIGINT PRIMARY KEY CHECK (id = 1),
          epoch       BIGINT NOT NULL,
          holder      TEXT NOT NULL,
          address     TEXT NOT NULL,
          backend_pid BIGINT NOT NULL,
          renewed_at  TIMESTAMPTZ NOT NULL,
          lease_until TIMESTAMPTZ NOT NULL
        );
        INSERT INTO leader VALUES (1, 0, '', '', 0, '-infinity', '-infinity');
      )sql",
      // 3: job arrays as one record each, until their tasks are made jobs
      // (common/job_array_record.h).
      R"sql(
        CREATE TABLE job_arrays (
          array_id     BIGINT PRIMARY KEY,
          indices      TEXT NOT NULL,
          materialized BIGINT NOT NULL,
          prototype    BYTEA NOT NULL  -- gpusched.v1.Job every task shares
        );
      )sql",
      // 4: a client request id is its user's own (common/client_request.h):
      // unique per user, no longer across users.
      R"sql(
        ALTER TABLE jobs DROP CONSTRAINT jobs_client_request_id_key;
        ALTER TABLE jobs ADD CONSTRAINT jobs_request_per_user UNIQUE ("user", client_request_id);
      )sql",
  };
  return steps;
}

}  // namespace

int LatestPgSchemaVersion() { return static_cast<int>(Steps().size()); }

absl::StatusOr<int> PgSchemaVersion(PgConnection& db) {
  auto table =
      db.Query("SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = 'gpusched_schema'");
  if (!table.ok()) return table.status();
  if (table->Int(0, 0) == 0) return 0;
  auto rows = db.Query("SELECT version FROM gpusched_schema");
  if (!rows.ok()) return rows.status();
  return rows->size() == 1 ? static_cast<int>(rows->Int(0, 0)) : 0;
}

absl::Status ApplyPgMigrations(PgConnection& db, int up_to) {
  while (true) {
    if (absl::Status s = db.Exec("BEGIN"); !s.ok()) return s;
    absl::Status step = db.Query(absl::StrCat("SELECT pg_advisory_xact_lock(", kMigrationLock, ")")).status();
    if (step.ok()) step = db.Exec("CREATE TABLE IF NOT EXISTS gpusched_schema (version BIGINT NOT NULL)");
    absl::StatusOr<int> version = step.ok() ? PgSchemaVersion(db) : step;
    if (!version.ok()) {
      db.Exec("ROLLBACK").IgnoreError();
      return version.status();
    }
    if (*version > LatestPgSchemaVersion()) {
      db.Exec("ROLLBACK").IgnoreError();
      return absl::FailedPreconditionError(
          absl::StrCat("the PostgreSQL database at ", db.shown(), " has gpusched schema version ", *version,
                       " but this gpuschedd knows only up to ", LatestPgSchemaVersion(), "; run a newer gpuschedd"));
    }
    if (*version >= std::min(up_to, LatestPgSchemaVersion())) return db.Exec("COMMIT");
    const std::string sql = absl::StrCat(Steps()[*version], "DELETE FROM gpusched_schema; INSERT INTO gpusched_schema ",
                                         "VALUES (", *version + 1, ");");
    step = db.Exec(sql);
    if (step.ok()) step = db.Exec("COMMIT");
    if (!step.ok()) {
      db.Exec("ROLLBACK").IgnoreError();
      return absl::InternalError(absl::StrCat("migrating the PostgreSQL database at ", db.shown(), " to schema ",
                                              *version + 1, ": ", step.message()));
    }
  }
}

}  // namespace gpusched::store
