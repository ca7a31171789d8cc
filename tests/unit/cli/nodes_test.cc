// `gpusched nodes` and `gpusched nodes show` against a fake daemon whose nodes
// carry real machines' topologies.
#include <catch2/catch.hpp>
#include <sstream>
#include <string>

#include "common/convert/topology_proto.h"
#include "common/topology/nvidia_smi_topo.h"
#include "google/protobuf/util/json_util.h"
#include "jobs_fixture.h"
#include "tests/unit/topology/fixture_util.h"

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
  CHECK_THAT(v100, Catch::Contains("NV1-NV2"));  // DGX-1's hybrid cube mesh
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

TEST_CASE("pools shows each pool's class, nodes by power state, GPUs, cost per hour and demand") {
  FakeHost host;
  FakeSchedulerClient client;
  v1::PoolStatus& burst = *client.pools.add_pools();
  burst.set_name("burst");
  burst.set_pool_class("on-demand");
  burst.set_elastic(true);
  burst.set_nodes_powered_down(1);
  burst.set_nodes_powering_up(1);
  burst.set_nodes_up(1);
  burst.set_gpus_paid(16);
  burst.set_gpus_used(6);
  burst.set_cost_per_hour(40);
  burst.set_demand_gpus(24);
  burst.set_demand_window_s(300);
  burst.set_headroom_gpus(12);
  v1::PoolStatus& base = *client.pools.add_pools();
  base.set_name("base");
  base.set_pool_class("reserved");
  base.set_nodes_up(2);
  base.set_gpus_paid(16);
  base.set_cost_per_hour(19.2);

  Invocation run = RunGpusched({"pools"}, client, host);
  REQUIRE(run.exit_code == 0);
  std::istringstream lines(run.out);
  std::string header, first, second;
  std::getline(lines, header);
  std::getline(lines, first);
  std::getline(lines, second);
  auto cells = [](const std::string& line) {
    std::istringstream in(line);
    std::vector<std::string> out;
    for (std::string cell; in >> cell;) out.push_back(cell);
    return out;
  };
  CHECK(cells(header) == std::vector<std::string>{"POOL", "CLASS", "NODES", "POWERED_DOWN", "POWERING_UP", "UP",
                                                  "POWERING_DOWN", "OTHER", "GPUS-PAID", "GPUS-USED", "COST/H",
                                                  "DEMAND", "HEADROOM"});
  CHECK(cells(first) == std::vector<std::string>{"burst", "on-demand", "3", "1", "1", "1", "0", "0", "16", "6", "40.00",
                                                 "24/5m", "12"});
  // A pool without programs is static: its class says so.
  CHECK(cells(second) == std::vector<std::string>{"base", "reserved,static", "2", "0", "0", "2", "0", "0", "16", "0",
                                                  "19.20", "0/0", "0"});

  Invocation json = RunGpusched({"pools", "--json"}, client, host);
  CHECK(json.exit_code == 0);
  CHECK_THAT(json.out, Catch::Contains("\"demandGpus\":\"24\""));

  FakeSchedulerClient none;
  Invocation empty = RunGpusched({"pools"}, none, host);
  CHECK(empty.exit_code == 0);
  CHECK_THAT(empty.out, Catch::Contains("no elastic pools"));
}

TEST_CASE("nodes interrupt sends the notice in seconds and refuses a notice that is not a duration") {
  FakeHost host;
  FakeSchedulerClient client;
  v1::Node& node = *client.nodes.add_nodes();
  node.mutable_info()->set_name("s1");
  node.set_state(v1::NODE_STATE_UP);

  Invocation run = RunGpusched({"nodes", "interrupt", "s1", "--in", "2m", "--reason", "notice i-0abc"}, client, host);
  REQUIRE(run.exit_code == 0);
  REQUIRE(client.interrupts.size() == 1);
  CHECK(client.interrupts[0].node() == "s1");
  CHECK(client.interrupts[0].notice_s() == 120);
  CHECK(client.interrupts[0].reason() == "notice i-0abc");
  CHECK_THAT(run.out, Catch::Contains("node s1: spot interruption"));

  Invocation plain = RunGpusched({"nodes", "interrupt", "s1", "--in", "45"}, client, host);
  CHECK(plain.exit_code == 0);
  CHECK(client.interrupts.back().notice_s() == 45);
  Invocation defaulted = RunGpusched({"nodes", "interrupt", "s1"}, client, host);
  CHECK(defaulted.exit_code == 0);
  CHECK(client.interrupts.back().notice_s() == 120);

  Invocation bad = RunGpusched({"nodes", "interrupt", "s1", "--in", "soon"}, client, host);
  CHECK(bad.exit_code != 0);
  CHECK_THAT(bad.err, Catch::Contains("--in: \"soon\" is not a duration"));
  CHECK(client.interrupts.size() == 3);
}
