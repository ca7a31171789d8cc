#pragma once

#include "absl/status/status.h"
#include "daemon/store/sqlite_db.h"

namespace gpusched::store {

// The schema version this build writes. PRAGMA user_version holds the version
// of a database file.
int LatestSchemaVersion();

// Brings the database up to LatestSchemaVersion() (tests: an older
// `up_to`), each step in its own transaction. A file written by a newer
// gpuschedd is refused, not touched.
absl::Status ApplyMigrations(SqliteDb& db, int up_to = LatestSchemaVersion());

}  // namespace gpusched::store
