// kill -9 of the daemon: nothing acknowledged is lost, running jobs carry on.

#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <thread>
#include <map>
#include <sstream>

#include "grpcpp/completion_queue.h"
#include "tests/integration/test_cluster.h"

using namespace gpusched;
using gpusched::testing::TestCluster;

namespace {

struct InFlight {
  grpc::ClientContext ctx;
  v1::SubmitJobResponse response;
  grpc::Status status;
  std::string request_id;
  std::unique_ptr<grpc::ClientAsyncResponseReader<v1::SubmitJobResponse>> reader;
};

}  // namespace

TEST_CASE("kill -9 during a burst of 500 concurrent submits loses no acknowledged job", "[integration]") {
  TestCluster cluster(std::vector<gpusched::testing::AgentSpec>{});  // no agents: every job stays PENDING
  grpc::CompletionQueue cq;
  std::map<InFlight*, std::unique_ptr<InFlight>> calls;
  int issued = 0;
  auto issue = [&] {
    auto call = std::make_unique<InFlight>();
    call->request_id = "burst-" + std::to_string(issued++);
    call->ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::SubmitJobRequest request;
    request.set_client_request_id(call->request_id);
    request.mutable_spec()->set_name(call->request_id);
    request.mutable_spec()->add_argv("/bin/true");
    request.mutable_spec()->mutable_resources()->set_gpus(1);
    call->reader = cluster.stub().AsyncSubmitJob(&call->ctx, request, &cq);
    InFlight* tag = call.get();
    call->reader->Finish(&call->response, &call->status, tag);
    calls[tag] = std::move(call);
  };

  // Keep 500 submits in flight; crash the daemon once 1,000 are acknowledged.
  for (int i = 0; i < 500; ++i) issue();
  std::map<std::string, uint64_t> acknowledged;
  bool crashed = false;
  void* tag;
  bool ok;
  while (!calls.empty() && cq.Next(&tag, &ok)) {
    auto call = std::move(calls[static_cast<InFlight*>(tag)]);
    calls.erase(static_cast<InFlight*>(tag));
    if (call->status.ok()) acknowledged[call->request_id] = call->response.job().id();
    if (!crashed && acknowledged.size() >= 1000) {
      cluster.CrashDaemon();
      crashed = true;
    }
    if (!crashed) issue();
  }
  REQUIRE(crashed);
  INFO(acknowledged.size() << " acknowledged of " << issued << " issued");

  cluster.StartDaemon();
  for (const auto& [request_id, id] : acknowledged) {
    v1::Job job = cluster.GetJob(id);
    CHECK(job.client_request_id() == request_id);
    CHECK(job.state() == v1::JOB_STATE_PENDING);
  }
  // A retried submit of an acknowledged request returns the same job.
  const auto& [first_request, first_id] = *acknowledged.begin();
  v1::SubmitJobRequest retry;
  retry.set_client_request_id(first_request);
  retry.mutable_spec()->add_argv("/bin/true");
  v1::SubmitJobResponse response;
  grpc::ClientContext ctx;
  REQUIRE(cluster.stub().SubmitJob(&ctx, retry, &response).ok());
  CHECK(response.duplicate());
  CHECK(response.job().id() == first_id);
}

TEST_CASE("a job running across a daemon crash finishes once, and is reported", "[integration]") {
  TestCluster cluster({{"node-a", 2}});
  const std::string marker = cluster.dir() + "/runs";
  uint64_t id = cluster.Submit({"--gpus", "1", "--", "/bin/sh", "-c", "echo run >> " + marker + "; sleep 2"});
  cluster.WaitForState(id, v1::JOB_STATE_RUNNING);
  cluster.CrashDaemon();
  cluster.StartDaemon();
  v1::Job job = cluster.WaitForEnd(id, 30);
  CHECK(job.state() == v1::JOB_STATE_COMPLETED);
  CHECK(gpusched::testing::ReadFile(marker) == "run\n");  // never started twice
}

TEST_CASE("a job that ends while the daemon is down is reported on reconnect, not taken for lost and run again",
          "[integration]") {
  TestCluster cluster({{"node-a", 2}});
  const std::string marker = cluster.dir() + "/runs";
  uint64_t id = cluster.Submit({"--gpus", "1", "--", "/bin/sh", "-c", "echo run >> " + marker + "; sleep 1; exit 3"});
  cluster.WaitForState(id, v1::JOB_STATE_RUNNING);
  cluster.CrashDaemon();
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // it exits meanwhile
  cluster.StartDaemon();
  v1::Job job = cluster.WaitForEnd(id, 30);
  CHECK(job.state() == v1::JOB_STATE_FAILED);
  CHECK(job.exit_code() == 3);
  CHECK(job.attempt() == 0);
  CHECK(gpusched::testing::ReadFile(marker) == "run\n");
}

