// What only the PostgreSQL store has: its URL, its schema's guard, and the
// leadership of several replicas with its fencing. Against a real server.

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <future>
#include <thread>

#include "common/proto_time.h"
#include "daemon/store/fencing.h"
#include "daemon/store/pg_connection.h"
#include "daemon/store/pg_job_reader.h"
#include "daemon/store/pg_job_store.h"
#include "daemon/store/pg_leadership.h"
#include "daemon/store/pg_schema.h"
#include "daemon/store/store_url.h"
#include "tests/skip.h"
#include "tests/unit/store/store_engines.h"

using namespace gpusched;
using gpusched::testing::PostgresEngine;

namespace {

store::StoreUrl Parsed(const std::string& url) {
  auto parsed = store::ParseStoreUrl(url);
  REQUIRE(parsed.ok());
  return *parsed;
}

store::StoreBatch OneJob(uint64_t id) {
  store::StoreBatch batch;
  v1::Job& job = batch.jobs.emplace_back();
  job.set_id(id);
  job.set_state(v1::JOB_STATE_PENDING);
  job.mutable_spec()->set_user("alice");
  job.mutable_spec()->set_queue("default");
  *job.mutable_submit_time() = ToProtoTime(absl::FromUnixSeconds(1'700'000'000));
  return batch;
}

std::unique_ptr<store::PgLeadership> Replica(const std::string& url, const std::string& name,
                                             absl::Duration lease = absl::Seconds(60)) {
  auto leadership = store::PgLeadership::Open(Parsed(url), {name, name + ".example:6870"}, lease);
  REQUIRE(leadership.ok());
  return std::move(*leadership);
}

}  // namespace

TEST_CASE("store URLs: each engine's form, and what is wrong with a bad one") {
  auto sqlite = store::ParseStoreUrl("sqlite:///var/lib/gpusched/gpusched.db");
  REQUIRE(sqlite.ok());
  CHECK(sqlite->engine == store::StoreUrl::Engine::kSqlite);
  CHECK(sqlite->sqlite_path == "/var/lib/gpusched/gpusched.db");
  CHECK(store::SqliteUrlIn("/var/lib/gpusched/") == "sqlite:///var/lib/gpusched/gpusched.db");

  auto relative = store::ParseStoreUrl("sqlite://gpusched.db");
  REQUIRE_FALSE(relative.ok());
  CHECK(relative.status().message().find("absolute path") != std::string::npos);

  auto pg = store::ParseStoreUrl("postgresql://gpusched:s3cret@db1:5432/gpusched?password=also");
  REQUIRE(pg.ok());
  CHECK(pg->engine == store::StoreUrl::Engine::kPostgres);
  CHECK(pg->postgres == "postgresql://gpusched:s3cret@db1:5432/gpusched?password=also");
  CHECK(pg->shown == "postgresql://gpusched:***@db1:5432/gpusched?password=***");
  CHECK(store::ParseStoreUrl("postgres://db1/gpusched").ok());

  auto broken = store::ParseStoreUrl("postgresql://[::1/gpusched");
  REQUIRE_FALSE(broken.ok());
  CHECK(broken.status().message().find("libpq") != std::string::npos);
  auto other = store::ParseStoreUrl("mysql://root:pw@db1/gpusched");
  REQUIRE_FALSE(other.ok());
  CHECK(other.status().message().find("pw") == std::string::npos);
  CHECK(other.status().message().find("neither sqlite") != std::string::npos);
}

TEST_CASE("PostgreSQL: a database that refuses the connection is named, without its password") {
  PostgresEngine engine;
  if (!engine.skipped().empty()) GPUSCHED_SKIP(engine.skipped());
  // A port nothing listens on: the server's own, plus one.
  const std::string url =
      "postgresql://gpusched:s3cret@127.0.0.1:" + std::to_string(PostgresEngine::server()->port() + 1) +
      "/gpusched?connect_timeout=2";
  auto store = store::PgJobStore::Open(Parsed(url), true);
  REQUIRE_FALSE(store.ok());
  CHECK(store.status().code() == absl::StatusCode::kUnavailable);
  CHECK(store.status().message().find("cannot connect to PostgreSQL at postgresql://gpusched:***@127.0.0.1") !=
        std::string::npos);
  CHECK(store.status().message().find("s3cret") == std::string::npos);
}

TEST_CASE("PostgreSQL: an empty database is not taken for a new cluster unless asked to make one") {
  PostgresEngine engine;
  if (!engine.skipped().empty()) GPUSCHED_SKIP(engine.skipped());
  auto refused = store::PgJobStore::Open(Parsed(engine.url()), /*create=*/false);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(refused.status().message().find("holds no gpusched state") != std::string::npos);
  CHECK(refused.status().message().find("gpuschedd init") != std::string::npos);
  CHECK(store::PgJobStore::Prepare(Parsed(engine.url()), /*create=*/false).status().code() ==
        absl::StatusCode::kFailedPrecondition);
  auto made = store::PgJobStore::Prepare(Parsed(engine.url()), /*create=*/true);  // `gpuschedd init`
  REQUIRE(made.ok());
  CHECK(*made);
  auto again = store::PgJobStore::Prepare(Parsed(engine.url()), /*create=*/true);
  REQUIRE(again.ok());
  CHECK_FALSE(*again);  // already there: nothing changed
  CHECK(store::PgJobStore::Open(Parsed(engine.url()), /*create=*/false).ok());
}

TEST_CASE("PostgreSQL: a database of a newer schema is refused, not touched") {
  PostgresEngine engine;
  if (!engine.skipped().empty()) GPUSCHED_SKIP(engine.skipped());
  REQUIRE(engine.OpenStore().ok());
  auto db = store::PgConnection::Connect(engine.url(), engine.url());
  REQUIRE(db.ok());
  REQUIRE((*db)->Exec("UPDATE gpusched_schema SET version = 99").ok());
  auto store = store::PgJobStore::Open(Parsed(engine.url()), true);
  REQUIRE_FALSE(store.ok());
  CHECK(store.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(store.status().message().find("schema version 99") != std::string::npos);
  auto version = store::PgSchemaVersion(**db);
  REQUIRE(version.ok());
  CHECK(*version == 99);
}

TEST_CASE("PostgreSQL: one replica leads; a commit of a replica that lost the lead writes nothing") {
  PostgresEngine engine;
  if (!engine.skipped().empty()) GPUSCHED_SKIP(engine.skipped());
  REQUIRE(engine.OpenStore().ok());
  auto a = Replica(engine.url(), "a");
  auto b = Replica(engine.url(), "b");

  auto a_epoch = a->TryTake();
  REQUIRE(a_epoch.ok());
  REQUIRE(a_epoch->has_value());
  auto b_try = b->TryTake();
  REQUIRE(b_try.ok());
  CHECK_FALSE(b_try->has_value());  // a's lease is live and its session there
  auto leader = b->Current();
  REQUIRE(leader.ok());
  CHECK(leader->holder == "a");
  CHECK(leader->address == "a.example:6870");
  CHECK(leader->live);

  auto a_store = store::PgJobStore::Open(Parsed(engine.url()), false, **a_epoch);
  REQUIRE(a_store.ok());
  REQUIRE((*a_store)->Commit(OneJob(1)).ok());
  REQUIRE(a->Renew(**a_epoch).ok());

  // a lets go (a clean stop); b takes over with the next epoch.
  REQUIRE(a->Release(**a_epoch).ok());
  auto b_epoch = b->TryTake();
  REQUIRE(b_epoch.ok());
  REQUIRE(b_epoch->has_value());
  CHECK(**b_epoch == **a_epoch + 1);

  const absl::Status late = (*a_store)->Commit(OneJob(2));
  CHECK(store::IsFencedOut(late));
  CHECK(late.message().find("b took over at epoch") != std::string::npos);
  CHECK(store::IsFencedOut(a->Renew(**a_epoch)));
  auto reader = engine.OpenReader();
  REQUIRE(reader.ok());
  CHECK((*reader)->GetJob(1, false)->has_value());
  CHECK_FALSE((*reader)->GetJob(2, false)->has_value());
}

TEST_CASE("PostgreSQL: a leader whose session ended is replaced at once; a silent one when its lease runs out") {
  PostgresEngine engine;
  if (!engine.skipped().empty()) GPUSCHED_SKIP(engine.skipped());
  REQUIRE(engine.OpenStore().ok());
  auto b = Replica(engine.url(), "b");
  {
    auto a = Replica(engine.url(), "a", absl::Hours(1));
    REQUIRE(a->TryTake()->has_value());
    CHECK_FALSE(b->TryTake()->has_value());
  }  // a's process is gone: the server ends its session
  std::optional<int64_t> taken;
  for (int i = 0; i < 50 && !taken; ++i) {  // the server notices the closed socket within moments
    auto t = b->TryTake();
    REQUIRE(t.ok());
    taken = *t;
    if (!taken) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  REQUIRE(taken.has_value());

  // c is alive (its session stays) but stops renewing, as a paused process.
  auto c = Replica(engine.url(), "c", absl::Milliseconds(300));
  REQUIRE(b->Release(*taken).ok());
  auto c_epoch = c->TryTake();
  REQUIRE(c_epoch->has_value());
  CHECK_FALSE(b->TryTake()->has_value());
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  auto b_again = b->TryTake();
  REQUIRE(b_again.ok());
  REQUIRE(b_again->has_value());
  CHECK(store::IsFencedOut(c->Renew(**c_epoch)));
}

TEST_CASE("PostgreSQL: a leader paused in the middle of a commit holds up neither the standbys nor the take") {
  PostgresEngine engine;
  if (!engine.skipped().empty()) GPUSCHED_SKIP(engine.skipped());
  REQUIRE(engine.OpenStore().ok());
  auto a = Replica(engine.url(), "a", absl::Seconds(1));
  auto a_epoch = a->TryTake();
  REQUIRE(a_epoch.ok());
  REQUIRE(a_epoch->has_value());
  // What a's writer does in each commit, stopped before its COMMIT: the
  // leader row is locked FOR SHARE for as long as the process is paused.
  auto paused = store::PgConnection::Connect(engine.url(), engine.url(), store::WriterSessionName(**a_epoch));
  REQUIRE(paused.ok());
  REQUIRE((*paused)->Exec("BEGIN").ok());
  REQUIRE((*paused)->Query("SELECT epoch FROM leader WHERE id = 1 FOR SHARE").ok());

  auto b = Replica(engine.url(), "b");
  auto try_now = std::async(std::launch::async, [&] { return b->TryTake(); });
  REQUIRE(try_now.wait_for(std::chrono::seconds(10)) == std::future_status::ready);  // a standby's try never waits
  REQUIRE(try_now.get().ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));  // a's lease runs out
  auto take = std::async(std::launch::async, [&] { return b->TryTake(); });
  REQUIRE(take.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
  auto b_epoch = take.get();
  REQUIRE(b_epoch.ok());
  REQUIRE(b_epoch->has_value());
  CHECK(**b_epoch == **a_epoch + 1);
  // a's writer, resumed, finds its transaction gone with its session.
  auto resumed = (*paused)->Exec("COMMIT");
  CHECK(resumed.code() == absl::StatusCode::kUnavailable);
}

TEST_CASE("PostgreSQL: after the server restarts, the store and the leader carry on") {
  PostgresEngine engine;
  if (!engine.skipped().empty()) GPUSCHED_SKIP(engine.skipped());
  REQUIRE(engine.OpenStore().ok());
  auto a = Replica(engine.url(), "a");
  auto b = Replica(engine.url(), "b");
  auto epoch = a->TryTake();
  REQUIRE(epoch->has_value());
  auto store = store::PgJobStore::Open(Parsed(engine.url()), false, **epoch);
  REQUIRE(store.ok());
  REQUIRE((*store)->Commit(OneJob(1)).ok());

  REQUIRE(PostgresEngine::server()->Restart().ok());
  // The first call on each broken connection fails UNAVAILABLE and reopens it.
  absl::Status committed = (*store)->Commit(OneJob(2));
  if (!committed.ok()) {
    CHECK(committed.code() == absl::StatusCode::kUnavailable);
    committed = (*store)->Commit(OneJob(2));
  }
  REQUIRE(committed.ok());
  absl::Status renewed = a->Renew(**epoch);
  if (!renewed.ok()) renewed = a->Renew(**epoch);
  REQUIRE(renewed.ok());
  // Every session of before the restart is gone, a's too: only its lease counts now.
  auto b_try = b->TryTake();
  if (!b_try.ok()) b_try = b->TryTake();
  REQUIRE(b_try.ok());
  CHECK_FALSE(b_try->has_value());
  auto reader = engine.OpenReader();
  REQUIRE(reader.ok());
  CHECK((*reader)->GetJob(1, false)->has_value());
  CHECK((*reader)->GetJob(2, false)->has_value());
}

TEST_CASE("PostgreSQL: a password file others may read is named, with the fix, before connecting") {
  gpusched::testing::TempDir dir;
  const std::string passfile = dir.Write("pgpass", "db1:5432:gpusched:gpusched:s3cret\n");
  REQUIRE(chmod(passfile.c_str(), 0644) == 0);
  auto store = store::PgJobStore::Open(Parsed("postgresql://gpusched@127.0.0.1:1/gpusched?passfile=" + passfile), true);
  REQUIRE_FALSE(store.ok());
  CHECK(store.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(store.status().message().find(passfile) != std::string::npos);
  CHECK(store.status().message().find("mode 0644") != std::string::npos);
  CHECK(store.status().message().find("chmod 0600") != std::string::npos);
  REQUIRE(chmod(passfile.c_str(), 0600) == 0);  // then it gets as far as the (absent) server
  auto unreachable = store::PgJobStore::Open(
      Parsed("postgresql://gpusched@127.0.0.1:1/gpusched?connect_timeout=2&passfile=" + passfile), true);
  REQUIRE_FALSE(unreachable.ok());
  CHECK(unreachable.status().code() == absl::StatusCode::kUnavailable);
}

TEST_CASE("PostgreSQL: a database set to commit asynchronously still gets durable commits from gpuschedd") {
  PostgresEngine engine;
  if (!engine.skipped().empty()) GPUSCHED_SKIP(engine.skipped());
  const store::StoreUrl url = Parsed(engine.url());
  auto admin = store::PgConnection::Connect(url.postgres, url.shown, "test");
  REQUIRE(admin.ok());
  REQUIRE((*admin)
              ->Exec("DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET synchronous_commit = off', "
                     "current_database()); END $$")
              .ok());
  auto setting = [](store::PgConnection& db) {
    auto rows = db.Query("SHOW synchronous_commit");
    REQUIRE(rows.ok());
    REQUIRE(rows->size() == 1);
    return rows->Bytes(0, 0);
  };
  auto db = store::PgConnection::Connect(url.postgres, url.shown);
  REQUIRE(db.ok());
  CHECK(setting(**db) == "on");
  // Reconnected after a restart, the session is set up again.
  REQUIRE(PostgresEngine::server()->Restart().ok());
  CHECK(setting(**db) == "on");
  // A level the operator chose is kept.
  REQUIRE((*db)
              ->Exec("DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET synchronous_commit = remote_apply', "
                     "current_database()); END $$")
              .ok());
  auto other = store::PgConnection::Connect(url.postgres, url.shown);
  REQUIRE(other.ok());
  CHECK(setting(**other) == "remote_apply");
}

TEST_CASE("PostgreSQL: a database from before request ids were each user's own keeps its ids, now per user") {
  PostgresEngine engine;
  if (!engine.skipped().empty()) GPUSCHED_SKIP(engine.skipped());
  auto job = [](uint64_t id, const std::string& user) {
    store::StoreBatch batch = OneJob(id);
    batch.jobs[0].mutable_spec()->set_user(user);
    batch.jobs[0].set_client_request_id("train-1");
    return batch;
  };
  {
    auto db = store::PgConnection::Connect(engine.url(), engine.url());
    REQUIRE(db.ok());
    REQUIRE(store::ApplyPgMigrations(**db, 3).ok());  // as gpuschedd wrote it before
    store::PgParams row;
    row.Int(v1::JOB_STATE_PENDING).Bytes(job(1, "alice").jobs[0].SerializeAsString());
    REQUIRE(
        (*db)->Query(R"sql(INSERT INTO jobs VALUES (1, $1, 'alice', 'default', 0, 0, 'train-1', $2))sql", row).ok());
  }
  auto store = engine.OpenStore();
  REQUIRE(store.ok());
  auto recovered = (*store)->Recover();
  REQUIRE(recovered.ok());
  REQUIRE(recovered->unfinished_jobs.size() == 1);
  CHECK(recovered->client_requests == std::vector<ClientRequest>{{"alice", "train-1", 1}});
  CHECK((*store)->Commit(job(2, "bob")).ok());
  CHECK_FALSE((*store)->Commit(job(3, "alice")).ok());
}
