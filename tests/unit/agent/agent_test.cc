#include "agent/agent.h"

#include <signal.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <memory>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/io/logging/logging.h"
#include "fake_daemon.h"
#include "spdlog/sinks/ostream_sink.h"
#include "test_util.h"

using namespace gpusched::agent;
using namespace gpusched::agent::testing;
namespace v1 = gpusched::v1;
using Kind = v1::JobUpdate;

namespace {

AgentOptions Options(const FakeDaemon& daemon, const TempDir& dir) {
  AgentOptions o;
  o.daemon_address = daemon.address();
  o.node_name = "n1";
  o.shim_program = GPUSCHED_SHIM_BINARY;
  o.log_dir = dir / "logs";
  o.heartbeat_interval = absl::Milliseconds(50);
  o.max_reconnect_backoff = absl::Milliseconds(200);
  return o;
}

v1::DaemonMessage Launch(const v1::LaunchJob& launch) {
  v1::DaemonMessage m;
  *m.mutable_launch() = launch;
  return m;
}

v1::DaemonMessage Kill(uint64_t job_id, int64_t grace_ms) {
  v1::DaemonMessage m;
  m.mutable_kill()->set_job_id(job_id);
  m.mutable_kill()->set_grace_ms(grace_ms);
  m.mutable_kill()->set_reason("test");
  return m;
}

bool WaitConnected(const Agent& agent, bool want = true, absl::Duration timeout = absl::Seconds(5)) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (agent.connected() == want) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return agent.connected() == want;
}

std::vector<int64_t> HeartbeatSeqs(const std::vector<v1::AgentMessage>& messages) {
  std::vector<int64_t> seqs;
  for (const auto& m : messages) {
    if (m.has_heartbeat()) seqs.push_back(m.heartbeat().seq());
  }
  return seqs;
}

}  // namespace

TEST_CASE("the agent registers its node and heartbeats at the daemon's interval") {
  TempDir dir;
  FakeDaemon daemon;
  v1::RegisterAck ack;
  ack.set_heartbeat_interval_ms(20);
  daemon.SetAck(ack);
  AgentOptions options = Options(daemon, dir);
  options.fake_gpus = 2;
  options.cpus = 8;
  options.memory_mb = 1024;
  options.advertise_address = "10.1.2.3";
  options.labels = {{"rack", "r1"}};
  options.heartbeat_interval = absl::Seconds(30);  // the ack's 20 ms must win
  Agent agent(options);
  REQUIRE(agent.Start().ok());

  auto registrations = daemon.WaitForRegistrations(1);
  REQUIRE(registrations.size() == 1);
  const v1::NodeInfo& node = registrations[0].node();
  CHECK(node.name() == "n1");
  CHECK(node.address() == "10.1.2.3");
  CHECK(node.cpus() == 8);
  CHECK(node.memory_mb() == 1024);
  CHECK(node.labels().at("rack") == "r1");
  CHECK(node.agent_version() == "0.1.0");
  REQUIRE(node.gpus_size() == 2);
  CHECK(node.gpus(1).index() == 1);
  CHECK(node.gpus(1).uuid() == "GPU-fake-n1-1");
  CHECK(node.gpus(1).model() == "NVIDIA H100 80GB HBM3");
  CHECK(node.gpus(1).memory_mb() == 81559);
  CHECK(registrations[0].running_job_ids().empty());
  CHECK(WaitConnected(agent));

  REQUIRE(daemon.WaitUntil([](const auto& m) { return HeartbeatSeqs(m).size() >= 3; }, absl::Seconds(2)));
  auto seqs = HeartbeatSeqs(daemon.Messages());
  CHECK(seqs[0] == 1);
  CHECK(seqs[1] == 2);
  CHECK(seqs[2] == 3);
  agent.Stop();
  CHECK_FALSE(agent.connected());
}

