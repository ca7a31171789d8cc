#include "daemon/server/batch_committer.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

using namespace gpusched;

namespace {

// Records commits; can hold a commit "on disk" until released, to see what
// waits for it.
class RecordingStore final : public store::JobStore {
 public:
  absl::StatusOr<store::RecoveredState> Recover() override { return store::RecoveredState{}; }
  absl::Status Commit(const store::StoreBatch& batch) override {
    if (!entered_once_.exchange(true)) entered_.set_value();
    gate_.wait();
    std::lock_guard<std::mutex> lock(mu_);
    commits_.push_back(batch);
    return absl::OkStatus();
  }
  std::vector<store::StoreBatch> commits() {
    std::lock_guard<std::mutex> lock(mu_);
    return commits_;
  }
  void Open() { open_.set_value(); }
  void WaitUntilCommitting() { entered_.get_future().wait(); }

 private:
  std::atomic<bool> entered_once_{false};
  std::promise<void> entered_;
  std::promise<void> open_;
  std::shared_future<void> gate_ = open_.get_future().share();
  std::mutex mu_;
  std::vector<store::StoreBatch> commits_;
};

// Fails its commits while `full` is set (a full disk), and every commit
// that holds job `poison` (a row the store rejects each time).
class FillableStore final : public store::JobStore {
 public:
  absl::StatusOr<store::RecoveredState> Recover() override { return store::RecoveredState{}; }
  absl::Status Commit(const store::StoreBatch& batch) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++attempts_;
    if (full_) return absl::InternalError("sqlite error in COMMIT: database or disk is full");
    for (const v1::Job& job : batch.jobs) {
      if (poison_ && job.id() == *poison_) return absl::InvalidArgumentError("value too long for the index");
    }
    for (const v1::Job& job : batch.jobs) committed_.push_back(job.id());
    return absl::OkStatus();
  }
  void SetFull(bool full) {
    std::lock_guard<std::mutex> lock(mu_);
    full_ = full;
  }
  void SetPoison(uint64_t job) {
    std::lock_guard<std::mutex> lock(mu_);
    poison_ = job;
  }
  int attempts() {
    std::lock_guard<std::mutex> lock(mu_);
    return attempts_;
  }
  std::vector<uint64_t> committed() {
    std::lock_guard<std::mutex> lock(mu_);
    return committed_;
  }

 private:
  std::mutex mu_;
  bool full_ = false;
  std::optional<uint64_t> poison_;
  int attempts_ = 0;
  std::vector<uint64_t> committed_;
};

class RecordingChannel final : public server::AgentChannel {
 public:
  void Send(const v1::DaemonMessage& message) override {
    std::lock_guard<std::mutex> lock(mu_);
    sent.push_back(message.launch().job_id());
  }
  void Close(const std::string&) override {}
  bool open() const override { return true; }
  std::mutex mu_;
  std::vector<uint64_t> sent;
};

server::CommittedBatch Batch(uint64_t job, v1::JobState state, std::shared_ptr<RecordingChannel> channel,
                             std::vector<std::string>& log, std::mutex& log_mu) {
  server::CommittedBatch batch;
  batch.jobs[job].set_id(job);
  batch.jobs[job].set_state(state);
  v1::DaemonMessage launch;
  launch.mutable_launch()->set_job_id(job);
  batch.messages.emplace_back(channel, launch);
  batch.after_commit.push_back([job, state, &log, &log_mu](const absl::Status& s, const server::CommittedBatch& b) {
    std::lock_guard<std::mutex> lock(log_mu);
    log.push_back(std::to_string(job) + (s.ok() ? " ok " : " failed ") + std::to_string(b.FindJob(job)->state()));
  });
  return batch;
}

