#include "daemon/store/pg_job_store.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/io/logging/logging.h"
#include "common/proto_time.h"
#include "daemon/store/fencing.h"
#include "daemon/store/job_rows.h"
#include "daemon/store/pg_job_reader.h"
#include "daemon/store/pg_schema.h"

namespace gpusched::store {

namespace {

// Migrates the database; true when it had no gpusched state (and now has an
// empty one). Without `create`, such a database is refused.
absl::StatusOr<bool> PrepareSchema(PgConnection& db, bool create) {
  auto version = PgSchemaVersion(db);
  if (!version.ok()) return version.status();
  if (*version == 0 && !create) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the PostgreSQL database at ", db.shown(), " holds no gpusched state: if this cluster had state, check ",
        "the database name; to start a new, empty one, run `gpuschedd init` (or `serve --init`) once"));
  }
  if (absl::Status s = ApplyPgMigrations(db); !s.ok()) return s;
  return *version == 0;
}

}  // namespace

absl::StatusOr<std::unique_ptr<PgJobStore>> PgJobStore::Open(const StoreUrl& url, bool create, int64_t epoch) {
  // A replica taking over ends the sessions of the writer it fences, which
  // it finds by this name (PgLeadership::TryTake).
  auto db = PgConnection::Connect(url.postgres, url.shown, epoch < 0 ? "gpuschedd" : WriterSessionName(epoch));
  if (!db.ok()) return db.status();
  if (auto prepared = PrepareSchema(**db, create); !prepared.ok()) return prepared.status();
  return std::unique_ptr<PgJobStore>(new PgJobStore(std::move(*db), epoch));
}

absl::StatusOr<bool> PgJobStore::Prepare(const StoreUrl& url, bool create) {
  auto db = PgConnection::Connect(url.postgres, url.shown);
  if (!db.ok()) return db.status();
  return PrepareSchema(**db, create);
}

absl::StatusOr<RecoveredState> PgJobStore::Recover() {
  RecoveredState state;
  const std::string ended = EndedStateList();
  const std::string& where = db_->shown();
  auto jobs = db_->Query(absl::StrCat("SELECT id, job FROM jobs WHERE state NOT IN (", ended, ") ORDER BY id"));
  if (!jobs.ok()) return jobs.status();
  for (int r = 0; r < jobs->size(); ++r) {
    absl::Status parsed =
        ParseRow(jobs->Bytes(r, 1), state.unfinished_jobs.emplace_back(), absl::StrCat("job ", jobs->Int(r, 0)), where);
    if (!parsed.ok()) return parsed;
  }
  auto nodes = db_->Query("SELECT name, node FROM nodes ORDER BY name");
  if (!nodes.ok()) return nodes.status();
  for (int r = 0; r < nodes->size(); ++r) {
    absl::Status parsed =
        ParseRow(nodes->Bytes(r, 1), state.nodes.emplace_back(), absl::StrCat("node ", nodes->Bytes(r, 0)), where);
    if (!parsed.ok()) return parsed;
  }
  auto max_id = db_->Query("SELECT COALESCE(MAX(id), 0)::BIGINT FROM jobs");
  if (!max_id.ok()) return max_id.status();
  state.max_job_id = static_cast<uint64_t>(max_id->Int(0, 0));

  auto requests = db_->Query("SELECT \"user\", client_request_id, id FROM jobs WHERE client_request_id IS NOT NULL");
  if (!requests.ok()) return requests.status();
  for (int r = 0; r < requests->size(); ++r) {
    state.client_requests.push_back(
        {requests->Bytes(r, 0), requests->Bytes(r, 1), static_cast<uint64_t>(requests->Int(r, 2))});
  }
  auto ends = db_->Query(absl::StrCat("SELECT id, state FROM jobs WHERE state IN (", ended, ")"));
  if (!ends.ok()) return ends.status();
  for (int r = 0; r < ends->size(); ++r) {
    state.ended_jobs.emplace_back(static_cast<uint64_t>(ends->Int(r, 0)), static_cast<v1::JobState>(ends->Int(r, 1)));
  }
  auto runs =
      db_->Query("SELECT id, job FROM jobs WHERE state IN ($1, $2) ORDER BY id DESC LIMIT $3",
                 PgParams().Int(v1::JOB_STATE_COMPLETED).Int(v1::JOB_STATE_FAILED).Int(RecoveredState::kRecentRuns));
  if (!runs.ok()) return runs.status();
  for (int r = 0; r < runs->size(); ++r) {
    v1::Job job;
    absl::Status parsed = ParseRow(runs->Bytes(r, 1), job, absl::StrCat("job ", runs->Int(r, 0)), where);
    if (!parsed.ok()) return parsed;
    if (job.has_start_time() && job.has_end_time()) state.recent_runs.push_back(std::move(job));
  }
  std::reverse(state.recent_runs.begin(), state.recent_runs.end());

  auto arrays = ReadArrayRecords(*db_, /*covering=*/std::nullopt);
  if (!arrays.ok()) return arrays.status();
  state.arrays = *std::move(arrays);

  auto usage = db_->Query("SELECT usage FROM fair_share WHERE id = 1");
  if (!usage.ok()) return usage.status();
  if (usage->size() == 1 && !ParseRow(usage->Bytes(0, 0), state.fair_share.emplace(), "usage", where).ok()) {
    // Soft state: unlike a job, it is not worth refusing to start over.
    GetLogger("store")->warn("the fair-share usage in {} is corrupt; starting fair share from nothing", where);
    state.fair_share.reset();
  }
  return state;
}

