// `gpusched nodes` and `gpusched nodes show` against a fake daemon whose nodes
// carry real machines' topologies.
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "tests/unit/topology/fixture_util.h"

#include "common/convert/topology_proto.h"
#include "common/topology/nvidia_smi_topo.h"
#include "google/protobuf/util/json_util.h"
#include "jobs_fixture.h"

using namespace gpusched;
using namespace gpusched::cli::testing;

namespace {

v1::Node FixtureNode(const std::string& name, const std::string& fixture, const std::string& model) {
  auto topo = topology::ParseNvidiaSmiTopo(gpusched::testing::ReadTopoFixture(fixture));
  REQUIRE(topo.ok());
  topo->set_nvswitch(topo->LooksLikeNvSwitch());
  for (auto& gpu : topo->gpus()) {
    gpu.model = model;
    gpu.memory_mb = 81920;
  }
  v1::Node node;
  convert::TopologyToProto(*topo, node.mutable_info());
  node.mutable_info()->set_name(name);
  node.mutable_info()->set_cpus(96);
  node.mutable_info()->set_memory_mb(1 << 20);
  node.mutable_info()->mutable_topology()->set_source("file:" + fixture);
  node.set_state(v1::NODE_STATE_UP);
  node.set_gpus_free(topo->num_gpus() - 2);
  node.set_cpus_free(90);
  node.set_mem_free_mb(1 << 19);
  return node;
}

}  // namespace

TEST_CASE("nodes lists GPU links, NVLink domain and labels, one word per cell") {
  FakeHost host;
  FakeSchedulerClient client;
  v1::Node dgx = FixtureNode("dgx-a100-01", "dgx-a100.txt", "NVIDIA A100-SXM4-80GB");
  dgx.mutable_info()->mutable_topology()->mutable_network()->set_nvlink_domain("nvl-7");
  (*dgx.mutable_info()->mutable_labels())["rack"] = "r1";
  (*dgx.mutable_info()->mutable_labels())["leaf"] = "l3";
  *client.nodes.add_nodes() = dgx;
  *client.nodes.add_nodes() = FixtureNode("dgx1-01", "dgx1-v100.txt", "Tesla V100-SXM2-32GB");
  *client.nodes.add_nodes() = FixtureNode("g6e-01", "aws-g6e.12xlarge-4xL40S.txt", "NVIDIA L40S");

  Invocation run = RunGpusched({"nodes"}, client, host);
  REQUIRE(run.exit_code == 0);
  std::istringstream lines(run.out);
  std::string header, a100, v100, l40s;
  std::getline(lines, header);
  std::getline(lines, a100);
  std::getline(lines, v100);
  std::getline(lines, l40s);
  CHECK_THAT(header, Catch::StartsWith("NAME         STATE  GPUS  MODEL"));
  CHECK_THAT(header, Catch::Matches(".* GPU-LINKS +NVL-DOMAIN +CPUS +MEMORY +JOBS +LABELS +REASON"));
  CHECK_THAT(a100, Catch::Contains("6/8   A100-SXM4-80GB"));
  CHECK_THAT(a100, Catch::Contains("NV12/NVSwitch  nvl-7"));
  CHECK_THAT(a100, Catch::Contains("leaf=l3,rack=r1"));
  CHECK_THAT(v100, Catch::Contains("NV1-NV2"));       // DGX-1's hybrid cube mesh
  CHECK_THAT(l40s, Catch::Matches("g6e-01 +UP +2/4 +L40S +PCIe .*"));
  for (const std::string& row : {a100, v100, l40s}) {
    std::istringstream words(row);
    int count = 0;
    for (std::string w; words >> w;) ++count;
    CHECK(count == 11);  // every column one word, "-" when empty
  }
}

