#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "daemon/store/job_store.h"
#include "daemon/store/sqlite_db.h"

namespace gpusched::store {

// Read-only view of the state file for one thread.
class SqliteJobReader final : public JobReader {
 public:
  // The file must exist (SqliteJobStore::Open creates it).
  static absl::StatusOr<std::unique_ptr<SqliteJobReader>> Open(const std::string& path);

  absl::StatusOr<std::optional<v1::Job>> GetJob(uint64_t id, bool with_events) override;
  absl::StatusOr<JobPage> ListJobs(const JobFilter& filter, int limit, uint64_t after_id) override;

 private:
  explicit SqliteJobReader(std::unique_ptr<SqliteDb> db) : db_(std::move(db)) {}
  // The task a record stands for, as GetJob shows it; nullopt: none.
  absl::StatusOr<std::optional<v1::Job>> ArrayTask(uint64_t id);
  // GetJob and ListJobs, inside their read snapshot.
  absl::StatusOr<std::optional<v1::Job>> ReadJob(uint64_t id, bool with_events);
  absl::StatusOr<JobPage> ReadJobs(const JobFilter& filter, int limit, uint64_t after_id);
  std::unique_ptr<SqliteDb> db_;
};

// Every job array's record in the store, by id; or only the one that may
// stand for the job `covering`. The reader's pages and the store's recovery
// both read them so.
absl::StatusOr<std::vector<JobArrayRecord>> ReadArrayRecords(SqliteDb& db, std::optional<uint64_t> covering);

}  // namespace gpusched::store
