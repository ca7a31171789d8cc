// Several gpuschedd on one PostgreSQL database (a real server, started by
// the test), agents with fake GPUs, all real processes on loopback: the
// active replica is killed during submit bursts, or paused past its lease,
// and PostgreSQL itself restarts under load.

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/replica_addresses.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "tests/integration/test_cluster.h"
#include "tests/skip.h"
#include "tests/support/http_client.h"
#include "tests/support/postgres_server.h"
#include "tests/support/temp_dir.h"

using namespace gpusched;
using namespace gpusched::testing;
using Clock = std::chrono::steady_clock;

namespace {

// Two or three replicas of gpuschedd on one database, and agents that know
// all of their addresses.
class ReplicatedCluster {
 public:
  ReplicatedCluster(PostgresServer& pg, const std::string& dir, int replicas, bool metrics = false) : dir_(dir) {
    auto url = pg.CreateDatabase("gpusched");
    REQUIRE(url.ok());
    url_ = *url;
    CommandResult init = RunCommand({GPUSCHEDD_BIN, "init", "--store", url_});
    REQUIRE(init.exit_code == 0);
    for (int i = 0; i < replicas; ++i) {
      ports_.push_back(FreeLoopbackPort());
      metrics_ports_.push_back(metrics ? FreeLoopbackPort() : 0);
    }
    for (int i = 0; i < replicas; ++i) {
      replicas_.emplace_back();
      Start(i);
    }
  }

  void Start(int i) {
    std::vector<std::string> argv = {GPUSCHEDD_BIN,
                                     "serve",
                                     "--store",
                                     url_,
                                     "--listen",
                                     Address(i),
                                     "--state-dir",
                                     absl::StrCat(dir_, "/state-", i),
                                     "--allow-unauthenticated-tcp",
                                     "--allow-root-jobs",
                                     "--leader-lease-ms",
                                     "2000",
                                     "--tick-ms",
                                     "50",
                                     "--kill-grace-ms",
                                     "1000"};
    if (metrics_ports_[i] != 0) argv.insert(argv.end(), {"--metrics-listen", MetricsAddress(i)});
    replicas_[i] = std::make_unique<Subprocess>(std::move(argv), absl::StrCat(dir_, "/gpuschedd-", i, ".log"));
  }

  void StartAgents(int agents, int gpus) {
    for (int a = 0; a < agents; ++a) {
      const std::string name = absl::StrCat("node-", a);
      agents_.push_back(std::make_unique<Subprocess>(
          std::vector<std::string>{GPUSCHED_AGENT_BIN, "--daemon", AllAddresses(), "--node-name", name, "--log-dir",
                                   dir_ + "/logs/" + name, "--heartbeat-interval-ms", "500", "--fake-gpus",
                                   std::to_string(gpus)},
          dir_ + "/agent-" + name + ".log"));
    }
  }

  std::string Address(int i) const { return absl::StrCat("127.0.0.1:", ports_[i]); }
  std::string MetricsAddress(int i) const { return absl::StrCat("127.0.0.1:", metrics_ports_[i]); }
  int metrics_port(int i) const { return metrics_ports_[i]; }
  std::string AllAddresses() const {
    std::vector<std::string> all;
    for (size_t i = 0; i < ports_.size(); ++i) all.push_back(Address(static_cast<int>(i)));
    return absl::StrJoin(all, ",");
  }
  int size() const { return static_cast<int>(replicas_.size()); }
  Subprocess& replica(int i) { return *replicas_[i]; }
  std::string Log(int i) const { return replicas_[i]->Log(); }

  // The replica that serves calls (a standby refuses them all), or -1.
  int Active() const {
    for (int i = 0; i < size(); ++i) {
      auto channel = grpc::CreateChannel(Address(i), grpc::InsecureChannelCredentials());
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
      v1::ListNodesResponse nodes;
      if (v1::Scheduler::NewStub(channel)->ListNodes(&context, v1::ListNodesRequest(), &nodes).ok()) return i;
    }
    return -1;
  }