TEST_CASE("jobs launched over the stream report STARTED and EXITED; unknown kills are answered") {
  TempDir dir;
  FakeDaemon daemon;
  Agent agent(Options(daemon, dir));
  REQUIRE(agent.Start().ok());
  REQUIRE(WaitConnected(agent));

  REQUIRE(daemon.Send(Launch(MakeShellLaunch(1, "echo hello; exit 5", {0}))));
  auto started = daemon.WaitForUpdate(1, Kind::KIND_STARTED);
  REQUIRE(started);
  CHECK(started->log_dir() == dir / "logs/job-1");
  auto exited = daemon.WaitForUpdate(1, Kind::KIND_EXITED);
  REQUIRE(exited);
  CHECK(exited->exit_code() == 5);
  CHECK_THAT(ReadFile(dir / "logs/job-1/rank-0.log"), Catch::Contains("hello"));

  REQUIRE(daemon.Send(Launch(MakeLaunch(2, {"gpusched-no-such-command"}))));
  auto failed = daemon.WaitForUpdate(2, Kind::KIND_LAUNCH_FAILED);
  REQUIRE(failed);
  CHECK(failed->message() == "exec \"gpusched-no-such-command\": No such file or directory");

  REQUIRE(daemon.Send(Kill(77, 1000)));
  auto answer = daemon.WaitForUpdate(77, Kind::KIND_EXITED);
  REQUIRE(answer);
  CHECK(answer->exit_code() == 0);
  CHECK(answer->message() == "not running on n1");
}

TEST_CASE("after a broken stream the agent re-registers with its running jobs and re-sends missed exits") {
  TempDir dir;
  auto daemon = std::make_unique<FakeDaemon>();
  const int port = daemon->port();
  Agent agent(Options(*daemon, dir));
  REQUIRE(agent.Start().ok());
  REQUIRE(WaitConnected(agent));

  // The job runs until the test creates the file "go".
  const std::string go = dir / "go";
  REQUIRE(
      daemon->Send(Launch(MakeShellLaunch(5, "while [ ! -e " + go + " ]; do sleep 0.02; done; echo done; exit 3"))));
  REQUIRE(daemon->WaitForUpdate(5, Kind::KIND_STARTED));

  // The stream breaks; the job keeps running and is listed on the new registration.
  daemon->DropConnection();
  auto registrations = daemon->WaitForRegistrations(2);
  REQUIRE(registrations.size() == 2);
  REQUIRE(registrations[1].running_job_ids_size() == 1);
  CHECK(registrations[1].running_job_ids(0) == 5);
  REQUIRE(WaitConnected(agent));

  // The daemon goes away; the job ends while nobody listens.
  daemon.reset();
  REQUIRE(WaitConnected(agent, false));
  WriteFile(go, "");
  REQUIRE(WaitForFileContaining(dir / "logs/job-5/rank-0.log", "done"));
  // The runner has the end once its ledger entry holds the final report.
  REQUIRE(WaitForFileContaining(dir / "logs/running/n1/journal", "report 5 "));

  // A daemon on the same address gets the exit right after the registration.
  daemon = std::make_unique<FakeDaemon>(port);
  registrations = daemon->WaitForRegistrations(1);
  REQUIRE(registrations.size() == 1);
  // Listed as still this node's: its end is reported right after, and a
  // daemon that took it for lost would run it again.
  REQUIRE(registrations[0].running_job_ids_size() == 1);
  CHECK(registrations[0].running_job_ids(0) == 5);
  auto exited = daemon->WaitForUpdate(5, Kind::KIND_EXITED);
  REQUIRE(exited);
  CHECK(exited->exit_code() == 3);
  auto messages = daemon->Messages();
  REQUIRE(messages.size() >= 2);
  CHECK(messages[0].has_register_());
  CHECK(messages[1].job_update().job_id() == 5);  // before any heartbeat

  // A repeated launch of the finished job is answered with the stored report.
  REQUIRE(daemon->Send(Launch(MakeLaunch(5, {"true"}))));
  REQUIRE(daemon->WaitUntil([](const auto& m) {
    int n = 0;
    for (const auto& x : m) n += x.has_job_update() && x.job_update().job_id() == 5 ? 1 : 0;
    return n >= 2;
  }));
  for (const auto& m : daemon->Messages()) {
    if (m.has_job_update()) CHECK(m.job_update().kind() == Kind::KIND_EXITED);
  }
}

