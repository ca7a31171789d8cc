// kill -9 of the daemon: nothing acknowledged is lost, running jobs carry on.

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "grpcpp/completion_queue.h"
#include "tests/integration/test_cluster.h"
#include "tests/skip.h"

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
  INFO("daemon log:\n" << cluster.DaemonLog() << "\nagent log:\n" << cluster.AgentLog("node-a"));
  CHECK(job.state() == v1::JOB_STATE_FAILED);
  CHECK(job.exit_code() == 3);
  CHECK(job.attempt() == 0);
  CHECK(gpusched::testing::ReadFile(marker) == "run\n");
}

namespace {

// Polls until `path` holds `lines` lines.
bool WaitForLines(const std::string& path, size_t lines, int seconds = 10) {
  for (int i = 0; i < seconds * 20; ++i) {
    const std::string text = gpusched::testing::ReadFile(path);
    if (static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) >= lines) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

}  // namespace

TEST_CASE(
    "agents restarted under a running 2-node gang, one stopped and one crashed: it runs on, once, to its exit "
    "code",
    "[integration]") {
  TestCluster cluster;
  const std::string runs = cluster.dir() + "/runs";
  const std::string gate = cluster.dir() + "/gate";
  // Rank 1 fails with 4 (after rank 0 is done, or the gang's stop would race
  // rank 0's last line): the job's exit code must come through the restarts.
  uint64_t id =
      cluster.Submit({"--nodes", "2", "--gpus-per-node", "1", "--", "/bin/sh", "-c",
                      "echo rank $RANK attempt $GPUSCHED_RESTART_COUNT >> " + runs + "; echo before; while [ ! -e " +
                          gate + " ]; do sleep 0.05; done; echo after; [ $RANK = 0 ] || sleep 1; exit $((RANK * 4))"});
  cluster.WaitForState(id, v1::JOB_STATE_RUNNING);
  REQUIRE(WaitForLines(runs, 2));

  cluster.RestartAgent("node-a", SIGTERM);  // systemctl restart gpusched-agent
  cluster.RestartAgent("node-b", SIGKILL);  // a crash, and Restart=on-failure
  for (const char* node : {"node-a", "node-b"}) {
    for (int i = 0; i < 200 && cluster.AgentLog(node).find("adopted from a previous agent") == std::string::npos; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    CHECK_THAT(cluster.AgentLog(node), Catch::Contains("adopted from a previous agent"));
  }
  cluster.WaitForNodesUp(2);
  // Past the moment a lost gang would have been given up on.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  v1::Job running = cluster.GetJob(id);
  CHECK(running.state() == v1::JOB_STATE_RUNNING);
  CHECK(running.attempt() == 0);

  std::ofstream(gate) << "go\n";
  v1::Job job = cluster.WaitForEnd(id, 30);
  CHECK(job.state() == v1::JOB_STATE_FAILED);
  CHECK(job.exit_code() == 4);
  CHECK(job.attempt() == 0);
  CHECK_THAT(job.reason(), Catch::Contains("exited with code 4"));
  // Ran once per rank, and each rank's log has both halves of its one run.
  const std::string ran = gpusched::testing::ReadFile(runs);
  CHECK(std::count(ran.begin(), ran.end(), '\n') == 2);
  CHECK_THAT(ran, Catch::Contains("rank 0 attempt 0") && Catch::Contains("rank 1 attempt 0"));
  for (const char* rank : {"0", "1"}) {
    CHECK(cluster.Cli({"logs", std::to_string(id), "--rank", rank}).out == "before\nafter\n");
  }
}

TEST_CASE("a job whose shim died with its agent leaves no orphan: the next agent kills it, and it runs again once",
          "[integration]") {
  TestCluster cluster({{"node-a", 2}});
  const std::string pids = cluster.dir() + "/pids";
  uint64_t id = cluster.Submit({"--gpus", "1", "--", "/bin/sh", "-c",
                                "echo $$ >> " + pids + "; echo attempt $GPUSCHED_RESTART_COUNT; exec sleep 300"});
  cluster.WaitForState(id, v1::JOB_STATE_RUNNING);
  REQUIRE(WaitForLines(pids, 1));
  cluster.KillAgent("node-a");
  // The shim goes too (the OOM killer, say): the rank is an orphan.
  const std::string exits = cluster.dir() + "/logs/node-a/running/node-a/job-" + std::to_string(id) + ".exits";
  std::istringstream shim_line(gpusched::testing::ReadFile(exits));
  std::string key;
  int shim = 0;
  shim_line >> key >> shim;
  REQUIRE(key == "shim");
  REQUIRE(kill(shim, SIGKILL) == 0);
  auto first_pid = [&] {
    std::istringstream in(gpusched::testing::ReadFile(pids));
    int pid = 0;
    in >> pid;
    return pid;
  };
  const int orphan = first_pid();
  REQUIRE(orphan > 0);
  CHECK_FALSE(gpusched::testing::ProcessGone(orphan));

  cluster.AddAgent({"node-a", 2});  // the same node's agent, restarted
  for (int i = 0; i < 100 && !gpusched::testing::ProcessGone(orphan); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  CHECK(gpusched::testing::ProcessGone(orphan));
  CHECK_THAT(cluster.AgentLog("node-a"), Catch::Contains("its shim is gone; killed 1 process group(s) it left"));
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
    for (int i = 0; i < 100 && !gpusched::testing::ProcessGone(pid); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
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
    GPUSCHED_SKIP("not root, so no jobs of other users can run here");
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