// A started committer over a FillableStore, with one agent channel and a
// log of what its batches' callers were told ("1 failed 6": job 1, not
// persisted, as state 6).
struct Committing {
  Committing() { committer.Start(); }
  void Hand(uint64_t job, v1::JobState state) { committer.Hand(Batch(job, state, channel, log, log_mu)); }
  // Until the store was asked `n` times, or 4 s.
  void WaitForAttempts(int n) {
    for (int i = 0; i < 200 && store.attempts() < n; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::vector<std::string> Told() {
    std::lock_guard<std::mutex> lock(log_mu);
    return log;
  }

  FillableStore store;
  server::JobEventHub hub;
  server::StoreHealth health;
  std::shared_ptr<RecordingChannel> channel = std::make_shared<RecordingChannel>();
  std::vector<std::string> log;
  std::mutex log_mu;
  // Last: stopped (its callers told) before what it tells them goes.
  server::BatchCommitter committer{store, hub, health};
};

}  // namespace

TEST_CASE("nothing is released before its batch is durable; queued batches share one commit, in order") {
  RecordingStore store;
  server::JobEventHub hub;
  server::StoreHealth health;
  server::BatchCommitter committer(store, hub, health);
  auto channel = std::make_shared<RecordingChannel>();
  std::vector<std::string> log;
  std::mutex log_mu;
  committer.Start();

  // The first commit is held on disk; two more batches queue up behind it.
  committer.Hand(Batch(1, v1::JOB_STATE_PENDING, channel, log, log_mu));
  store.WaitUntilCommitting();
  committer.Hand(Batch(2, v1::JOB_STATE_PENDING, channel, log, log_mu));
  committer.Hand(Batch(2, v1::JOB_STATE_STARTING, channel, log, log_mu));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  {
    std::lock_guard<std::mutex> lock(log_mu);
    CHECK(log.empty());
  }
  CHECK(channel->sent.empty());

  store.Open();
  committer.Stop();  // drains
  auto commits = store.commits();
  REQUIRE(commits.size() == 2);
  REQUIRE(commits[0].jobs.size() == 1);
  CHECK(commits[0].jobs[0].id() == 1);
  REQUIRE(commits[1].jobs.size() == 1);  // job 2 twice in one group: its later version only
  CHECK(commits[1].jobs[0].state() == v1::JOB_STATE_STARTING);
  CHECK(log == std::vector<std::string>{"1 ok 1", "2 ok 1", "2 ok 2"});
  CHECK(channel->sent == std::vector<uint64_t>{1, 2, 2});
}

TEST_CASE("a commit that fails is retried until it fits; meanwhile changes are refused, and nothing leaves early") {
  FillableStore store;
  server::JobEventHub hub;
  server::StoreHealth health;
  server::BatchCommitter committer(store, hub, health);
  auto channel = std::make_shared<RecordingChannel>();
  std::vector<std::string> log;
  std::mutex log_mu;
  committer.Start();
  CHECK(health.AcceptingChanges().ok());

  store.SetFull(true);
  committer.Hand(Batch(1, v1::JOB_STATE_PENDING, channel, log, log_mu));
  for (int i = 0; i < 200 && store.attempts() < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(store.attempts() >= 2);  // retried
  const absl::Status refusal = health.AcceptingChanges();
  CHECK(refusal.code() == absl::StatusCode::kResourceExhausted);
  CHECK_THAT(std::string(refusal.message()), Catch::Contains("database or disk is full"));
  committer.Hand(Batch(2, v1::JOB_STATE_PENDING, channel, log, log_mu));  // accepted before the refusal began
  {
    std::lock_guard<std::mutex> lock(log_mu);
    CHECK(log.empty());
  }
  CHECK(channel->sent.empty());

  store.SetFull(false);
  committer.Stop();
  CHECK(store.committed() == std::vector<uint64_t>{1, 2});
  CHECK(log == std::vector<std::string>{"1 ok 1", "2 ok 1"});
  CHECK(channel->sent == std::vector<uint64_t>{1, 2});
  CHECK(health.AcceptingChanges().ok());
}

TEST_CASE("stopping while commits fail gives the waiting batches up, unacknowledged and unsent") {
  Committing c;
  c.store.SetFull(true);
  c.Hand(1, v1::JOB_STATE_PENDING);
  c.WaitForAttempts(1);
  c.committer.Stop();
  CHECK(c.store.committed().empty());
  CHECK(c.Told() == std::vector<std::string>{"1 failed 1"});
  CHECK(c.channel->sent.empty());
}

TEST_CASE("a batch queued behind one given up is given up too, although the store would take it") {
  // Job 2's batch was computed on top of job 1's (say, on the GPUs job 1's
  // cancel freed): on disk without it, a restart would see both.
  Committing c;
  c.store.SetPoison(1);
  c.Hand(1, v1::JOB_STATE_CANCELLED);
  c.WaitForAttempts(1);
  REQUIRE(c.store.attempts() >= 1);
  c.Hand(2, v1::JOB_STATE_STARTING);
  c.committer.Stop();
  CHECK(c.store.committed().empty());
  CHECK(c.Told() == std::vector<std::string>{"1 failed 6", "2 failed 2"});
  CHECK(c.channel->sent.empty());
}

TEST_CASE("once told to stop retrying, a commit the store refuses is given up at once; the committer stays up") {
  Committing c;
  c.store.SetFull(true);
  c.Hand(1, v1::JOB_STATE_PENDING);
  c.WaitForAttempts(1);
  c.committer.StopRetrying();
  for (int i = 0; i < 100 && c.Told().empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(c.Told() == std::vector<std::string>{"1 failed 1"});  // without waiting for Stop
  c.committer.Stop();
  CHECK(c.store.committed().empty());
  CHECK(c.channel->sent.empty());
}