TEST_CASE("jobs named in the registration ack's kill list are killed") {
  TempDir dir;
  FakeDaemon daemon;
  Agent agent(Options(daemon, dir));
  REQUIRE(agent.Start().ok());
  REQUIRE(WaitConnected(agent));
  REQUIRE(daemon.Send(Launch(MakeShellLaunch(8, "echo $$ > " + (dir / "pid") + "; exec sleep 300"))));
  REQUIRE(daemon.WaitForUpdate(8, Kind::KIND_STARTED));
  const pid_t pid = ReadPid(dir / "pid");

  v1::RegisterAck ack;
  ack.add_kill_job_ids(8);
  ack.add_kill_job_ids(1234);  // unknown here: answered all the same
  daemon.SetAck(ack);
  daemon.DropConnection();
  auto exited = daemon.WaitForUpdate(8, Kind::KIND_EXITED);
  REQUIRE(exited);
  CHECK(exited->exit_code() == 128 + SIGTERM);
  CHECK(WaitForProcessGone(pid));
  // The daemon waits for every job it named before it gives the node work.
  auto unknown = daemon.WaitForUpdate(1234, Kind::KIND_EXITED);
  REQUIRE(unknown);
  CHECK(unknown->message() == "not running on n1");
}

TEST_CASE("a KillJob from the daemon ends the job with SIGTERM") {
  TempDir dir;
  FakeDaemon daemon;
  Agent agent(Options(daemon, dir));
  REQUIRE(agent.Start().ok());
  REQUIRE(WaitConnected(agent));
  REQUIRE(daemon.Send(Launch(MakeLaunch(9, {"sleep", "300"}, {0, 1}))));
  REQUIRE(daemon.WaitForUpdate(9, Kind::KIND_STARTED));
  REQUIRE(daemon.Send(Kill(9, 5000)));
  auto exited = daemon.WaitForUpdate(9, Kind::KIND_EXITED);
  REQUIRE(exited);
  CHECK(exited->exit_code() == 128 + SIGTERM);
  CHECK_THAT(exited->message(), Catch::Contains("killed (test)"));
}

TEST_CASE("Stop kills the jobs and reports their exit before it disconnects") {
  TempDir dir;
  FakeDaemon daemon;
  Agent agent(Options(daemon, dir));
  REQUIRE(agent.Start().ok());
  REQUIRE(WaitConnected(agent));
  REQUIRE(daemon.Send(Launch(MakeShellLaunch(10, "echo $$ > " + (dir / "pid") + "; exec sleep 300"))));
  REQUIRE(daemon.WaitForUpdate(10, Kind::KIND_STARTED));
  const pid_t pid = ReadPid(dir / "pid");

  const auto t0 = std::chrono::steady_clock::now();
  agent.Stop();
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2));
  CHECK(ProcessGone(pid));
  auto exited = daemon.WaitForUpdate(10, Kind::KIND_EXITED, absl::Seconds(1));
  REQUIRE(exited);
  CHECK(exited->exit_code() == 128 + SIGTERM);
  CHECK_FALSE(agent.connected());
  agent.Stop();  // twice is fine
}

TEST_CASE("without a daemon the agent keeps trying, and still stops at once") {
  TempDir dir;
  AgentOptions options;
  options.daemon_address = "127.0.0.1:1";  // nothing listens there
  options.node_name = "lonely";
  options.shim_program = GPUSCHED_SHIM_BINARY;
  options.log_dir = dir / "logs";
  options.max_reconnect_backoff = absl::Milliseconds(100);
  Agent agent(options);
  REQUIRE(agent.Start().ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CHECK_FALSE(agent.connected());
  const auto t0 = std::chrono::steady_clock::now();
  agent.Stop();
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(1500));
}

