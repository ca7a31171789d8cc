#pragma once

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace gpusched::store {

// The statements of one read (a job's row, then the array record that may
// cover its id, then its events) in one transaction, so that they see one
// state of the store: a commit between two of them could make an array
// task's job seen neither as a task nor as a row. `Db` is SqliteDb or
// PgConnection; `begin` the statement that opens a read-only snapshot.
template <typename Db>
class ReadSnapshot {
 public:
  ReadSnapshot(Db& db, absl::string_view begin) : db_(db), began_(db.Exec(begin)) {}
  ~ReadSnapshot() {
    if (began_.ok()) db_.Exec("COMMIT").IgnoreError();
  }
  ReadSnapshot(const ReadSnapshot&) = delete;
  ReadSnapshot& operator=(const ReadSnapshot&) = delete;

  // Not OK when the transaction could not begin: the read fails with it.
  const absl::Status& began() const { return began_; }

 private:
  Db& db_;
  const absl::Status began_;
};

}  // namespace gpusched::store