absl::Status PgJobStore::Commit(const StoreBatch& batch) {
  if (batch.empty()) return absl::OkStatus();
  if (absl::Status s = db_->Exec("BEGIN"); !s.ok()) return s;
  absl::Status written = CheckEpoch();
  if (written.ok()) written = WriteBatch(batch);
  if (written.ok()) written = db_->Exec("COMMIT");
  if (!written.ok()) db_->Exec("ROLLBACK").IgnoreError();
  return written;
}

absl::Status PgJobStore::CheckEpoch() {
  if (epoch_ < 0) return absl::OkStatus();
  // FOR SHARE: a replica taking over updates this row, and so waits for
  // this commit to end; it then recovers a state that includes it.
  auto leader = db_->Query("SELECT epoch, holder FROM leader WHERE id = 1 FOR SHARE");
  if (!leader.ok()) return leader.status();
  if (leader->size() == 1 && leader->Int(0, 0) == epoch_) return absl::OkStatus();
  return FencedOutError(absl::StrCat("this gpuschedd was the active replica as of leader epoch ", epoch_, ", but ",
                                     leader->size() == 1
                                         ? absl::StrCat(leader->Bytes(0, 1), " took over at epoch ", leader->Int(0, 0))
                                         : std::string("the leader row is gone"),
                                     ": it must not write"));
}

absl::Status PgJobStore::WriteBatch(const StoreBatch& batch) {
  static const std::string kUpsertJob = R"sql(
      INSERT INTO jobs(id, state, "user", queue, priority, submit_time_ns, client_request_id, job)
      VALUES($1, $2, $3, $4, $5, $6, $7, $8)
      ON CONFLICT(id) DO UPDATE SET state = excluded.state, priority = excluded.priority, job = excluded.job)sql";
  std::string blob;
  for (const v1::Job& job : batch.jobs) {
    SerializeWithoutEvents(job, &blob);
    PgParams params;
    params.Int(static_cast<int64_t>(job.id()))
        .Int(job.state())
        .Text(job.spec().user())
        .Text(job.spec().queue())
        .Int(job.spec().priority())
        .Int(absl::ToUnixNanos(FromProtoTime(job.submit_time())));
    if (job.client_request_id().empty()) {
      params.Null();
    } else {
      params.Text(job.client_request_id());
    }
    params.Bytes(blob);
    if (auto s = db_->Query(kUpsertJob, params); !s.ok()) return s.status();
  }
  for (const v1::JobEvent& event : batch.events) {
    auto s = db_->Query("INSERT INTO job_events(job_id, time_ns, state, reason) VALUES($1, $2, $3, $4)",
                        PgParams()
                            .Int(static_cast<int64_t>(event.job_id()))
                            .Int(absl::ToUnixNanos(FromProtoTime(event.time())))
                            .Int(event.state())
                            .Text(event.reason()));
    if (!s.ok()) return s.status();
  }
  for (const v1::Node& node : batch.nodes) {
    node.SerializeToString(&blob);
    auto s =
        db_->Query("INSERT INTO nodes(name, node) VALUES($1, $2) ON CONFLICT(name) DO UPDATE SET node = excluded.node",
                   PgParams().Text(node.info().name()).Bytes(blob));
    if (!s.ok()) return s.status();
  }
  for (const JobArrayRecord& record : batch.arrays) {
    if (record.done()) {
      auto s = db_->Query("DELETE FROM job_arrays WHERE array_id = $1",
                          PgParams().Int(static_cast<int64_t>(record.array_id())));
      if (!s.ok()) return s.status();
      continue;
    }
    record.prototype.SerializeToString(&blob);
    auto s = db_->Query(
        "INSERT INTO job_arrays(array_id, indices, materialized, prototype) VALUES($1, $2, $3, $4) "
        "ON CONFLICT(array_id) DO UPDATE SET materialized = excluded.materialized, prototype = excluded.prototype",
        PgParams()
            .Int(static_cast<int64_t>(record.array_id()))
            .Text(record.indices)
            .Int(record.materialized)
            .Bytes(blob));
    if (!s.ok()) return s.status();
  }
  if (batch.fair_share) {
    batch.fair_share->SerializeToString(&blob);
    auto s = db_->Query(
        "INSERT INTO fair_share(id, usage) VALUES(1, $1) ON CONFLICT(id) DO UPDATE SET usage = excluded.usage",
        PgParams().Bytes(blob));
    if (!s.ok()) return s.status();
  }
  return absl::OkStatus();
}

}  // namespace gpusched::store