TEST_CASE("a registration refused for a new reason is logged at once, not only every 20th attempt") {
  TempDir dir;
  FakeDaemon daemon;
  daemon.RefuseRegistrations(grpc::Status(grpc::StatusCode::UNAVAILABLE, "warming up"));
  AgentOptions options = Options(daemon, dir);
  options.node_name = "refused";
  // What an operator reads: the agent's warnings (debug lines are off).
  std::ostringstream log;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(log);
  auto logger = gpusched::GetLogger("agent/refused");
  logger->sinks().push_back(sink);
  Agent agent(options);
  REQUIRE(agent.Start().ok());
  REQUIRE(daemon.WaitForRegistrations(3).size() >= 3);
  // The same code as before, another reason: a standby's answer.
  daemon.RefuseRegistrations(grpc::Status(grpc::StatusCode::UNAVAILABLE, "this replica is a standby"));
  size_t seen = daemon.WaitForRegistrations(1).size();
  REQUIRE(daemon.WaitForRegistrations(seen + 2).size() >= seen + 2);
  daemon.RefuseRegistrations(
      grpc::Status(grpc::StatusCode::ALREADY_EXISTS, "node refused is already connected from elsewhere"));
  seen = daemon.WaitForRegistrations(1).size();
  REQUIRE(daemon.WaitForRegistrations(seen + 2).size() >= seen + 2);
  agent.Stop();
  logger->flush();
  logger->sinks().pop_back();
  const std::string text = log.str();
  CHECK(absl::StrContains(text, "warming up"));
  CHECK(absl::StrContains(text, "this replica is a standby"));
  CHECK(absl::StrContains(text, "is already connected from elsewhere"));
  // The same reason again is not repeated: between two warnings of one
  // reason there is another (a connection that timed out on a slow machine).
  std::vector<std::string> reasons;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::StrContains(line, "cannot register")) continue;
    const size_t from = line.find('(');
    reasons.emplace_back(line.substr(from, line.find("); retrying") - from));
  }
  CHECK(reasons.size() >= 3);
  for (size_t i = 1; i < reasons.size(); ++i) CHECK(reasons[i] != reasons[i - 1]);
}

