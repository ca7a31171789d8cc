#include "daemon/store/pg_leadership.h"

#include "absl/strings/str_cat.h"
#include "daemon/store/fencing.h"

namespace gpusched::store {

absl::StatusOr<std::unique_ptr<PgLeadership>> PgLeadership::Open(const StoreUrl& url, Identity me,
                                                                 absl::Duration lease) {
  auto db = PgConnection::Connect(url.postgres, url.shown);
  if (!db.ok()) return db.status();
  return std::unique_ptr<PgLeadership>(new PgLeadership(std::move(*db), std::move(me), lease));
}

absl::StatusOr<std::optional<int64_t>> PgLeadership::TryTake() {
  // Whether the leader is gone, by a plain read: a standby's tries must not
  // queue behind the leader's commits, which hold the row FOR SHARE. The
  // session test holds only for a session of the server's present life:
  // after a restart of PostgreSQL every recorded session is gone, and the
  // lease alone decides, so that the leader can come back and renew.
  static const std::string kGone = R"sql(
      (lease_until < clock_timestamp() OR
       (renewed_at > pg_postmaster_start_time() AND
        NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = leader.backend_pid))))sql";
  auto seen = db_->Query(
      absl::StrCat("SELECT epoch, CASE WHEN ", kGone, " THEN 1 ELSE 0 END::BIGINT FROM leader WHERE id = 1"));
  if (!seen.ok()) return seen.status();
  if (seen->size() != 1 || seen->Int(0, 1) == 0) return std::optional<int64_t>();
  const int64_t former = seen->Int(0, 0);
  // A former leader paused in the middle of a commit holds the row until
  // its session ends: end its writer's sessions (the same role may), which
  // also loses that commit. It is fenced out from now on anyway.
  auto ended = db_->Query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
                          PgParams().Text(WriterSessionName(former)));
  if (!ended.ok()) return ended.status();
  // Taken only from the leader seen gone, and only if it still is: of two
  // standbys trying at once, one takes it.
  auto taken =
      db_->Query(absl::StrCat(R"sql(
      UPDATE leader SET epoch = epoch + 1, holder = $1, address = $2, backend_pid = pg_backend_pid(),
                        renewed_at = clock_timestamp(),
                        lease_until = clock_timestamp() + $3 * interval '1 millisecond'
      WHERE id = 1 AND epoch = $4 AND )sql",
                              kGone, " RETURNING epoch"),
                 PgParams().Text(me_.holder).Text(me_.address).Int(absl::ToInt64Milliseconds(lease_)).Int(former));
  if (!taken.ok()) return taken.status();
  if (taken->size() == 0) return std::optional<int64_t>();
  return std::optional<int64_t>(taken->Int(0, 0));
}

absl::Status PgLeadership::Renew(int64_t epoch) {
  // The session may be new (the connection was reopened): record it.
  auto renewed = db_->Query(R"sql(
      UPDATE leader SET lease_until = clock_timestamp() + $2 * interval '1 millisecond',
                        renewed_at = clock_timestamp(), backend_pid = pg_backend_pid()
      WHERE id = 1 AND epoch = $1 RETURNING epoch)sql",
                            PgParams().Int(epoch).Int(absl::ToInt64Milliseconds(lease_)));
  if (!renewed.ok()) return renewed.status();
  if (renewed->size() == 1) return absl::OkStatus();
  auto now = Current();
  return FencedOutError(absl::StrCat("this gpuschedd led as of epoch ", epoch, ", but ",
                                     now.ok() ? absl::StrCat(now->holder, " took over at epoch ", now->epoch)
                                              : std::string("another replica took over")));
}

absl::Status PgLeadership::Release(int64_t epoch) {
  return db_->Query("UPDATE leader SET lease_until = '-infinity' WHERE id = 1 AND epoch = $1", PgParams().Int(epoch))
      .status();
}

absl::StatusOr<Leader> PgLeadership::Current() {
  auto rows = db_->Query(
      "SELECT epoch, holder, address, CASE WHEN lease_until >= clock_timestamp() THEN 1 ELSE 0 END::BIGINT "
      "FROM leader WHERE id = 1");
  if (!rows.ok()) return rows.status();
  Leader leader;
  if (rows->size() == 1) {
    leader.epoch = rows->Int(0, 0);
    leader.holder = rows->Bytes(0, 1);
    leader.address = rows->Bytes(0, 2);
    leader.live = rows->Int(0, 3) == 1;
  }
  return leader;
}

}  // namespace gpusched::store
