// JobRunner's NCCL preflight, with a fake probe behind the real interface:
// a job starts only after its GPUs pass, a failure is reported and nothing
// runs, and a kill during the preflight starts nothing.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>

#include "agent/runner/job_runner.h"
#include "test_util.h"

using namespace gpusched::agent;
using namespace gpusched::agent::testing;
namespace v1 = gpusched::v1;
using Kind = v1::JobUpdate;

namespace {

// Answers every measurement with `busbw`, after `gate` opens when one is set.
class FakeProbe : public BandwidthProbe {
 public:
  explicit FakeProbe(double busbw) : busbw_(busbw) {}
  absl::StatusOr<ProbeReport> Measure(const std::vector<int>& gpus) override {
    std::unique_lock<std::mutex> lock(mu_);
    measured_.push_back(gpus);
    cv_.wait(lock, [this] { return open_; });
    if (busbw_ < 0) return absl::InternalError("gpusched-nccl-probe exited with status 1: NCCL error");
    ProbeReport report;
    report.gpus = gpus;
    report.peak_busbw_gbps = busbw_;
    return report;
  }
  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = false;
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  std::vector<std::vector<int>> measured() {
    std::lock_guard<std::mutex> lock(mu_);
    return measured_;
  }

 private:
  const double busbw_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = true;
  std::vector<std::vector<int>> measured_;
};

JobRunnerOptions Options(const TempDir& dir, std::shared_ptr<BandwidthProbe> probe) {
  JobRunnerOptions o = RunnerOptions(dir);
  o.probe = std::move(probe);
  return o;
}

// GPUs 1 and 3, one process each.
v1::LaunchJob WithPreflight(uint64_t job_id, const std::string& command, double min_busbw) {
  v1::LaunchJob launch = MakeShellLaunch(job_id, command, {1, 3});
  launch.mutable_preflight()->set_min_busbw_gbps(min_busbw);
  launch.mutable_preflight()->set_expected_busbw_gbps(2 * min_busbw);
  return launch;
}

}  // namespace

TEST_CASE("preflight: the job's GPUs are measured first, and the job starts when they pass") {
  TempDir dir;
  auto probe = std::make_shared<FakeProbe>(30);
  UpdateRecorder updates;
  JobRunner runner(Options(dir, probe), updates.Callback());
  runner.Launch(WithPreflight(1, "exit 0", 16));
  auto started = updates.WaitFor(1, Kind::KIND_STARTED);
  REQUIRE(started.has_value());
  CHECK(started->preflight_busbw_gbps() == Approx(30));
  CHECK(started->message() ==
        "NCCL all-reduce over GPUs 1,3: 30.0 GB/s bus bandwidth, at least the 16.0 GB/s needed (estimate 32.0 GB/s)");
  CHECK(probe->measured() == std::vector<std::vector<int>>{{1, 3}});
  CHECK(updates.WaitFor(1, Kind::KIND_EXITED).has_value());
}

TEST_CASE("preflight: below the minimum, or a probe error, nothing runs and the node reports PREFLIGHT_FAILED") {
  TempDir dir;
  const std::string touch_ran = "touch " + dir.path() + "/ran";
  UpdateRecorder updates;
  auto slow = std::make_shared<FakeProbe>(5);
  {
    JobRunner runner(Options(dir, slow), updates.Callback());
    runner.Launch(WithPreflight(2, touch_ran, 16));
    auto failed = updates.WaitFor(2, Kind::KIND_PREFLIGHT_FAILED);
    REQUIRE(failed.has_value());
    CHECK(failed->preflight_busbw_gbps() == Approx(5));
    CHECK(failed->message() ==
          "NCCL all-reduce over GPUs 1,3: 5.0 GB/s bus bandwidth, below the 16.0 GB/s needed (estimate 32.0 GB/s)");
    // Asked again (a resent launch), it answers the same without measuring,
    // before Launch returns (a launch it measures goes to the preflight worker).
    runner.Launch(WithPreflight(2, touch_ran, 16));
    CHECK(updates.Count(2, Kind::KIND_PREFLIGHT_FAILED) == 2);
    CHECK(slow->measured().size() == 1);
  }
  auto broken = std::make_shared<FakeProbe>(-1);
  JobRunner runner(Options(dir, broken), updates.Callback());
  runner.Launch(WithPreflight(3, touch_ran, 16));
  auto failed = updates.WaitFor(3, Kind::KIND_PREFLIGHT_FAILED);
  REQUIRE(failed.has_value());
  CHECK(failed->message() ==
        "NCCL all-reduce over GPUs 1,3 failed: gpusched-nccl-probe exited with status 1: NCCL error");
  CHECK(updates.Count(2, Kind::KIND_STARTED) + updates.Count(3, Kind::KIND_STARTED) == 0);
  CHECK_FALSE(std::filesystem::exists(dir.path() + "/ran"));
}

TEST_CASE("preflight: a kill while it measures answers once, and the job never starts") {
  TempDir dir;
  auto probe = std::make_shared<FakeProbe>(30);
  probe->Close();
  UpdateRecorder updates;
  JobRunner runner(Options(dir, probe), updates.Callback());
  runner.Launch(WithPreflight(4, "sleep 30", 16));
  for (int i = 0; i < 200 && probe->measured().empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(probe->measured().size() == 1);
  runner.Kill(4, absl::Seconds(1), "cancelled by the user");
  CHECK(updates.All().empty());  // answered once the preflight is done
  probe->Open();
  auto exited = updates.WaitFor(4, Kind::KIND_EXITED);
  REQUIRE(exited.has_value());
  CHECK(exited->message() == "killed during its preflight on test-node; nothing ran");
  CHECK(updates.Count(4, Kind::KIND_STARTED) == 0);
  CHECK(runner.RunningJobIds().empty());
}

TEST_CASE("preflight: an agent without a probe starts the job with a note") {
  TempDir dir;
  UpdateRecorder updates;
  JobRunner runner(Options(dir, nullptr), updates.Callback());
  runner.Launch(WithPreflight(5, "exit 0", 16));
  auto started = updates.WaitFor(5, Kind::KIND_STARTED);
  REQUIRE(started.has_value());
  CHECK(started->message() == "preflight skipped: this agent has no NCCL probe (gpusched-nccl-probe)");
  CHECK(started->preflight_busbw_gbps() == 0);
}