TEST_CASE("Start rejects options it cannot work with, saying which") {
  TempDir dir;
  AgentOptions options;
  options.daemon_address = "127.0.0.1:1";
  options.log_dir = "/proc/gpusched-test/logs";
  auto status = Agent(options).Start();
  CHECK(status.code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(std::string(status.message()), Catch::Contains("/proc/gpusched-test/logs"));

  WriteFile(dir / "file", "");
  options.log_dir = dir / "file";
  status = Agent(options).Start();
  CHECK_THAT(std::string(status.message()), Catch::Contains(dir / "file"));

  options.log_dir = dir / "logs";
  options.daemon_address = "";
  CHECK(Agent(options).Start().code() == absl::StatusCode::kInvalidArgument);
  options.daemon_address = "127.0.0.1:1";
  options.fake_gpus = -2;
  CHECK(Agent(options).Start().code() == absl::StatusCode::kInvalidArgument);

  options.fake_gpus = 0;
  // Without its shim an agent could run no job.
  options.shim_program = dir / "no-such-shim";
  status = Agent(options).Start();
  CHECK(status.code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(std::string(status.message()), Catch::Contains("no job shim") && Catch::Contains(dir / "no-such-shim"));

  options.shim_program = GPUSCHED_SHIM_BINARY;
  Agent agent(options);
  REQUIRE(agent.Start().ok());
  CHECK(agent.Start().code() == absl::StatusCode::kFailedPrecondition);
}

TEST_CASE("the agent hands its node's NIC hints and, when asked, its NCCL topology file to jobs") {
  TempDir dir;
  FakeDaemon daemon;
  AgentOptions options = Options(daemon, dir);
  options.gpu_source = GpuSource::kFile;
  options.topology_file = FixturePath("dgx-a100.txt");
  options.nccl_topo_file = true;
  Agent agent(options);
  REQUIRE(agent.Start().ok());
  REQUIRE(WaitConnected(agent));
  const std::string topo_file = dir / "logs/nccl-topo.xml";
  CHECK_THAT(ReadFile(topo_file), Catch::StartsWith("<system"));

  const std::string report = "echo \"topo=$NCCL_TOPO_FILE hca=$NCCL_IB_HCA gpus=$CUDA_VISIBLE_DEVICES\"";
  REQUIRE(daemon.Send(Launch(MakeShellLaunch(1, report, {3, 2}))));
  auto exited = daemon.WaitForUpdate(1, Kind::KIND_EXITED);
  REQUIRE(exited);
  CHECK(ReadFile(dir / "logs/job-1/rank-0.log") == "topo=" + topo_file + " hca==mlx5_2,mlx5_3 gpus=3,2\n");

  // The job's own settings stay.
  v1::LaunchJob own = MakeShellLaunch(2, report, {0});
  (*own.mutable_spec()->mutable_env())["NCCL_TOPO_FILE"] = "/home/alice/topo.xml";
  (*own.mutable_spec()->mutable_env())["NCCL_IB_HCA"] = "mlx5_4";
  REQUIRE(daemon.Send(Launch(own)));
  REQUIRE(daemon.WaitForUpdate(2, Kind::KIND_EXITED));
  CHECK(ReadFile(dir / "logs/job-2/rank-0.log") == "topo=/home/alice/topo.xml hca=mlx5_4 gpus=0\n");
}

TEST_CASE("without --nccl-topo-file there is no topology file and no NCCL_TOPO_FILE") {
  TempDir dir;
  FakeDaemon daemon;
  AgentOptions options = Options(daemon, dir);
  options.fake_gpus = 2;
  Agent agent(options);
  REQUIRE(agent.Start().ok());
  REQUIRE(WaitConnected(agent));
  REQUIRE(daemon.Send(Launch(MakeShellLaunch(1, "echo \"topo=${NCCL_TOPO_FILE-unset}\"", {0}))));
  REQUIRE(daemon.WaitForUpdate(1, Kind::KIND_EXITED));
  CHECK(ReadFile(dir / "logs/job-1/rank-0.log") == "topo=unset\n");
  CHECK_FALSE(std::filesystem::exists(dir / "logs/nccl-topo.xml"));
}

TEST_CASE("an agent whose lease runs out kills its jobs at once and reports them fenced; acknowledged beats renew it") {
  TempDir dir;
  FakeDaemon daemon;
  v1::RegisterAck ack;
  ack.set_fence_after_ms(800);
  daemon.SetAck(ack);
  daemon.AckHeartbeats(true);
  Agent agent(Options(daemon, dir));
  REQUIRE(agent.Start().ok());
  REQUIRE(WaitConnected(agent));
  // A job that ignores SIGTERM: only a SIGKILL ends it.
  REQUIRE(daemon.Send(
      Launch(MakeShellLaunch(30, "trap '' TERM; echo $$ > " + (dir / "pid") + "; while :; do sleep 0.05; done"))));
  REQUIRE(daemon.WaitForUpdate(30, Kind::KIND_STARTED));
  const pid_t pid = ReadPid(dir / "pid");
  // Heartbeats at least 50 ms apart, each acknowledged: 64 of them span four
  // leases, which go by untouched (a slow machine only makes the wait longer).
  REQUIRE(daemon.WaitUntil(
      [](const auto& messages) {
        int beats = 0;
        for (const auto& m : messages) beats += m.has_heartbeat() ? 1 : 0;
        return beats >= 64;
      },
      absl::Seconds(30)));
  CHECK_FALSE(daemon.WaitForUpdate(30, Kind::KIND_EXITED, absl::Milliseconds(1)));
  CHECK(kill(pid, 0) == 0);

  // The daemon stops answering (a partition the stream has not noticed).
  daemon.AckHeartbeats(false);
  const auto silent_from = std::chrono::steady_clock::now();
  auto exited = daemon.WaitForUpdate(30, Kind::KIND_EXITED, absl::Seconds(5));
  const auto took = std::chrono::steady_clock::now() - silent_from;
  REQUIRE(exited);
  CHECK(exited->fenced());
  CHECK(exited->exit_code() == 128 + SIGKILL);
  CHECK_THAT(exited->message(), Catch::Contains("fenced: no word from the daemon for"));
  CHECK(WaitForProcessGone(pid));
  // Not before the lease, counted from the last acknowledged beat's sending.
  CHECK(took >= std::chrono::milliseconds(700));
}

TEST_CASE("without a lease from the daemon, unacknowledged heartbeats kill nothing") {
  TempDir dir;
  FakeDaemon daemon;  // fence_after_ms 0, as an older daemon sends
  Agent agent(Options(daemon, dir));
  REQUIRE(agent.Start().ok());
  REQUIRE(WaitConnected(agent));
  REQUIRE(daemon.Send(Launch(MakeLaunch(31, {"sleep", "300"}))));
  REQUIRE(daemon.WaitForUpdate(31, Kind::KIND_STARTED));
  CHECK_FALSE(daemon.WaitForUpdate(31, Kind::KIND_EXITED, absl::Milliseconds(1500)));
}
