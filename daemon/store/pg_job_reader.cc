#include "daemon/store/pg_job_reader.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/proto_time.h"
#include "daemon/store/job_rows.h"

namespace gpusched::store {

absl::StatusOr<std::unique_ptr<PgJobReader>> PgJobReader::Open(const StoreUrl& url) {
  auto db = PgConnection::Connect(url.postgres, url.shown);
  if (!db.ok()) return db.status();
  return std::unique_ptr<PgJobReader>(new PgJobReader(std::move(*db)));
}

absl::StatusOr<std::optional<v1::Job>> PgJobReader::GetJob(uint64_t id, bool with_events) {
  auto rows = db_->Query("SELECT job FROM jobs WHERE id = $1", PgParams().Int(static_cast<int64_t>(id)));
  if (!rows.ok()) return rows.status();
  if (rows->size() == 0) return std::optional<v1::Job>();
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

absl::StatusOr<JobPage> PgJobReader::ListJobs(const JobFilter& filter, int limit, uint64_t after_id) {
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
  JobPage page;
  for (int r = 0; r < rows->size(); ++r) {
    if (static_cast<int>(page.jobs.size()) == limit) {
      page.last_id = page.jobs.back().id();
      break;
    }
    absl::Status s =
        ParseRow(rows->Bytes(r, 1), page.jobs.emplace_back(), absl::StrCat("job ", rows->Int(r, 0)), db_->shown());
    if (!s.ok()) return s;
  }
  return page;
}

}  // namespace gpusched::store