TEST_CASE("an agent killed with kill -9 leaves no orphan: the next one kills its jobs, which run again once",
          "[integration]") {
  TestCluster cluster({{"node-a", 2}});
  const std::string pids = cluster.dir() + "/pids";
  uint64_t id = cluster.Submit({"--gpus", "1", "--", "/bin/sh", "-c",
                                "echo $$ >> " + pids + "; echo attempt $GPUSCHED_RESTART_COUNT; exec sleep 300"});
  cluster.WaitForState(id, v1::JOB_STATE_RUNNING);
  cluster.KillAgent("node-a");
  auto first_pid = [&] {
    std::istringstream in(gpusched::testing::ReadFile(pids));
    int pid = 0;
    in >> pid;
    return pid;
  };
  const int orphan = first_pid();
  REQUIRE(orphan > 0);
  CHECK_FALSE(gpusched::testing::ProcessGone(orphan));  // nobody reaps it while no agent runs

  cluster.AddAgent({"node-a", 2});  // the same node's agent, restarted
  for (int i = 0; i < 100 && !gpusched::testing::ProcessGone(orphan); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  CHECK(gpusched::testing::ProcessGone(orphan));
  CHECK_THAT(cluster.AgentLog("node-a"), Catch::Contains("a previous agent left running"));
  // The daemon took the lost processes for a node failure: a second attempt,
  // the only copy running.
  v1::Job again = cluster.WaitForState(id, v1::JOB_STATE_RUNNING, 30);
  for (int i = 0; i < 100 && again.attempt() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    again = cluster.WaitForState(id, v1::JOB_STATE_RUNNING, 30);
  }
  CHECK(again.attempt() == 1);
  cluster.Cli({"cancel", std::to_string(id)});
  cluster.WaitForEnd(id);
  std::istringstream in(gpusched::testing::ReadFile(pids));
  int runs = 0;
  for (int pid; in >> pid;) {
    ++runs;
    CHECK(gpusched::testing::ProcessGone(pid));
  }
  CHECK(runs == 2);
}

TEST_CASE("a job's end survives its agent: ended while the daemon was down, the agent restarted, still reported",
          "[integration]") {
  TestCluster cluster({{"node-a", 2}});
  const std::string marker = cluster.dir() + "/runs";
  uint64_t id = cluster.Submit({"--gpus", "1", "--", "/bin/sh", "-c", "echo run >> " + marker + "; sleep 1; exit 5"});
  cluster.WaitForState(id, v1::JOB_STATE_RUNNING);
  cluster.CrashDaemon();
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // it exits, heard by no daemon
  cluster.KillAgent("node-a");
  cluster.AddAgent({"node-a", 2});  // knows of it only from disk
  cluster.StartDaemon();
  v1::Job job = cluster.WaitForEnd(id, 30);
  CHECK(job.state() == v1::JOB_STATE_FAILED);
  CHECK(job.exit_code() == 5);
  CHECK(job.attempt() == 0);
  CHECK(gpusched::testing::ReadFile(marker) == "run\n");
}

TEST_CASE("fair-share usage survives a daemon restart", "[integration]") {
  if (geteuid() != 0) {
    WARN("SKIPPED: not root, so no jobs of other users can run here");
    return;
  }
  TestCluster cluster({{"node-a", 4}});
  auto submit = [&](const std::string& user, const std::string& command) {
    v1::SubmitJobRequest request;
    request.mutable_spec()->set_user(user);  // an admin submitting for users
    request.mutable_spec()->set_workdir("/tmp");
    request.mutable_spec()->add_argv("/bin/sh");
    request.mutable_spec()->add_argv("-c");
    request.mutable_spec()->add_argv(command);
    request.mutable_spec()->mutable_resources()->set_gpus(4);
    v1::SubmitJobResponse response;
    grpc::ClientContext ctx;
    REQUIRE(cluster.stub().SubmitJob(&ctx, request, &response).ok());
    return response.job().id();
  };
  // nobody holds the whole node for a few seconds, then the daemon restarts.
  const uint64_t used = submit("nobody", "sleep 3");
  REQUIRE(cluster.WaitForEnd(used).state() == v1::JOB_STATE_COMPLETED);
  cluster.StopDaemon();
  cluster.StartDaemon();
  cluster.WaitForNodesUp(1);

  // The node busy, nobody and bin (who used nothing) both wait: nobody's
  // use before the restart still counts against it.
  const uint64_t blocker = submit("daemon", "sleep 60");
  cluster.WaitForState(blocker, v1::JOB_STATE_RUNNING);
  const uint64_t nobodys = submit("nobody", "true");
  const uint64_t bins = submit("bin", "true");
  v1::Job a, b;
  for (int i = 0; i < 100; ++i) {
    a = cluster.GetJob(nobodys);
    b = cluster.GetJob(bins);
    if (a.priority().fair_share() > 0 && b.priority().fair_share() > 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  INFO("nobody " << a.priority().ShortDebugString() << "; bin " << b.priority().ShortDebugString());
  CHECK(b.priority().fair_share() == Approx(1.0));
  CHECK(a.priority().fair_share() < 0.9);
  CHECK(a.priority().total() < b.priority().total());
}
