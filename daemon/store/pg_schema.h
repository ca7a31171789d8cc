#pragma once

#include "absl/status/status.h"
#include "daemon/store/pg_connection.h"

namespace gpusched::store {

// The PostgreSQL schema version this build writes (its own numbering: the
// SQLite file's steps are in migrations.cc).
int LatestPgSchemaVersion();

// Brings the database up to LatestPgSchemaVersion() (tests: an older
// `up_to`), each step in its own transaction, under a lock so that replicas
// starting together migrate once. A database written by a newer gpuschedd
// is refused, not touched.
absl::Status ApplyPgMigrations(PgConnection& db, int up_to = LatestPgSchemaVersion());

// The schema version of the database; 0 when it has no gpusched tables.
absl::StatusOr<int> PgSchemaVersion(PgConnection& db);

}  // namespace gpusched::store
