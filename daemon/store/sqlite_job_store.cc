#include "daemon/store/sqlite_job_store.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/io/logging/logging.h"
#include "common/job_states.h"
#include "common/proto_time.h"
#include "daemon/store/job_rows.h"
#include "daemon/store/migrations.h"
#include "daemon/store/sqlite_job_reader.h"

namespace gpusched::store {
namespace {

absl::StatusOr<std::unique_ptr<Statement>> PrepareOwned(SqliteDb& db, absl::string_view sql) {
  auto stmt = db.Prepare(sql);
  if (!stmt.ok()) return stmt.status();
  return std::make_unique<Statement>(std::move(*stmt));
}

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteJobStore>> SqliteJobStore::Open(const std::string& path) {
  auto db = SqliteDb::Open(path, /*read_only=*/false);
  if (!db.ok()) return db.status();
  // WAL lets readers run beside the writer; FULL makes each commit durable.
  for (const char* pragma : {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=FULL", "PRAGMA foreign_keys=ON"}) {
    if (absl::Status s = (*db)->Exec(pragma); !s.ok()) return s;
  }
  if (absl::Status s = ApplyMigrations(**db); !s.ok()) return s;
  std::unique_ptr<SqliteJobStore> store(new SqliteJobStore(std::move(*db)));
  if (absl::Status s = store->PrepareStatements(); !s.ok()) return s;
  return store;
}

absl::Status SqliteJobStore::PrepareStatements() {
  auto job = PrepareOwned(*db_, R"sql(
      INSERT INTO jobs(id, state, user, queue, priority, submit_time_ns, client_request_id, job)
      VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
      ON CONFLICT(id) DO UPDATE SET state = excluded.state, priority = excluded.priority,
                                    job = excluded.job)sql");
  if (!job.ok()) return job.status();
  upsert_job_ = std::move(*job);
  auto event = PrepareOwned(*db_, "INSERT INTO job_events(job_id, time_ns, state, reason) VALUES(?1, ?2, ?3, ?4)");
  if (!event.ok()) return event.status();
  insert_event_ = std::move(*event);
  auto node = PrepareOwned(*db_, "INSERT OR REPLACE INTO nodes(name, node) VALUES(?1, ?2)");
  if (!node.ok()) return node.status();
  upsert_node_ = std::move(*node);
  auto usage = PrepareOwned(*db_, "INSERT OR REPLACE INTO fair_share(id, usage) VALUES(1, ?1)");
  if (!usage.ok()) return usage.status();
  upsert_fair_share_ = std::move(*usage);
  auto array = PrepareOwned(
      *db_, "INSERT OR REPLACE INTO job_arrays(array_id, indices, materialized, prototype) VALUES(?1, ?2, ?3, ?4)");
  if (!array.ok()) return array.status();
  upsert_array_ = std::move(*array);
  auto done = PrepareOwned(*db_, "DELETE FROM job_arrays WHERE array_id = ?1");
  if (!done.ok()) return done.status();
  delete_array_ = std::move(*done);
  return absl::OkStatus();
}

absl::StatusOr<RecoveredState> SqliteJobStore::Recover() {
  RecoveredState state;
  auto jobs = db_->Prepare("SELECT id, job FROM jobs WHERE state NOT IN (?1, ?2, ?3, ?4, ?5, ?6) ORDER BY id");
  if (!jobs.ok()) return jobs.status();
  int i = 1;
  for (auto s : kEndedStates) jobs->Bind(i++, static_cast<int64_t>(s));
  absl::Status read = jobs->ForEachRow([&]() -> absl::Status {
    return ParseRow(jobs->ColumnBlob(1), state.unfinished_jobs.emplace_back(), absl::StrCat("job ", jobs->ColumnInt(0)),
                    db_->path());
  });
  if (!read.ok()) return read;

  auto nodes = db_->Prepare("SELECT name, node FROM nodes ORDER BY name");
  if (!nodes.ok()) return nodes.status();
  read = nodes->ForEachRow([&]() -> absl::Status {
    return ParseRow(nodes->ColumnBlob(1), state.nodes.emplace_back(), absl::StrCat("node ", nodes->ColumnText(0)),
                    db_->path());
  });
  if (!read.ok()) return read;

  auto max_id = db_->Prepare("SELECT COALESCE(MAX(id), 0) FROM jobs");
  if (!max_id.ok()) return max_id.status();
  if (auto row = max_id->Step(); !row.ok()) return row.status();
  state.max_job_id = static_cast<uint64_t>(max_id->ColumnInt(0));

  auto requests = db_->Prepare("SELECT user, client_request_id, id FROM jobs WHERE client_request_id IS NOT NULL");
  if (!requests.ok()) return requests.status();
  read = requests->ForEachRow([&] {
    state.client_requests.push_back(
        {requests->ColumnText(0), requests->ColumnText(1), static_cast<uint64_t>(requests->ColumnInt(2))});
    return absl::OkStatus();
  });
  if (!read.ok()) return read;

  auto ended = db_->Prepare("SELECT id, state FROM jobs WHERE state IN (?1, ?2, ?3, ?4, ?5, ?6)");
  if (!ended.ok()) return ended.status();
  i = 1;
  for (auto s : kEndedStates) ended->Bind(i++, static_cast<int64_t>(s));
  read = ended->ForEachRow([&] {
    state.ended_jobs.emplace_back(static_cast<uint64_t>(ended->ColumnInt(0)),
                                  static_cast<v1::JobState>(ended->ColumnInt(1)));
    return absl::OkStatus();
  });
  if (!read.ok()) return read;

  auto runs = db_->Prepare("SELECT id, job FROM jobs WHERE state IN (?1, ?2) ORDER BY id DESC LIMIT ?3");
  if (!runs.ok()) return runs.status();
  runs->Bind(1, static_cast<int64_t>(v1::JOB_STATE_COMPLETED));
  runs->Bind(2, static_cast<int64_t>(v1::JOB_STATE_FAILED));
  runs->Bind(3, static_cast<int64_t>(RecoveredState::kRecentRuns));
  read = runs->ForEachRow([&]() -> absl::Status {
    v1::Job job;
    if (absl::Status s = ParseRow(runs->ColumnBlob(1), job, absl::StrCat("job ", runs->ColumnInt(0)), db_->path());
        !s.ok()) {
      return s;
    }
    if (job.has_start_time() && job.has_end_time()) state.recent_runs.push_back(std::move(job));
    return absl::OkStatus();
  });
  if (!read.ok()) return read;
  std::reverse(state.recent_runs.begin(), state.recent_runs.end());

  auto arrays = ReadArrayRecords(*db_, /*covering=*/std::nullopt);
  if (!arrays.ok()) return arrays.status();
  state.arrays = *std::move(arrays);

  auto usage = db_->Prepare("SELECT usage FROM fair_share WHERE id = 1");
  if (!usage.ok()) return usage.status();
  read = usage->ForEachRow([&]() -> absl::Status {
    v1::FairShareUsage& kept = state.fair_share.emplace();
    if (kept.ParseFromString(usage->ColumnBlob(0))) return absl::OkStatus();
    // Soft state: unlike a job, it is not worth refusing to start over.
    GetLogger("store")->warn("the fair-share usage in {} is corrupt; starting fair share from nothing", db_->path());
    state.fair_share.reset();
    return absl::OkStatus();
  });
  if (!read.ok()) return read;
  return state;
}

absl::Status SqliteJobStore::Commit(const StoreBatch& batch) {
  if (batch.empty()) return absl::OkStatus();
  if (absl::Status s = db_->Exec("BEGIN IMMEDIATE"); !s.ok()) return s;
  absl::Status written = WriteBatch(batch);
  if (written.ok()) written = db_->Exec("COMMIT");
  if (!written.ok()) {
    db_->Exec("ROLLBACK").IgnoreError();
    return written;
  }
  return absl::OkStatus();
}

absl::Status SqliteJobStore::WriteBatch(const StoreBatch& batch) {
  std::string blob;
  for (const v1::Job& job : batch.jobs) {
    SerializeWithoutEvents(job, &blob);
    upsert_job_->Bind(1, static_cast<int64_t>(job.id()))
        .Bind(2, static_cast<int64_t>(job.state()))
        .Bind(3, job.spec().user())
        .Bind(4, job.spec().queue())
        .Bind(5, job.spec().priority())
        .Bind(6, absl::ToUnixNanos(FromProtoTime(job.submit_time())))
        .BindBlob(8, blob);
    if (job.client_request_id().empty()) {
      upsert_job_->BindNull(7);
    } else {
      upsert_job_->Bind(7, job.client_request_id());
    }
    if (absl::Status s = upsert_job_->Run(); !s.ok()) return s;
  }
  for (const v1::JobEvent& event : batch.events) {
    insert_event_->Bind(1, static_cast<int64_t>(event.job_id()))
        .Bind(2, absl::ToUnixNanos(FromProtoTime(event.time())))
        .Bind(3, static_cast<int64_t>(event.state()))
        .Bind(4, event.reason());
    if (absl::Status s = insert_event_->Run(); !s.ok()) return s;
  }
  for (const v1::Node& node : batch.nodes) {
    node.SerializeToString(&blob);
    upsert_node_->Bind(1, node.info().name()).BindBlob(2, blob);
    if (absl::Status s = upsert_node_->Run(); !s.ok()) return s;
  }
  for (const JobArrayRecord& record : batch.arrays) {
    if (record.done()) {
      delete_array_->Bind(1, static_cast<int64_t>(record.array_id()));
      if (absl::Status s = delete_array_->Run(); !s.ok()) return s;
      continue;
    }
    record.prototype.SerializeToString(&blob);
    upsert_array_->Bind(1, static_cast<int64_t>(record.array_id()))
        .Bind(2, record.indices)
        .Bind(3, static_cast<int64_t>(record.materialized))
        .BindBlob(4, blob);
    if (absl::Status s = upsert_array_->Run(); !s.ok()) return s;
  }
  if (batch.fair_share) {
    batch.fair_share->SerializeToString(&blob);
    upsert_fair_share_->BindBlob(1, blob);
    if (absl::Status s = upsert_fair_share_->Run(); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace gpusched::store
