#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "daemon/store/job_store.h"
#include "daemon/store/pg_connection.h"
#include "daemon/store/store_url.h"

namespace gpusched::store {

// A view of the PostgreSQL store for one thread, on a connection of its
// own: it sees committed transactions only.
class PgJobReader final : public JobReader {
 public:
  // The schema must be there (PgJobStore::Open makes it).
  static absl::StatusOr<std::unique_ptr<PgJobReader>> Open(const StoreUrl& url);

  absl::StatusOr<std::optional<v1::Job>> GetJob(uint64_t id, bool with_events) override;
  absl::StatusOr<JobPage> ListJobs(const JobFilter& filter, int limit, uint64_t after_id) override;

 private:
  explicit PgJobReader(std::unique_ptr<PgConnection> db) : db_(std::move(db)) {}
  // The task a record stands for, as GetJob shows it; nullopt: none.
  absl::StatusOr<std::optional<v1::Job>> ArrayTask(uint64_t id);
  // GetJob and ListJobs, inside their read snapshot.
  absl::StatusOr<std::optional<v1::Job>> ReadJob(uint64_t id, bool with_events);
  absl::StatusOr<JobPage> ReadJobs(const JobFilter& filter, int limit, uint64_t after_id);
  std::unique_ptr<PgConnection> db_;
};

// Every job array's record in the store, by id; or only the one that may
// stand for the job `covering`. The reader's pages and the store's recovery
// both read them so.
absl::StatusOr<std::vector<JobArrayRecord>> ReadArrayRecords(PgConnection& db, std::optional<uint64_t> covering);

}  // namespace gpusched::store
