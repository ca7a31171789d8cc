// QueueUsage: fair share charged from the job table, limits counted, and the
// usage handed over to be kept at most once a minute.
#include "daemon/core/queue/queue_usage.h"

#include <catch2/catch.hpp>

#include "common/proto_time.h"

namespace gpusched::core {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1'700'000'000);

ActiveJob Job(JobTable& table, const std::string& user, int gpus, v1::JobState state) {
  ActiveJob a;
  a.job.set_id(table.TakeId());
  a.job.set_state(state);
  a.job.mutable_spec()->set_user(user);
  a.job.mutable_spec()->set_account(user + "-lab");
  a.job.mutable_spec()->set_queue("default");
  a.job.mutable_spec()->mutable_resources()->set_gpus(gpus);
  *a.job.mutable_submit_time() = ToProtoTime(kT0);
  return a;
}

QueuePolicy Queues() {
  QueuePolicy queues = QueuePolicy::Default();
  REQUIRE(queues.Compile().ok());
  return queues;
}

TEST_CASE("the placed jobs' users are charged for the time they held GPUs; pending jobs' users are not",
          "[queue_usage]") {
  const QueuePolicy queues = Queues();
  QueueUsage usage(queues);
  JobTable jobs;
  jobs.Add(Job(jobs, "alice", 4, v1::JOB_STATE_RUNNING));
  jobs.Add(Job(jobs, "bob", 4, v1::JOB_STATE_PENDING));
  usage.SetWaiting({"bob"}, {"bob-lab"});
  usage.Advance(kT0, jobs);
  usage.Advance(kT0 + absl::Hours(1), jobs);
  CHECK(usage.FairShareFactor("alice", "alice-lab") < usage.FairShareFactor("bob", "bob-lab"));
  CHECK(usage.FairShareFactor("bob", "bob-lab") == 1.0);
}

TEST_CASE("the parties with jobs waiting split the shares with those that used GPUs", "[queue_usage]") {
  const QueuePolicy queues = Queues();
  auto alice_factor = [&](const std::vector<absl::string_view>& waiting_users) {
    QueueUsage usage(queues);
    JobTable jobs;
    jobs.Add(Job(jobs, "alice", 4, v1::JOB_STATE_RUNNING));
    std::vector<absl::string_view> waiting_accounts;
    for (absl::string_view user : waiting_users) waiting_accounts.push_back(user == "bob" ? "bob-lab" : "alice-lab");
    usage.SetWaiting(waiting_users, waiting_accounts);
    usage.Advance(kT0, jobs);
    usage.Advance(kT0 + absl::Hours(1), jobs);
    return usage.FairShareFactor("alice", "alice-lab");
  };
  // All of the usage is alice's: against one competitor her share is half
  // the cluster, alone it is all of it; her own waiting jobs add no party.
  CHECK(alice_factor({"bob"}) == Approx(0.25));
  CHECK(alice_factor({}) == Approx(0.5));
  CHECK(alice_factor({"alice"}) == Approx(0.5));
}

TEST_CASE("the usage is due to be kept at most once a minute, and not at all when fair share weighs nothing",
          "[queue_usage]") {
  const QueuePolicy queues = Queues();
  QueueUsage usage(queues);
  CHECK(usage.DueToKeep(kT0).has_value());
  CHECK_FALSE(usage.DueToKeep(kT0 + absl::Seconds(59)).has_value());
  CHECK(usage.DueToKeep(kT0 + absl::Seconds(60)).has_value());
  // Kept at once (a stopping daemon): the minute starts over from then.
  usage.KeepNow(kT0 + absl::Seconds(90));
  CHECK_FALSE(usage.DueToKeep(kT0 + absl::Seconds(120)).has_value());
  CHECK(usage.DueToKeep(kT0 + absl::Seconds(150)).has_value());

  QueuePolicy unweighted = Queues();
  unweighted.weights.fair_share = 0;
  QueueUsage none(unweighted);
  CHECK_FALSE(none.DueToKeep(kT0).has_value());
  CHECK_FALSE(none.DueToKeep(kT0 + absl::Hours(1)).has_value());
}

TEST_CASE("usage kept and restored gives the same factors", "[queue_usage]") {
  const QueuePolicy queues = Queues();
  QueueUsage before(queues);
  JobTable jobs;
  jobs.Add(Job(jobs, "alice", 8, v1::JOB_STATE_RUNNING));
  jobs.Add(Job(jobs, "bob", 1, v1::JOB_STATE_RUNNING));
  before.Advance(kT0, jobs);
  before.Advance(kT0 + absl::Hours(2), jobs);
  const v1::FairShareUsage kept = before.KeepNow(kT0 + absl::Hours(2));

  QueueUsage after(queues);
  after.Restore(kept);
  after.Advance(kT0 + absl::Hours(2), JobTable{});
  before.Advance(kT0 + absl::Hours(2), JobTable{});
  for (const char* user : {"alice", "bob"}) {
    INFO(user);
    CHECK(after.FairShareFactor(user, std::string(user) + "-lab") ==
          before.FairShareFactor(user, std::string(user) + "-lab"));
  }
  CHECK(after.FairShareFactor("alice", "alice-lab") < after.FairShareFactor("bob", "bob-lab"));
}

TEST_CASE("placed array tasks count against their array until they are uncharged", "[queue_usage]") {
  const QueuePolicy queues = Queues();
  QueueUsage usage(queues);
  JobTable jobs;
  ActiveJob task = Job(jobs, "alice", 1, v1::JOB_STATE_RUNNING);
  task.job.mutable_array()->set_array_id(task.job.id());
  task.job.mutable_array()->set_count(4);
  task.job.mutable_array()->set_max_running(2);
  usage.Charge(task.job, +1);
  CHECK(usage.limits().ArrayPlaced(task.job.id()) == 1);
  usage.Charge(task.job, -1);
  CHECK(usage.limits().ArrayPlaced(task.job.id()) == 0);
}

}  // namespace
}  // namespace gpusched::core
