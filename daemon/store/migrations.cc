#include "daemon/store/migrations.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"

namespace gpusched::store {
namespace {

// Append only: a released step is never edited, since databases in the field
// have already run it.
const std::vector<const char*>& Steps() {
  static const std::vector<const char*> steps = {
      // 1: jobs, their event history, nodes.
      R"sql(
        CREATE TABLE jobs (
          id                INTEGER PRIMARY KEY,
          state             INTEGER NOT NULL,
          user              TEXT NOT NULL,
          queue             TEXT NOT NULL,
          priority          INTEGER NOT NULL,
          submit_time_ns    INTEGER NOT NULL,
          client_request_id TEXT UNIQUE,
          job               BLOB NOT NULL  -- gpusched.v1.Job without events
        );
        CREATE INDEX jobs_by_state ON jobs(state, id);
        CREATE INDEX jobs_by_user ON jobs(user, id);
        CREATE INDEX jobs_by_queue ON jobs(queue, id);
        CREATE TABLE job_events (
          seq     INTEGER PRIMARY KEY AUTOINCREMENT,
          job_id  INTEGER NOT NULL,
          time_ns INTEGER NOT NULL,
          state   INTEGER NOT NULL,
          reason  TEXT NOT NULL
        );
        CREATE INDEX job_events_by_job ON job_events(job_id, seq);
        CREATE TABLE nodes (
          name TEXT PRIMARY KEY,
          node BLOB NOT NULL  -- gpusched.v1.Node
        );
      )sql",
      // 2: fair-share usage, one row, so that a restart does not forget who used what.
      R"sql(
        CREATE TABLE fair_share (
          id    INTEGER PRIMARY KEY CHECK (id = 1),
          usage BLOB NOT NULL  -- gpusched.v1.FairShareUsage
        );
      )sql",
      // 3: job arrays as one record each, until their tasks are made jobs
      // (common/job_array_record.h).
      R"sql(
        CREATE TABLE job_arrays (
          array_id     INTEGER PRIMARY KEY,
          indices      TEXT NOT NULL,
          materialized INTEGER NOT NULL,
          prototype    BLOB NOT NULL  -- gpusched.v1.Job every task shares
        );
      )sql",
      // 4: a client request id is its user's own (common/client_request.h):
      // unique per user, no longer across users. SQLite cannot drop a
      // column's UNIQUE, so the table is made anew and its rows copied.
      R"sql(
        CREATE TABLE jobs_v4 (
          id                INTEGER PRIMARY KEY,
          state             INTEGER NOT NULL,
          user              TEXT NOT NULL,
          queue             TEXT NOT NULL,
          priority          INTEGER NOT NULL,
          submit_time_ns    INTEGER NOT NULL,
          client_request_id TEXT,
          job               BLOB NOT NULL,  -- gpusched.v1.Job without events
          UNIQUE (user, client_request_id)
        );
        INSERT INTO jobs_v4 SELECT id, state, user, queue, priority, submit_time_ns, client_request_id, job FROM jobs;
        DROP TABLE jobs;
        ALTER TABLE jobs_v4 RENAME TO jobs;
        CREATE INDEX jobs_by_state ON jobs(state, id);
        CREATE INDEX jobs_by_user ON jobs(user, id);
        CREATE INDEX jobs_by_queue ON jobs(queue, id);
      )sql",
  };
  return steps;
}

absl::StatusOr<int> UserVersion(SqliteDb& db) {
  auto stmt = db.Prepare("PRAGMA user_version");
  if (!stmt.ok()) return stmt.status();
  auto row = stmt->Step();
  if (!row.ok()) return row.status();
  return static_cast<int>(stmt->ColumnInt(0));
}

}  // namespace

int LatestSchemaVersion() { return static_cast<int>(Steps().size()); }

absl::Status ApplyMigrations(SqliteDb& db, int up_to) {
  auto version = UserVersion(db);
  if (!version.ok()) return version.status();
  if (*version > LatestSchemaVersion()) {
    return absl::FailedPreconditionError(absl::StrCat(db.path(), " has schema version ", *version,
                                                      " but this gpuschedd knows only up to ", LatestSchemaVersion(),
                                                      "; run a newer gpuschedd or restore a backup"));
  }
  for (int v = *version; v < std::min(up_to, LatestSchemaVersion()); ++v) {
    std::string sql = absl::StrCat("BEGIN IMMEDIATE;", Steps()[v], "PRAGMA user_version = ", v + 1, ";COMMIT;");
    if (absl::Status s = db.Exec(sql); !s.ok()) {
      db.Exec("ROLLBACK").IgnoreError();
      return absl::InternalError(absl::StrCat("migrating ", db.path(), " to schema ", v + 1, ": ", s.message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace gpusched::store