  int WaitForActive(double seconds) const {
    const auto until = Clock::now() + std::chrono::milliseconds(static_cast<int>(seconds * 1000));
    for (int active = Active(); Clock::now() < until; active = Active()) {
      if (active >= 0) return active;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return Active();
  }

  std::string AllLogs() const {
    std::string logs;
    for (int i = 0; i < size(); ++i) absl::StrAppend(&logs, "--- gpuschedd ", i, ":\n", Log(i));
    return logs;
  }

 private:
  std::string dir_;
  std::string url_;
  std::vector<int> ports_;
  std::vector<int> metrics_ports_;  // 0: none
  std::vector<std::unique_ptr<Subprocess>> replicas_;
  std::vector<std::unique_ptr<Subprocess>> agents_;
};

// A client of all replicas: a call that finds no one, or a standby, goes on
// to the replica the standby named, else the next, until `deadline`.
class FollowingClient {
 public:
  explicit FollowingClient(const std::string& addresses) : replicas_(addresses) {
    for (const std::string& address : replicas_.all()) {
      stubs_.push_back(v1::Scheduler::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials())));
    }
  }

  // The acknowledged job, or nullopt when no replica acknowledged by `deadline`.
  std::optional<v1::Job> Submit(const v1::SubmitJobRequest& request, Clock::time_point deadline) {
    while (Clock::now() < deadline) {
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
      v1::SubmitJobResponse response;
      grpc::Status status = stubs_[replicas_.current_index()]->SubmitJob(&context, request, &response);
      if (status.ok()) return response.job();
      // No one to point at: a moment before the next replica.
      if (!replicas_.FailedWith(context.GetServerTrailingMetadata())) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
    return std::nullopt;
  }

  std::optional<v1::Job> Get(uint64_t id) {
    for (size_t tried = 0; tried < 2 * replicas_.size(); ++tried) {
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
      v1::GetJobRequest request;
      request.set_job_id(id);
      v1::Job job;
      grpc::Status status = stubs_[replicas_.current_index()]->GetJob(&context, request, &job);
      if (status.ok()) return job;
      errors_ += status.error_message() + " | ";
      if (status.error_code() == grpc::StatusCode::NOT_FOUND) return std::nullopt;
      replicas_.Failed("");
    }
    return std::nullopt;
  }

  // Why the calls failed, for a test's message.
  const std::string& errors() const { return errors_; }

 private:
  ReplicaAddresses replicas_;
  std::vector<std::unique_ptr<v1::Scheduler::Stub>> stubs_;
  std::string errors_;
};

std::unique_ptr<PostgresServer> StartPostgres(const TempDir& dir, std::string* skipped) {
  auto pg = PostgresServer::Start(dir.path().string());
  if (absl::IsNotFound(pg.status())) {
    *skipped = std::string(pg.status().message());
    return nullptr;
  }
  REQUIRE(pg.ok());
  return std::move(*pg);
}

// A PostgreSQL server and two replicas on it, with the active one found.
struct TwoReplicas {
  explicit TwoReplicas(bool metrics = false)
      : pg(StartPostgres(dir, &skipped)),
        cluster(pg ? std::make_unique<ReplicatedCluster>(*pg, dir.path().string(), 2, metrics) : nullptr),
        active(cluster ? cluster->WaitForActive(20) : -1) {}
  TempDir dir;
  std::string skipped;  // why there is no server
  std::unique_ptr<PostgresServer> pg;
  std::unique_ptr<ReplicatedCluster> cluster;
  int active;
};

// What the standard gRPC health check says of a replica: SERVING (1),
// NOT_SERVING (2), or -1 when the call fails.
int HealthOf(const std::string& address) {
  grpc::GenericStub stub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  grpc::CompletionQueue cq;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  grpc::Slice empty(std::string{});
  grpc::ByteBuffer request(&empty, 1);  // HealthCheckRequest{}: no bytes
  auto call = stub.PrepareUnaryCall(&context, "/grpc.health.v1.Health/Check", request, &cq);
  call->StartCall();
  grpc::ByteBuffer response;
  grpc::Status status;
  call->Finish(&response, &status, reinterpret_cast<void*>(1));
  void* tag = nullptr;
  bool ok = false;
  if (!cq.Next(&tag, &ok) || !ok || !status.ok()) return -1;
  std::vector<grpc::Slice> slices;
  if (!response.Dump(&slices).ok()) return -1;
  std::string bytes;
  for (const grpc::Slice& slice : slices) bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  // HealthCheckResponse{status}: field 1, a varint.
  return bytes.size() == 2 && bytes[0] == 0x08 ? bytes[1] : -1;
}

// One series' value in a replica's /metrics, or -1 when absent.
double Metric(int port, const std::string& name) {
  auto page = HttpGet("127.0.0.1", port, "/metrics");
  if (!page.ok()) return -1;
  for (absl::string_view line : absl::StrSplit(page->body, '\n')) {
    if (!absl::StartsWith(line, name + " ")) continue;
    double value = 0;
    if (absl::SimpleAtod(line.substr(name.size() + 1), &value)) return value;
  }
  return -1;
}

v1::SubmitJobRequest Request(const std::string& id, bool hold, const std::string& runs) {
  v1::SubmitJobRequest request;
  request.set_client_request_id(id);
  request.mutable_spec()->set_name(id);
  request.mutable_spec()->set_hold(hold);
  request.mutable_spec()->add_argv("/bin/sh");
  request.mutable_spec()->add_argv("-c");
  request.mutable_spec()->add_argv("echo $GPUSCHED_JOB_ID >> " + runs);
  request.mutable_spec()->mutable_resources()->set_gpus(1);
  return request;
}

// Whether every thread of `pid` has stopped (SIGSTOP reaches each thread
// when it next runs), within a few seconds.
bool AllThreadsStopped(pid_t pid) {
  for (int i = 0; i < 500; ++i) {
    bool all = true;
    std::error_code ec;
    for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
      const std::string stat = ReadFile((task.path() / "stat").string());
      const size_t paren = stat.rfind(')');
      if (paren == std::string::npos || paren + 2 >= stat.size() || stat[paren + 2] != 'T') all = false;
    }
    if (all && !ec) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// "min 0.21 s, median 0.25 s, p90 0.31 s, max 0.40 s"
std::string Distribution(std::vector<double> seconds) {
  std::sort(seconds.begin(), seconds.end());
  auto at = [&](double p) {
    return seconds[std::min(seconds.size() - 1, static_cast<size_t>(p * static_cast<double>(seconds.size())))];
  };
  return absl::StrFormat("min %.2f s, median %.2f s, p90 %.2f s, max %.2f s", seconds.front(), at(0.5), at(0.9),
                         seconds.back());
}

}  // namespace

TEST_CASE("killing the active replica during submit bursts loses no acknowledged job and runs none twice",
          "[integration]") {
  TwoReplicas replicas;
  if (!replicas.pg) GPUSCHED_SKIP(replicas.skipped);
  REQUIRE(replicas.active >= 0);
  ReplicatedCluster& cluster = *replicas.cluster;
  const TempDir& dir = replicas.dir;
  int active = replicas.active;
  cluster.StartAgents(2, 4);
  const std::string runs = dir / "runs";
  int rounds = 20;
  if (const char* env = std::getenv("GPUSCHED_FAILOVER_ROUNDS")) rounds = std::max(1, std::atoi(env));

  std::mutex mu;
  std::map<std::string, uint64_t> acknowledged;  // request id -> job id
  std::vector<double> serving_s;                 // kill -> the next leader answers a fresh client
  std::vector<double> takeover_s;  // kill -> the first submit the next leader acknowledged, to the clients above
  std::atomic<int> next_request{0};
  for (int round = 0; round < rounds; ++round) {
    std::atomic<bool> stop{false};
    std::atomic<int64_t> killed_at_us{0};
    std::atomic<int64_t> first_after_us{0};
    std::vector<std::thread> clients;
    for (int c = 0; c < 8; ++c) {
      clients.emplace_back([&] {
        FollowingClient client(cluster.AllAddresses());
        while (!stop.load()) {
          const int n = next_request.fetch_add(1);
          const std::string id = absl::StrCat("r", n);
          // One in 16 runs (to count its runs); the rest stay held, cheap.
          auto job = client.Submit(Request(id, n % 16 != 0, runs), Clock::now() + std::chrono::seconds(30));
          if (!job) continue;  // never acknowledged: nothing is promised
          const int64_t now_us =
              std::chrono::duration_cast<std::chrono::microseconds>(Clock::now().time_since_epoch()).count();
          int64_t zero = 0;
          if (killed_at_us.load() != 0) first_after_us.compare_exchange_strong(zero, now_us);
          std::lock_guard<std::mutex> lock(mu);
          acknowledged[id] = job->id();
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
      });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    cluster.replica(active).Signal(SIGKILL);
    cluster.replica(active).Wait();  // reaped: any reply from now on is another replica's
    killed_at_us = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now().time_since_epoch()).count();
    const int serving = cluster.WaitForActive(15);
    serving_s.push_back(
        static_cast<double>(
            std::chrono::duration_cast<std::chrono::microseconds>(Clock::now().time_since_epoch()).count() -
            killed_at_us.load()) /
        1e6);
    REQUIRE(serving >= 0);
    const auto until = Clock::now() + std::chrono::seconds(15);
    while (first_after_us.load() == 0 && Clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    stop = true;
    for (auto& t : clients) t.join();
    INFO(cluster.AllLogs());
    REQUIRE(first_after_us.load() != 0);
    takeover_s.push_back(static_cast<double>(first_after_us.load() - killed_at_us.load()) / 1e6);
    cluster.Start(active);  // back, as a standby
    active = cluster.WaitForActive(10);
    REQUIRE(active >= 0);
  }

  // Every acknowledged job is there, with the id it was acknowledged with;
  // every one that was not held ran exactly once.
  FollowingClient client(cluster.AllAddresses());
  std::set<uint64_t> runnable;
  for (const auto& [id, job_id] : acknowledged) {
    auto job = client.Get(job_id);
    INFO("request " << id << ", job " << job_id);
    REQUIRE(job.has_value());
    CHECK(job->client_request_id() == id);
    if (!job->spec().hold()) runnable.insert(job_id);
  }
  const auto until = Clock::now() + std::chrono::seconds(60);
  for (uint64_t id : runnable) {
    std::optional<v1::Job> job = client.Get(id);
    while (job && job->state() != v1::JOB_STATE_COMPLETED && Clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      job = client.Get(id);
    }
    INFO("job " << id << ": " << (job ? job->ShortDebugString() : "gone"));
    REQUIRE(job.has_value());
    CHECK(job->state() == v1::JOB_STATE_COMPLETED);
  }
  std::map<uint64_t, int> times_run;
  for (absl::string_view line : absl::StrSplit(ReadFile(runs), '\n', absl::SkipEmpty())) {
    uint64_t id = 0;
    REQUIRE(absl::SimpleAtoi(line, &id));
    ++times_run[id];
  }
  for (uint64_t id : runnable) {
    INFO("job " << id);
    CHECK(times_run[id] == 1);
  }
  CHECK(times_run.size() == runnable.size());
  WARN("failover: " << rounds << " kills of the active replica during bursts from 8 clients; " << acknowledged.size()
                    << " submits acknowledged (" << runnable.size() << " ran), none lost, none run twice; "
                    << "kill -> the next leader answers: " << Distribution(serving_s)
                    << "; kill -> the first submit it acknowledged to the bursting clients (whose gRPC channels "
                    << "redial after 1 s): " << Distribution(takeover_s));
  // The figures are reported, not held to a bound: these machines are
  // shared (the standards keep timing targets in benchmarks). That a next
  // leader comes at all, within 15 s, is required above.
}

TEST_CASE("a leader paused past its lease commits nothing when it resumes, and steps down", "[integration]") {
  TwoReplicas replicas;
  if (!replicas.pg) GPUSCHED_SKIP(replicas.skipped);
  REQUIRE(replicas.active >= 0);
  ReplicatedCluster& cluster = *replicas.cluster;
  const TempDir& dir = replicas.dir;
  const int paused = replicas.active;
  const int other = 1 - paused;
  FollowingClient client(cluster.AllAddresses());
  auto before = client.Submit(Request("before", true, dir / "runs"), Clock::now() + std::chrono::seconds(10));
  REQUIRE(before.has_value());

  cluster.replica(paused).Signal(SIGSTOP);
  REQUIRE(AllThreadsStopped(cluster.replica(paused).pid()));
  // A submit sent to the paused leader now waits in its socket.
  std::optional<v1::Job> stuck_reply;
  std::jthread stuck([&] {
    auto stub =
        v1::Scheduler::NewStub(grpc::CreateChannel(cluster.Address(paused), grpc::InsecureChannelCredentials()));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    v1::SubmitJobResponse response;
    if (stub->SubmitJob(&context, Request("sent-to-the-paused", true, dir / "runs"), &response).ok()) {
      stuck_reply = response.job();
    }
  });
  REQUIRE(cluster.WaitForActive(10) == other);  // its lease (2 s) ran out
  auto during = client.Submit(Request("during", true, dir / "runs"), Clock::now() + std::chrono::seconds(10));
  REQUIRE(during.has_value());

  cluster.replica(paused).Signal(SIGCONT);
  INFO(cluster.AllLogs());
  CHECK(cluster.replica(paused).Wait() == 75);  // stepped down
  stuck.join();
  CHECK_FALSE(stuck_reply.has_value());  // never acknowledged...
  CHECK(cluster.Log(paused).find("stepping down") != std::string::npos);
  // ... and never written: the active replica's store has no such job.
  v1::ListJobsRequest list;
  auto stub = v1::Scheduler::NewStub(grpc::CreateChannel(cluster.Address(other), grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  v1::ListJobsResponse jobs;
  REQUIRE(stub->ListJobs(&context, list, &jobs).ok());
  std::set<std::string> names;
  for (const v1::Job& job : jobs.jobs()) names.insert(job.spec().name());
  CHECK(names == std::set<std::string>{"before", "during"});
}

TEST_CASE("PostgreSQL restarted under load: the leader waits, recovers, and every acknowledged job is there",
          "[integration]") {
  TwoReplicas replicas;
  if (!replicas.pg) GPUSCHED_SKIP(replicas.skipped);
  REQUIRE(replicas.active >= 0);
  ReplicatedCluster& cluster = *replicas.cluster;
  const TempDir& dir = replicas.dir;
  std::mutex mu;
  std::map<std::string, uint64_t> acknowledged;
  std::atomic<bool> stop{false};
  std::atomic<int> next{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < 4; ++c) {
    clients.emplace_back([&] {
      FollowingClient client(cluster.AllAddresses());
      while (!stop.load()) {
        const std::string id = absl::StrCat("p", next.fetch_add(1));
        auto job = client.Submit(Request(id, true, dir / "runs"), Clock::now() + std::chrono::seconds(30));
        if (!job) continue;
        std::lock_guard<std::mutex> lock(mu);
        acknowledged[id] = job->id();
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  REQUIRE(replicas.pg->Restart().ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  stop = true;
  for (auto& t : clients) t.join();
  INFO(cluster.AllLogs());
  // The leader rides it out when the restart is shorter than its lease;
  // else a standby takes over. Either way one replica is active after it.
  CHECK(cluster.WaitForActive(10) >= 0);
  FollowingClient client(cluster.AllAddresses());
  for (const auto& [id, job_id] : acknowledged) {
    auto job = client.Get(job_id);
    INFO("request " << id << ": " << client.errors());
    REQUIRE(job.has_value());
    CHECK(job->client_request_id() == id);
  }
  CHECK(acknowledged.size() > 10);
}

TEST_CASE(
    "the CLI given every replica reaches the active one; a standby names it, and says NOT_SERVING and 0 in its metrics",
    "[integration]") {
  TwoReplicas replicas(/*metrics=*/true);
  if (!replicas.pg) GPUSCHED_SKIP(replicas.skipped);
  REQUIRE(replicas.active >= 0);
  ReplicatedCluster& cluster = *replicas.cluster;
  const int active = replicas.active;
  const int standby = 1 - active;
  INFO(cluster.AllLogs());

  CommandResult only_standby = RunCommand({GPUSCHED_CLI_BIN, "--addr", cluster.Address(standby), "status"});
  CHECK(only_standby.exit_code != 0);
  CHECK_THAT(only_standby.err, Catch::Contains("standby replica; the active one is at " + cluster.Address(active)));

  // The standby first: the CLI follows its pointer.
  CommandResult both = RunCommand({GPUSCHED_CLI_BIN, "--addr", cluster.Address(standby) + "," + cluster.Address(active),
                                   "submit", "--hold", "--", "/bin/true"});
  INFO(both.out << both.err);
  CHECK(both.exit_code == 0);
  CommandResult from_env = RunCommand({GPUSCHED_CLI_BIN, "status"},
                                      {{"GPUSCHED_ADDR", cluster.Address(standby) + "," + cluster.Address(active)}});
  CHECK(from_env.exit_code == 0);
  CHECK_THAT(from_env.out, Catch::Contains("PENDING"));

  // What a load balancer and Prometheus see.
  CHECK(HealthOf(cluster.Address(active)) == 1);
  CHECK(HealthOf(cluster.Address(standby)) == 2);
  CHECK(Metric(cluster.metrics_port(active), "gpusched_replica_active") == 1);
  CHECK(Metric(cluster.metrics_port(active), "gpusched_replica_takeovers_total") == 1);
  CHECK(Metric(cluster.metrics_port(standby), "gpusched_replica_active") == 0);
  CHECK(Metric(cluster.metrics_port(standby), "gpusched_leader_epoch") ==
        Metric(cluster.metrics_port(active), "gpusched_leader_epoch"));
}
