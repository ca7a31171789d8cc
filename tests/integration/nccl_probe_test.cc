// The NCCL probe end to end: real daemon, agents and CLI, with a stand-in for
// gpusched-nccl-probe (a script that answers like it, from a file per node)
// since this machine has no GPU. The agents run it through the same code as
// the real program.
#include <grpcpp/grpcpp.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <string>
#include <thread>

#include "gpusched/v1/agent.grpc.pb.h"
#include "tests/integration/test_cluster.h"
#include "tests/support/temp_dir.h"

using gpusched::testing::AgentSpec;
using gpusched::testing::TempDir;
using gpusched::testing::TestCluster;
namespace v1 = gpusched::v1;

namespace {

// Prints gpusched-nccl-probe's --json report for --gpus G: the bus bandwidth
// is the line "G BW" of $GPUSCHED_FAKE_PROBE_FILE, else its "* BW" line;
// "fail" fails as NCCL would.
constexpr char kFakeProbe[] = R"(#!/bin/sh
gpus=""
while [ $# -gt 0 ]; do
  if [ "$1" = "--gpus" ]; then gpus="$2"; shift; fi
  shift
done
bw=$(awk -v g="$gpus" '$1 == g { print $2; exit }' "$GPUSCHED_FAKE_PROBE_FILE")
[ -n "$bw" ] || bw=$(awk '$1 == "*" { print $2; exit }' "$GPUSCHED_FAKE_PROBE_FILE")
if [ "$bw" = "fail" ]; then
  echo "gpusched-nccl-probe: ncclCommInitAll: unhandled system error" >&2
  exit 1
fi
n=$(echo "$gpus" | tr ',' '\n' | wc -l)
echo "{\"nccl_version\": \"2.21.5\", \"gpus\": [$gpus], \"nranks\": $n, \"rows\": [{\"bytes\": 134217728,
 \"count\": 33554432, \"time_us\": 1000, \"algbw_gbps\": $bw, \"busbw_gbps\": $bw}], \"peak_busbw_gbps\": $bw}"
)";

struct FakeProbes {
  TempDir dir;
  std::string program;
  FakeProbes() {
    program = dir.Write("gpusched-nccl-probe", kFakeProbe);
    std::filesystem::permissions(program, std::filesystem::perms::owner_all);
  }
  std::string File(const std::string& node) const { return dir / (node + ".bw"); }
  void Set(const std::string& node, const std::string& table) { dir.Write(node + ".bw", table); }
  // 4 fake H100s, every pair SYS: the estimate is 32.5 GB/s.
  AgentSpec Agent(const std::string& node) const {
    return {node, 4, {"--nccl-probe", program}, {"GPUSCHED_FAKE_PROBE_FILE=" + File(node)}};
  }
};

// Polls `nodes show NODE` until its output contains `text`; the last output.
std::string WaitForNodeShowing(const TestCluster& cluster, const std::string& node, const std::string& text,
                               double seconds = 20) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  std::string out;
  while (std::chrono::steady_clock::now() < deadline) {
    out = cluster.Cli({"nodes", "show", node}).out;
    if (out.find(text) != std::string::npos) return out;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  FAIL("node " << node << " never showed \"" << text << "\"; last:\n" << out);
  return out;
}

}  // namespace

TEST_CASE("link calibration: agents measure on start, a slow GPU pair drains its node, nodes probe re-checks",
          "[integration]") {
  FakeProbes probes;
  probes.Set("node-a", "* 28\n");
  probes.Set("node-b", "* 28\n1,2 5\n");
  TestCluster cluster({probes.Agent("node-a"), probes.Agent("node-b")});

  const std::string slow = WaitForNodeShowing(
      cluster, "node-b", "drained: NCCL probe: GPUs 1-2 (SYS) measured 5.0 GB/s, below 50% of the 32.5 GB/s estimate");
  CHECK_THAT(slow, Catch::Contains("1-2   SYS   5.0 GB/s"));
  CHECK_THAT(slow, Catch::Contains("Calibration:"));
  const std::string healthy = WaitForNodeShowing(cluster, "node-a", "0-3   SYS   28.0 GB/s");
  CHECK_THAT(healthy, !Catch::Contains("DRAINED"));

  // Work goes around the slow node.
  uint64_t job = cluster.Submit({"--gpus", "4", "--", "/bin/sleep", "60"});
  CHECK(cluster.WaitForState(job, v1::JOB_STATE_RUNNING).allocation().nodes(0).node() == "node-a");
  auto busy = cluster.Cli({"nodes", "probe", "node-a"});
  CHECK(busy.exit_code == 1);
  CHECK_THAT(busy.err, Catch::Contains("node node-a runs job(s) " + std::to_string(job)));

  // Repaired, measured again on demand: the probe's own drain lifts.
  probes.Set("node-b", "* 27\n");
  auto probe = cluster.Cli({"nodes", "probe", "node-b", "--wait"});
  INFO(probe.out << probe.err);
  CHECK(probe.exit_code == 0);
  CHECK_THAT(probe.out, Catch::Contains("1-2   SYS   27.0 GB/s"));
  CHECK_THAT(probe.out, Catch::Contains("node node-b: takes jobs"));

  // A probe that cannot run at all is a verdict too.
  probes.Set("node-b", "* fail\n");
  auto broken = cluster.Cli({"nodes", "probe", "node-b", "--wait"});
  CHECK(broken.exit_code == 1);
  CHECK_THAT(broken.out, Catch::Contains("drained: NCCL probe: the link calibration failed: GPUs 0-1:"));
  CHECK_THAT(broken.out, Catch::Contains("ncclCommInitAll: unhandled system error"));
  cluster.Cli({"cancel", std::to_string(job)});
}

