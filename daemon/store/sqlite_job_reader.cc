#include "daemon/store/sqlite_job_reader.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "common/proto_time.h"

namespace gpusched::store {

absl::StatusOr<std::unique_ptr<SqliteJobReader>> SqliteJobReader::Open(const std::string& path) {
  auto db = SqliteDb::Open(path, /*read_only=*/true);
  if (!db.ok()) return db.status();
  return std::unique_ptr<SqliteJobReader>(new SqliteJobReader(std::move(*db)));
}

absl::StatusOr<std::optional<v1::Job>> SqliteJobReader::GetJob(uint64_t id, bool with_events) {
  auto stmt = db_->Prepare("SELECT job FROM jobs WHERE id = ?1");
  if (!stmt.ok()) return stmt.status();
  stmt->Bind(1, static_cast<int64_t>(id));
  auto row = stmt->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<v1::Job>();
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

absl::StatusOr<JobPage> SqliteJobReader::ListJobs(const JobFilter& filter, int limit, uint64_t after_id) {
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
  stmt->Bind(1, static_cast<int64_t>(after_id)).Bind(4, static_cast<int64_t>(limit) + 1);
  if (!filter.user.empty()) stmt->Bind(2, filter.user);
  if (!filter.queue.empty()) stmt->Bind(3, filter.queue);

  JobPage page;
  absl::Status read = stmt->ForEachRow([&]() -> absl::Status {
    if (static_cast<int>(page.jobs.size()) == limit) {
      // The one row past the page (LIMIT limit+1): tell the caller where to resume.
      page.last_id = page.jobs.back().id();
      return absl::OkStatus();
    }
    v1::Job& job = page.jobs.emplace_back();
    if (job.ParseFromString(stmt->ColumnBlob(1))) return absl::OkStatus();
    return absl::DataLossError(absl::StrCat("job ", stmt->ColumnInt(0), " in ", db_->path(), " is corrupt"));
  });
  if (!read.ok()) return read;
  return page;
}

}  // namespace gpusched::store