TEST_CASE("nodes show draws the node's GPUs, NICs and its topo -m matrix") {
  FakeHost host;
  FakeSchedulerClient client;
  *client.nodes.add_nodes() = FixtureNode("dgx-a100-01", "dgx-a100.txt", "NVIDIA A100-SXM4-80GB");

  Invocation run = RunGpusched({"nodes", "show", "dgx-a100-01"}, client, host);
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.out, Catch::StartsWith("Node:         dgx-a100-01\nState:        UP\n"));
  CHECK_THAT(run.out, Catch::Contains("GPUs:         6 free of 8 (from file:dgx-a100.txt)"));
  CHECK_THAT(run.out, Catch::Contains("NVSwitch:     yes"));
  CHECK_THAT(run.out, Catch::Contains("\nGPU  MODEL"));
  CHECK_THAT(run.out, Catch::Contains("\nNIC    DEVICE"));
  CHECK_THAT(run.out, Catch::Contains("mlx5_11"));
  // The matrix parses back into the same wiring it was drawn from.
  size_t matrix = run.out.find("\tGPU0");
  REQUIRE(matrix != std::string::npos);
  auto drawn = topology::ParseNvidiaSmiTopo(run.out.substr(matrix));
  REQUIRE(drawn.ok());
  auto original = convert::TopologyFromProto(client.nodes.nodes(0).info());
  REQUIRE(original.ok());
  REQUIRE(drawn->num_gpus() == 8);
  REQUIRE(drawn->num_nics() == original->num_nics());
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 8; ++j) CHECK(drawn->GpuLink(i, j) == original->GpuLink(i, j));
    for (int k = 0; k < drawn->num_nics(); ++k) CHECK(drawn->GpuNicLink(i, k) == original->GpuNicLink(i, k));
  }

  run = RunGpusched({"nodes", "show", "dgx-a100-01", "--json"}, client, host);
  REQUIRE(run.exit_code == 0);
  v1::Node parsed;
  REQUIRE(google::protobuf::util::JsonStringToMessage(run.out, &parsed).ok());
  CHECK(parsed.info().topology().gpu_links_size() == 64);
}

TEST_CASE("nodes show of an unknown node fails naming it; without a name it is a usage error") {
  FakeHost host;
  FakeSchedulerClient client;
  Invocation run = RunGpusched({"nodes", "show", "nope"}, client, host);
  CHECK(run.exit_code == 1);
  CHECK_THAT(run.err, Catch::Contains("no node named \"nope\""));
  run = RunGpusched({"nodes", "show"}, client, host);
  CHECK(run.exit_code == 2);
}

TEST_CASE("nodes show says how each GPU is shared and who holds it") {
  FakeHost host;
  FakeSchedulerClient client;
  v1::Node node = FixtureNode("pcie-01", "dgx-a100.txt", "NVIDIA A100-SXM4-80GB");
  for (auto& gpu : *node.mutable_info()->mutable_gpus()) gpu.set_share_mode(v1::GPU_SHARE_MODE_TIMESLICE);
  for (const auto& gpu : node.info().gpus()) node.add_gpu_holders()->set_index(gpu.index());
  node.mutable_gpu_holders(0)->set_job_id(12);
  v1::GpuHolders& shared = *node.mutable_gpu_holders(1);
  shared.set_shared_mem_mb(49152);
  for (auto [job, milli] : {std::pair{3, 300}, std::pair{4, 300}}) {
    v1::GpuShareHolder& holder = *shared.add_shares();
    holder.set_job_id(job);
    holder.set_milli(milli);
  }
  *client.nodes.add_nodes() = node;
  Invocation run = RunGpusched({"nodes", "show", "pcie-01"}, client, host);
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.out, Catch::Contains("SHARING    HELD BY"));
  CHECK_THAT(run.out, Catch::Contains("timeslice  job 12 "));
  CHECK_THAT(run.out, Catch::Contains("timeslice  jobs 3 (30%), 4 (30%); 40% and 32G free "));
  CHECK_THAT(run.out, Catch::Contains("timeslice  -  "));
}

