// Real topologies end to end: agents on a saved `nvidia-smi topo -m` file and
// on NVML (a fake libnvidia-ml loaded by the real dlopen path) register their
// wiring, the daemon keeps it in SQLite across a crash, and the CLI draws it.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "common/topology/nvidia_smi_topo.h"
#include "google/protobuf/util/json_util.h"
#include "gpusched/v1/agent.grpc.pb.h"
#include "grpcpp/create_channel.h"
#include "tests/integration/test_cluster.h"

using gpusched::testing::AgentSpec;
using gpusched::testing::CommandResult;
using gpusched::testing::RunCommand;
using gpusched::testing::TestCluster;
namespace topology = gpusched::topology;
namespace v1 = gpusched::v1;

namespace {

std::string Fixture(const std::string& name) { return std::string(GPUSCHED_FIXTURES_DIR) + "/topo/" + name; }

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<AgentSpec> RealNodes() {
  return {
      {"hgx-01",
       0,
       {"--topology-file", Fixture("hgx-h200-8gpu-12nic.txt"), "--gpu-model", "NVIDIA H200", "--gpu-memory-mb",
        "143771", "--label", "rack=r1", "--label", "leaf=leaf-1"},
       {}},
      {"dgx1-nvml",
       0,
       {"--gpu-source", "nvml", "--nvml-library", GPUSCHED_FAKE_NVML},
       {"GPUSCHED_FAKE_NVML_MACHINE=dgx1-v100"}},
  };
}

// The matrix `nodes show` draws, parsed back.
topology::NodeTopology DrawnMatrix(const std::string& show_output) {
  size_t at = show_output.find("\tGPU0");
  REQUIRE(at != std::string::npos);
  auto drawn = topology::ParseNvidiaSmiTopo(show_output.substr(at));
  INFO(drawn.status().message());
  REQUIRE(drawn.ok());
  return *drawn;
}

v1::Node ShowJson(const TestCluster& cluster, const std::string& node) {
  CommandResult r = cluster.Cli({"nodes", "show", node, "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  v1::Node parsed;
  REQUIRE(google::protobuf::util::JsonStringToMessage(r.out, &parsed).ok());
  return parsed;
}

}  // namespace

TEST_CASE("agents register real topologies; the daemon keeps them across a crash; the CLI draws them",
          "[integration]") {
  TestCluster cluster(RealNodes());

  CommandResult nodes = cluster.Cli({"nodes"});
  INFO(nodes.out << nodes.err);
  REQUIRE(nodes.exit_code == 0);
  CHECK_THAT(nodes.out, Catch::Matches("(.|\n)*hgx-01 +UP +8/8 +H200 +NV18/NVSwitch (.|\n)*"));
  CHECK_THAT(nodes.out, Catch::Contains("leaf=leaf-1,rack=r1"));
  CHECK_THAT(nodes.out, Catch::Matches("(.|\n)*dgx1-nvml +UP +8/8 +Tesla-V100-SXM2-32GB +NV1-NV2 (.|\n)*"));

  // What the agent read from the file is what the daemon serves, pair by pair.
  auto fixture = topology::ParseNvidiaSmiTopo(Read(Fixture("hgx-h200-8gpu-12nic.txt")));
  REQUIRE(fixture.ok());
  CommandResult show = cluster.Cli({"nodes", "show", "hgx-01"});
  REQUIRE(show.exit_code == 0);
  CHECK_THAT(show.out, Catch::Contains("Network:      rack r1, leaf leaf-1"));
  topology::NodeTopology drawn = DrawnMatrix(show.out);
  REQUIRE(drawn.num_gpus() == 8);
  REQUIRE(drawn.num_nics() == 12);
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 8; ++j) CHECK(drawn.GpuLink(i, j) == fixture->GpuLink(i, j));
    for (int k = 0; k < 12; ++k) CHECK(drawn.GpuNicLink(i, k) == fixture->GpuNicLink(i, k));
  }

  // NVML discovery, through the real agent binary and the fake driver: the
  // DGX-1 cube mesh, with details topo -m never shows.
  CommandResult nvml = cluster.Cli({"nodes", "show", "dgx1-nvml"});
  REQUIRE(nvml.exit_code == 0);
  CHECK_THAT(nvml.out, Catch::Contains("(from nvml)"));
  auto dgx1 = topology::ParseNvidiaSmiTopo(Read(Fixture("dgx1-v100.txt")));
  REQUIRE(dgx1.ok());
  topology::NodeTopology nvml_drawn = DrawnMatrix(nvml.out);
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 8; ++j) CHECK(nvml_drawn.GpuLink(i, j) == dgx1->GpuLink(i, j));
  }
  v1::Node dgx1_node = ShowJson(cluster, "dgx1-nvml");
  REQUIRE(dgx1_node.info().gpus_size() == 8);
  CHECK(dgx1_node.info().gpus(0).compute_capability() == 70);
  CHECK_FALSE(dgx1_node.info().gpus(0).pci_bus_id().empty());
  CHECK(dgx1_node.info().topology().gpu_p2p_size() == 64);

  // Crash the daemon and lose both agents: the topology comes back from SQLite.
  cluster.CrashDaemon();
  cluster.KillAgent("hgx-01");
  cluster.KillAgent("dgx1-nvml");
  cluster.StartDaemon();
  v1::Node stored = ShowJson(cluster, "hgx-01");
  CHECK(stored.info().topology().gpu_links_size() == 64);
  CHECK(stored.info().topology().nics_size() == 12);
  CHECK(stored.info().topology().nvswitch());
  CHECK(stored.info().topology().network().leaf() == "leaf-1");
}

TEST_CASE("an agent given a garbage topology file refuses to start, naming the file and line", "[integration]") {
  std::string path = "/tmp/gpusched-it-garbage-topo-" + std::to_string(getpid()) + ".txt";
  std::ofstream(path) << "\tGPU0\tGPU1\nGPU0\t X \tNV4\nGPU1\tNV4\t X \tBOGUS\n";
  const std::string logs = path + ".logs";
  CommandResult r =
      RunCommand({GPUSCHED_AGENT_BIN, "--daemon", "127.0.0.1:1", "--log-dir", logs, "--topology-file", path});
  std::remove(path.c_str());
  std::filesystem::remove_all(logs);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains(path));
  CHECK_THAT(r.err, Catch::Contains("line 3"));
}

TEST_CASE("the daemon refuses a registration with a malformed topology, naming the field, and keeps serving",
          "[integration]") {
  TestCluster cluster(std::vector<AgentSpec>{});
  auto channel = grpc::CreateChannel(cluster.address(), grpc::InsecureChannelCredentials());
  auto gateway = v1::AgentGateway::NewStub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  auto stream = gateway->Connect(&ctx);
  v1::AgentMessage hello;
  v1::NodeInfo* node = hello.mutable_register_()->mutable_node();
  node->set_name("liar-01");
  node->add_gpus()->set_index(0);
  node->add_gpus()->set_index(1);
  node->mutable_topology()->add_gpu_links()->set_kind(v1::LINK_KIND_SELF);  // 1 of 4 entries
  REQUIRE(stream->Write(hello));
  v1::DaemonMessage reply;
  CHECK_FALSE(stream->Read(&reply));
  grpc::Status status = stream->Finish();
  CHECK(status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(status.error_message(), Catch::Contains("register.node.topology.gpu_links has 1 entries, want 2x2"));

  CommandResult nodes = cluster.Cli({"nodes"});
  CHECK(nodes.exit_code == 0);
  CHECK(nodes.out.find("liar-01") == std::string::npos);
}