TEST_CASE("preflight: a node below the threshold is drained and the job runs elsewhere", "[integration]") {
  FakeProbes probes;
  probes.Set("node-a", "* 28\n");
  probes.Set("node-b", "* 28\n");
  TestCluster cluster({probes.Agent("node-a"), probes.Agent("node-b")});
  WaitForNodeShowing(cluster, "node-a", "0-1   SYS   28.0 GB/s");
  WaitForNodeShowing(cluster, "node-b", "0-1   SYS   28.0 GB/s");

  // node-a's links degrade after its calibration; node-b is kept out of the
  // way so that the job goes to node-a first.
  probes.Set("node-a", "* 3\n");
  REQUIRE(cluster.Cli({"nodes", "drain", "node-b", "--reason", "hold"}).exit_code == 0);
  uint64_t job = cluster.Submit({"--preflight", "--requeue", "no", "--gpus", "2", "--", "/bin/true"});

  const std::string drained =
      WaitForNodeShowing(cluster, "node-a", "drained: NCCL preflight: job " + std::to_string(job) + ": ");
  CHECK_THAT(drained, Catch::Contains("NCCL all-reduce over GPUs 0,1: 3.0 GB/s bus bandwidth, below the 16.2 GB/s"));
  v1::Job waiting = cluster.WaitForState(job, v1::JOB_STATE_PENDING);
  CHECK(waiting.attempt() == 1);
  auto status = cluster.Cli({"status", std::to_string(job)});
  CHECK_THAT(status.out, Catch::Contains("preflight failed on node-a: NCCL all-reduce over GPUs 0,1: 3.0 GB/s"));

  REQUIRE(cluster.Cli({"nodes", "resume", "node-b"}).exit_code == 0);
  v1::Job done = cluster.WaitForEnd(job);
  CHECK(done.state() == v1::JOB_STATE_COMPLETED);
  REQUIRE(done.allocation().nodes_size() == 1);
  CHECK(done.allocation().nodes(0).node() == "node-b");
  CHECK(done.allocation().nodes(0).preflight_busbw_gbps() == Approx(28));
  CHECK_THAT(cluster.Cli({"status", std::to_string(job)}).out,
             Catch::Contains("Preflight:   NCCL all-reduce bus bandwidth node-b 28 GB/s"));
}

TEST_CASE("garbage link figures from an agent are refused or ignored, and the daemon keeps serving", "[integration]") {
  TestCluster cluster(std::vector<AgentSpec>{});
  auto channel = grpc::CreateChannel(cluster.address(), grpc::InsecureChannelCredentials());
  auto gateway = v1::AgentGateway::NewStub(channel);
  auto hello = [](double busbw) {
    v1::AgentMessage message;
    v1::NodeInfo* node = message.mutable_register_()->mutable_node();
    node->set_name("liar-01");
    node->add_gpus()->set_index(0);
    node->add_gpus()->set_index(1);
    v1::GpuPairBandwidth* pair = node->mutable_probe()->add_pairs();
    pair->set_gpu_a(0);
    pair->set_gpu_b(1);
    pair->set_busbw_gbps(busbw);
    return message;
  };
  {
    // Registered with a NaN: the node is taken, its calibration dropped.
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    auto stream = gateway->Connect(&ctx);
    REQUIRE(stream->Write(hello(std::nan(""))));
    v1::DaemonMessage ack;
    REQUIRE(stream->Read(&ack));
    CHECK(ack.has_register_ack());
    CHECK_THAT(cluster.DaemonLog(), Catch::Contains("ignoring the link calibration it registered with: "
                                                    "register.node.probe.pairs[0]: a bandwidth is not a number"));
    CHECK_THAT(cluster.Cli({"nodes", "show", "liar-01"}).out, !Catch::Contains("Calibration:"));
    stream->WritesDone();
    stream->Finish();
  }
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  auto stream = gateway->Connect(&ctx);
  REQUIRE(stream->Write(hello(20)));
  v1::DaemonMessage ack;
  REQUIRE(stream->Read(&ack));
  REQUIRE(ack.has_register_ack());
  // Three pairs for two GPUs: ignored, the node keeps its figures.
  v1::AgentMessage result;
  for (int i = 0; i < 3; ++i) result.mutable_probe_result()->add_pairs()->set_busbw_gbps(1);
  REQUIRE(stream->Write(result));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const std::string shown = cluster.Cli({"nodes", "show", "liar-01"}).out;
  CHECK_THAT(shown, Catch::Contains("0-1"));
  CHECK_THAT(shown, Catch::Contains("20.0 GB/s"));
  CHECK_THAT(cluster.DaemonLog(), Catch::Contains("ignoring a link calibration: probe_result.pairs has 3 entries"));
  stream->WritesDone();
}