TEST_CASE("nodes show lists a MIG GPU's instances and who holds each") {
  FakeHost host;
  FakeSchedulerClient client;
  v1::Node node = FixtureNode("pcie-01", "dgx-a100.txt", "NVIDIA A100-SXM4-80GB");
  v1::GpuInfo& gpu = *node.mutable_info()->mutable_gpus(0);
  gpu.set_mig_enabled(true);
  gpu.set_share_mode(v1::GPU_SHARE_MODE_MIG);
  for (int k = 0; k < 2; ++k) {
    v1::MigInstance& mig = *gpu.add_mig_instances();
    mig.set_index(k);
    mig.set_profile("3g.40gb");
  }
  for (const auto& g : node.info().gpus()) node.add_gpu_holders()->set_index(g.index());
  node.mutable_gpu_holders(0)->add_mig_holders(5);
  node.mutable_gpu_holders(0)->add_mig_holders(0);
  *client.nodes.add_nodes() = node;
  Invocation run = RunGpusched({"nodes", "show", "pcie-01"}, client, host);
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.out, Catch::Contains("3g.40gb,3g.40gb  mig        MIG 5,-"));
}

TEST_CASE("nodes show names the one user an MPS GPU serves") {
  FakeHost host;
  FakeSchedulerClient client;
  v1::Node node = FixtureNode("pcie-01", "dgx-a100.txt", "NVIDIA A100-SXM4-80GB");
  node.mutable_info()->mutable_gpus(0)->set_share_mode(v1::GPU_SHARE_MODE_MPS);
  for (const auto& gpu : node.info().gpus()) node.add_gpu_holders()->set_index(gpu.index());
  v1::GpuHolders& shared = *node.mutable_gpu_holders(0);
  shared.set_shared_mem_mb(10240);
  shared.set_mps_user("alice");
  v1::GpuShareHolder& holder = *shared.add_shares();
  holder.set_job_id(7);
  holder.set_milli(250);
  *client.nodes.add_nodes() = node;
  Invocation run = RunGpusched({"nodes", "show", "pcie-01"}, client, host);
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.out, Catch::Contains("mps        job 7 (25%) as alice; 75% and 70G free "));
  CHECK_THAT(run.out, Catch::Contains("exclusive  -  "));
}

TEST_CASE("pools counts each pool's nodes by power state and its GPUs paid and used") {
  FakeHost host;
  FakeSchedulerClient client;
  auto add = [&](const std::string& name, const std::string& pool, v1::NodeState state, int free) {
    v1::Node& node = *client.nodes.add_nodes();
    node.mutable_info()->set_name(name);
    for (int i = 0; i < 8; ++i) node.mutable_info()->add_gpus()->set_index(i);
    node.set_state(state);
    node.set_gpus_free(free);
    node.set_pool(pool);
  };
  add("b1", "burst", v1::NODE_STATE_UP, 2);
  add("b2", "burst", v1::NODE_STATE_POWERING_UP, 8);
  add("b3", "burst", v1::NODE_STATE_POWERED_DOWN, 8);
  add("s1", "spot", v1::NODE_STATE_POWERING_DOWN, 8);
  add("static", "", v1::NODE_STATE_UP, 0);

  Invocation run = RunGpusched({"pools"}, client, host);
  REQUIRE(run.exit_code == 0);
  std::istringstream lines(run.out);
  std::string header, burst, spot, extra;
  std::getline(lines, header);
  std::getline(lines, burst);
  std::getline(lines, spot);
  CHECK_FALSE(std::getline(lines, extra));  // the static node is in no pool
  auto cells = [](const std::string& line) {
    std::istringstream in(line);
    std::vector<std::string> out;
    for (std::string cell; in >> cell;) out.push_back(cell);
    return out;
  };
  CHECK(cells(header) == std::vector<std::string>{"POOL", "NODES", "POWERED_DOWN", "POWERING_UP", "UP",
                                                  "POWERING_DOWN", "OTHER", "GPUS-PAID", "GPUS-USED"});
  CHECK(cells(burst) == std::vector<std::string>{"burst", "3", "1", "1", "1", "0", "0", "16", "6"});
  CHECK(cells(spot) == std::vector<std::string>{"spot", "1", "0", "0", "0", "1", "0", "8", "0"});

  FakeSchedulerClient none;
  Invocation empty = RunGpusched({"pools"}, none, host);
  CHECK(empty.exit_code == 0);
  CHECK_THAT(empty.out, Catch::Contains("no elastic pools"));
}
