#include "daemon/store/pg_job_reader.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/proto_time.h"
#include "daemon/store/array_rows.h"
#include "daemon/store/job_rows.h"
#include "daemon/store/read_snapshot.h"

namespace gpusched::store {
namespace {

// One snapshot for all the statements of a read (ReadSnapshot).
constexpr char kBeginRead[] = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";

}  // namespace

absl::StatusOr<std::unique_ptr<PgJobReader>> PgJobReader::Open(const StoreUrl& url) {
  auto db = PgConnection::Connect(url.postgres, url.shown);
  if (!db.ok()) return db.status();
  return std::unique_ptr<PgJobReader>(new PgJobReader(std::move(*db)));
}

absl::StatusOr<std::optional<v1::Job>> PgJobReader::GetJob(uint64_t id, bool with_events) {
  const ReadSnapshot<PgConnection> snapshot(*db_, kBeginRead);
  if (!snapshot.began().ok()) return snapshot.began();
  return ReadJob(id, with_events);
}

absl::StatusOr<JobPage> PgJobReader::ListJobs(const JobFilter& filter, int limit, uint64_t after_id) {
  const ReadSnapshot<PgConnection> snapshot(*db_, kBeginRead);
  if (!snapshot.began().ok()) return snapshot.began();
  return ReadJobs(filter, limit, after_id);
}

absl::StatusOr<std::optional<v1::Job>> PgJobReader::ReadJob(uint64_t id, bool with_events) {
  auto rows = db_->Query("SELECT job FROM jobs WHERE id = $1", PgParams().Int(static_cast<int64_t>(id)));
  if (!rows.ok()) return rows.status();
  if (rows->size() == 0) return ArrayTask(id);
  v1::Job job;
  if (absl::Status s = ParseRow(rows->Bytes(0, 0), job, absl::StrCat("job ", id), db_->shown()); !s.ok()) return s;
  if (with_events) {
    auto events = db_->Query("SELECT time_ns, state, reason FROM job_events WHERE job_id = $1 ORDER BY seq",
                             PgParams().Int(static_cast<int64_t>(id)));
    if (!events.ok()) return events.status();
    for (int r = 0; r < events->size(); ++r) {
      v1::JobEvent* event = job.add_events();
      event->set_job_id(id);
      *event->mutable_time() = ToProtoTime(absl::FromUnixNanos(events->Int(r, 0)));
      event->set_state(static_cast<v1::JobState>(events->Int(r, 1)));
      event->set_reason(events->Bytes(r, 2));
    }
  }
  return std::optional<v1::Job>(std::move(job));
}

absl::StatusOr<JobPage> PgJobReader::ReadJobs(const JobFilter& filter, int limit, uint64_t after_id) {
  PgParams params;
  params.Int(static_cast<int64_t>(after_id));
  std::string sql = "SELECT id, job FROM jobs WHERE id > $1";
  int next = 2;
  if (!filter.states.empty()) {
    std::vector<int> states(filter.states.begin(), filter.states.end());
    absl::StrAppend(&sql, " AND state IN (", absl::StrJoin(states, ","), ")");
  }
  if (!filter.user.empty()) {
    absl::StrAppend(&sql, " AND \"user\" = $", next++);
    params.Text(filter.user);
  }
  if (!filter.queue.empty()) {
    absl::StrAppend(&sql, " AND queue = $", next++);
    params.Text(filter.queue);
  }
  absl::StrAppend(&sql, " ORDER BY id LIMIT $", next);
  params.Int(static_cast<int64_t>(limit) + 1);  // one row past the page says where to resume
  auto rows = db_->Query(sql, params);
  if (!rows.ok()) return rows.status();
  std::vector<v1::Job> jobs;
  for (int r = 0; r < rows->size(); ++r) {
    absl::Status s =
        ParseRow(rows->Bytes(r, 1), jobs.emplace_back(), absl::StrCat("job ", rows->Int(r, 0)), db_->shown());
    if (!s.ok()) return s;
  }
  auto records = ReadArrayRecords(*db_, /*covering=*/std::nullopt);
  if (!records.ok()) return records.status();
  return PageWithArrayTasks(std::move(jobs), *records, filter, after_id, limit);
}

absl::StatusOr<std::vector<JobArrayRecord>> ReadArrayRecords(PgConnection& db, std::optional<uint64_t> covering) {
  // Arrays take disjoint id ranges: the one that may cover an id is the
  // last to start at or before it.
  auto rows = covering.has_value()
                  ? db.Query(
                        "SELECT array_id, indices, materialized, prototype FROM job_arrays "
                        "WHERE array_id <= $1 ORDER BY array_id DESC LIMIT 1",
                        PgParams().Int(static_cast<int64_t>(*covering)))
                  : db.Query("SELECT array_id, indices, materialized, prototype FROM job_arrays ORDER BY array_id");
  if (!rows.ok()) return rows.status();
  std::vector<JobArrayRecord> records;
  for (int r = 0; r < rows->size(); ++r) {
    JobArrayRecord& record = records.emplace_back();
    record.indices = rows->Bytes(r, 1);
    record.materialized = static_cast<int32_t>(rows->Int(r, 2));
    absl::Status s =
        ParseRow(rows->Bytes(r, 3), record.prototype, absl::StrCat("job array ", rows->Int(r, 0)), db.shown());
    if (!s.ok()) return s;
  }
  return records;
}

absl::StatusOr<std::optional<v1::Job>> PgJobReader::ArrayTask(uint64_t id) {
  auto records = ReadArrayRecords(*db_, id);
  if (!records.ok()) return records.status();
  return ArrayRecordTaskById(*records, id);
}

}  // namespace gpusched::store
