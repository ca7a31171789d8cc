#include "daemon/store/sqlite_job_reader.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "common/proto_time.h"
#include "daemon/store/array_rows.h"
#include "daemon/store/job_rows.h"
#include "daemon/store/read_snapshot.h"

namespace gpusched::store {
namespace {

// One snapshot for all the statements of a read (ReadSnapshot): a deferred
// transaction takes it at its first read.
constexpr char kBeginRead[] = "BEGIN";

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteJobReader>> SqliteJobReader::Open(const std::string& path) {
  auto db = SqliteDb::Open(path, /*read_only=*/true);
  if (!db.ok()) return db.status();
  return std::unique_ptr<SqliteJobReader>(new SqliteJobReader(std::move(*db)));
}

absl::StatusOr<std::optional<v1::Job>> SqliteJobReader::GetJob(uint64_t id, bool with_events) {
  const ReadSnapshot<SqliteDb> snapshot(*db_, kBeginRead);
  if (!snapshot.began().ok()) return snapshot.began();
  return ReadJob(id, with_events);
}

absl::StatusOr<JobPage> SqliteJobReader::ListJobs(const JobFilter& filter, int limit, uint64_t after_id) {
  const ReadSnapshot<SqliteDb> snapshot(*db_, kBeginRead);
  if (!snapshot.began().ok()) return snapshot.began();
  return ReadJobs(filter, limit, after_id);
}

absl::StatusOr<std::optional<v1::Job>> SqliteJobReader::ReadJob(uint64_t id, bool with_events) {
  auto stmt = db_->Prepare("SELECT job FROM jobs WHERE id = ?1");
  if (!stmt.ok()) return stmt.status();
  stmt->Bind(1, static_cast<int64_t>(id));
  auto row = stmt->Step();
  if (!row.ok()) return row.status();
  if (!*row) return ArrayTask(id);
  v1::Job job;
  if (!job.ParseFromString(stmt->ColumnBlob(0))) {
    return absl::DataLossError(absl::StrCat("job ", id, " in ", db_->path(), " is corrupt"));
  }
  if (with_events) {
    auto events = db_->Prepare("SELECT time_ns, state, reason FROM job_events WHERE job_id = ?1 ORDER BY seq");
    if (!events.ok()) return events.status();
    events->Bind(1, static_cast<int64_t>(id));
    absl::Status read = events->ForEachRow([&] {
      v1::JobEvent* event = job.add_events();
      event->set_job_id(id);
      *event->mutable_time() = ToProtoTime(absl::FromUnixNanos(events->ColumnInt(0)));
      event->set_state(static_cast<v1::JobState>(events->ColumnInt(1)));
      event->set_reason(events->ColumnText(2));
      return absl::OkStatus();
    });
    if (!read.ok()) return read;
  }
  return std::optional<v1::Job>(std::move(job));
}

absl::StatusOr<JobPage> SqliteJobReader::ReadJobs(const JobFilter& filter, int limit, uint64_t after_id) {
  std::string sql = "SELECT id, job FROM jobs WHERE id > ?1";
  if (!filter.states.empty()) {
    std::vector<int> states(filter.states.begin(), filter.states.end());
    absl::StrAppend(&sql, " AND state IN (", absl::StrJoin(states, ","), ")");
  }
  if (!filter.user.empty()) absl::StrAppend(&sql, " AND user = ?2");
  if (!filter.queue.empty()) absl::StrAppend(&sql, " AND queue = ?3");
  absl::StrAppend(&sql, " ORDER BY id LIMIT ?4");
  auto stmt = db_->Prepare(sql);
  if (!stmt.ok()) return stmt.status();
  // One row past the page tells the caller where to resume.
  stmt->Bind(1, static_cast<int64_t>(after_id)).Bind(4, static_cast<int64_t>(limit) + 1);
  if (!filter.user.empty()) stmt->Bind(2, filter.user);
  if (!filter.queue.empty()) stmt->Bind(3, filter.queue);

  std::vector<v1::Job> rows;
  absl::Status read = stmt->ForEachRow([&]() -> absl::Status {
    v1::Job& job = rows.emplace_back();
    if (job.ParseFromString(stmt->ColumnBlob(1))) return absl::OkStatus();
    return absl::DataLossError(absl::StrCat("job ", stmt->ColumnInt(0), " in ", db_->path(), " is corrupt"));
  });
  if (!read.ok()) return read;
  auto records = ReadArrayRecords(*db_, /*covering=*/std::nullopt);
  if (!records.ok()) return records.status();
  return PageWithArrayTasks(std::move(rows), *records, filter, after_id, limit);
}

absl::StatusOr<std::vector<JobArrayRecord>> ReadArrayRecords(SqliteDb& db, std::optional<uint64_t> covering) {
  // Arrays take disjoint id ranges: the one that may cover an id is the
  // last to start at or before it.
  auto stmt = db.Prepare(covering.has_value() ? "SELECT array_id, indices, materialized, prototype FROM job_arrays "
                                                "WHERE array_id <= ?1 ORDER BY array_id DESC LIMIT 1"
                                              : "SELECT array_id, indices, materialized, prototype FROM job_arrays "
                                                "ORDER BY array_id");
  if (!stmt.ok()) return stmt.status();
  if (covering.has_value()) stmt->Bind(1, static_cast<int64_t>(*covering));
  std::vector<JobArrayRecord> records;
  absl::Status read = stmt->ForEachRow([&]() -> absl::Status {
    JobArrayRecord& record = records.emplace_back();
    record.indices = stmt->ColumnText(1);
    record.materialized = static_cast<int32_t>(stmt->ColumnInt(2));
    return ParseRow(stmt->ColumnBlob(3), record.prototype, absl::StrCat("job array ", stmt->ColumnInt(0)), db.path());
  });
  if (!read.ok()) return read;
  return records;
}

absl::StatusOr<std::optional<v1::Job>> SqliteJobReader::ArrayTask(uint64_t id) {
  auto records = ReadArrayRecords(*db_, id);
  if (!records.ok()) return records.status();
  return ArrayRecordTaskById(*records, id);
}

}  // namespace gpusched::store
