// Every real `nvidia-smi topo -m` output in shared/fixtures/topo parses, and
// specific pairs read as the files say (see shared/fixtures/README.md).
#include <catch2/catch.hpp>

#include "common/topology/cpu_list.h"
#include "common/topology/nvidia_smi_topo.h"
#include "fixture_util.h"

using namespace gpusched::topology;
using gpusched::testing::ReadTopoFixture;

namespace {

NodeTopology Parse(const std::string& name) {
  std::string text = ReadTopoFixture(name);
  INFO("fixture " << gpusched::testing::TopoFixturePath(name) << " (shared/ must sit beside the repository)");
  REQUIRE_FALSE(text.empty());
  absl::StatusOr<NodeTopology> topo = ParseNvidiaSmiTopo(text);
  INFO(topo.status().ToString());
  REQUIRE(topo.ok());
  return *std::move(topo);
}

std::string G(const NodeTopology& t, int i, int j) { return FormatLink(t.GpuLink(i, j)); }
std::string N(const NodeTopology& t, int gpu, int nic) { return FormatLink(t.GpuNicLink(gpu, nic)); }
std::string NN(const NodeTopology& t, int a, int b) { return FormatLink(t.NicLink(a, b)); }

void CheckAllGpuPairs(const NodeTopology& t, const std::string& expected) {
  for (int i = 0; i < t.num_gpus(); ++i) {
    for (int j = 0; j < t.num_gpus(); ++j) {
      INFO("GPU" << i << "-GPU" << j);
      CHECK(G(t, i, j) == (i == j ? std::string("X") : expected));
    }
  }
}

const char* kFixtures[] = {
    "aws-g6e.12xlarge-4xL40S.txt", "aws-p4d.24xlarge.txt", "aws-p5.48xlarge.txt", "dgx-a100.txt", "dgx1-v100.txt",
    "hgx-h200-8gpu-12nic.txt",     "pcie-8x-rtx4090.txt"};

}  // namespace

TEST_CASE("every fixture parses into a symmetric GPU matrix") {
  for (const char* name : kFixtures) {
    NodeTopology t = Parse(name);
    INFO(name);
    CHECK(t.num_gpus() > 0);
    CHECK_FALSE(t.nvswitch());  // never guessed by the parser
    for (int i = 0; i < t.num_gpus(); ++i) {
      CHECK(t.gpus()[i].index == i);
      CHECK(t.gpus()[i].uuid.empty());  // not in topo -m
      for (int j = 0; j < t.num_gpus(); ++j) {
        CHECK(t.GpuLink(i, j) == t.GpuLink(j, i));
      }
    }
  }
}

TEST_CASE("DGX-1 V100: hybrid cube-mesh, 4 mlx5 NICs, CPU affinity only") {
  NodeTopology t = Parse("dgx1-v100.txt");
  REQUIRE(t.num_gpus() == 8);
  REQUIRE(t.num_nics() == 4);
  // Header order is mlx5_0, mlx5_2, mlx5_1, mlx5_3.
  CHECK(t.nics()[0].name == "mlx5_0");
  CHECK(t.nics()[1].name == "mlx5_2");
  CHECK(t.nics()[2].device == "mlx5_1");
  CHECK(G(t, 0, 1) == "NV1");
  CHECK(G(t, 0, 3) == "NV2");
  CHECK(G(t, 0, 4) == "NV2");
  CHECK(G(t, 0, 5) == "SYS");
  CHECK(G(t, 1, 5) == "NV2");
  CHECK(G(t, 2, 6) == "NV1");
  CHECK(G(t, 3, 7) == "NV1");
  CHECK(G(t, 4, 7) == "NV2");
  CHECK(t.GpuLink(0, 5).kind == LinkKind::kSys);
  CHECK(t.GpuLink(0, 1) == Link{LinkKind::kNvLink, 1});
  CHECK(N(t, 0, *t.FindNic("mlx5_0")) == "PIX");
  CHECK(N(t, 0, *t.FindNic("mlx5_1")) == "PHB");
  CHECK(N(t, 0, *t.FindNic("mlx5_2")) == "SYS");
  CHECK(N(t, 6, *t.FindNic("mlx5_3")) == "PIX");
  CHECK(NN(t, *t.FindNic("mlx5_0"), *t.FindNic("mlx5_1")) == "PHB");
  CHECK(t.NicsClosestTo(0) == std::vector<int>{*t.FindNic("mlx5_0")});
  CHECK(t.NicsClosestTo(2) == std::vector<int>{*t.FindNic("mlx5_1")});
  CHECK(FormatCpuList(t.gpus()[0].cpu_affinity) == "0-19,40-59");
  CHECK(FormatCpuList(t.gpus()[7].cpu_affinity) == "20-39,60-79");
  // No NUMA Affinity column: NUMA stays unknown.
  CHECK(t.gpus()[0].numa_node == -1);
  CHECK(t.numa_nodes().empty());
  CHECK(t.nics()[0].numa_node == -1);
  CHECK_FALSE(t.LooksLikeNvSwitch());
}

TEST_CASE("DGX A100: NV12 everywhere, mlx5_0..11, NUMA 1/3/5/7") {
  NodeTopology t = Parse("dgx-a100.txt");
  REQUIRE(t.num_gpus() == 8);
  REQUIRE(t.num_nics() == 12);
  CheckAllGpuPairs(t, "NV12");
  CHECK(t.nics()[11].name == "mlx5_11");
  CHECK(t.nics()[11].device == "mlx5_11");
  CHECK(N(t, 0, 0) == "PXB");
  CHECK(N(t, 0, 1) == "PXB");
  CHECK(N(t, 0, 2) == "SYS");
  CHECK(N(t, 2, 3) == "PXB");
  CHECK(N(t, 4, 6) == "PXB");
  CHECK(N(t, 7, 9) == "PXB");
  CHECK(N(t, 0, 4) == "SYS");
  CHECK(NN(t, 4, 5) == "PIX");
  CHECK(NN(t, 0, 1) == "PXB");
  CHECK(t.NicsClosestTo(0) == std::vector<int>{0, 1});
  CHECK(t.NicsClosestTo(6) == std::vector<int>{8, 9});
  CHECK(FormatCpuList(t.gpus()[0].cpu_affinity) == "48-63,176-191");
  CHECK(t.gpus()[0].numa_node == 3);
  CHECK(t.gpus()[2].numa_node == 1);
  CHECK(t.gpus()[4].numa_node == 7);
  CHECK(t.gpus()[6].numa_node == 5);
  REQUIRE(t.numa_nodes().size() == 4);
  CHECK(t.numa_nodes()[0].id == 1);
  CHECK(FormatCpuList(t.numa_nodes()[0].cpus) == "16-31,144-159");
  CHECK(t.numa_nodes()[3].id == 7);
  CHECK(t.nics()[0].numa_node == 3);   // PXB to GPU0
  CHECK(t.nics()[4].numa_node == -1);  // SYS to every GPU
  CHECK(t.LooksLikeNvSwitch());
}

TEST_CASE("HGX H200: NV18, 12 NICs through the NIC Legend") {
  NodeTopology t = Parse("hgx-h200-8gpu-12nic.txt");
  REQUIRE(t.num_gpus() == 8);
  REQUIRE(t.num_nics() == 12);
  CheckAllGpuPairs(t, "NV18");
  for (int n = 0; n < 12; ++n) {
    CHECK(t.nics()[n].name == "NIC" + std::to_string(n));
    CHECK(t.nics()[n].device == "mlx5_" + std::to_string(n));
  }
  // Each GPU has one NIC behind its own PCIe switch.
  const int attached[8] = {0, 3, 4, 5, 6, 9, 10, 11};
  for (int g = 0; g < 8; ++g) {
    INFO("GPU" << g);
    CHECK(N(t, g, attached[g]) == "PXB");
    CHECK(t.NicsClosestTo(g) == std::vector<int>{attached[g]});
  }
  CHECK(N(t, 0, 1) == "NODE");
  CHECK(N(t, 0, 6) == "SYS");
  CHECK(N(t, 4, 0) == "SYS");
  CHECK(NN(t, 1, 2) == "PIX");
  CHECK(NN(t, 7, 8) == "PIX");
  CHECK(NN(t, 0, 6) == "SYS");
  CHECK(t.FindNic("mlx5_3") == 3);
  CHECK(FormatCpuList(t.gpus()[0].cpu_affinity) == "0-55,112-167");
  CHECK(t.gpus()[0].cpu_affinity.size() == 112);
  CHECK(t.gpus()[5].numa_node == 1);
  REQUIRE(t.numa_nodes().size() == 2);
  CHECK(FormatCpuList(t.numa_nodes()[1].cpus) == "56-111,168-223");
  CHECK(t.nics()[0].numa_node == 0);
  CHECK(t.nics()[1].numa_node == 0);  // NODE: same NUMA node
  CHECK(t.nics()[7].numa_node == 1);
}

TEST_CASE("AWS p4d.24xlarge: NV12, no NICs shown, 2 NUMA nodes") {
  NodeTopology t = Parse("aws-p4d.24xlarge.txt");
  REQUIRE(t.num_gpus() == 8);
  CHECK(t.num_nics() == 0);
  CheckAllGpuPairs(t, "NV12");
  CHECK(t.NicsClosestTo(0).empty());
  CHECK(FormatCpuList(t.gpus()[3].cpu_affinity) == "0-23,48-71");
  CHECK(FormatCpuList(t.gpus()[4].cpu_affinity) == "24-47,72-95");
  CHECK(t.gpus()[3].numa_node == 0);
  CHECK(t.gpus()[4].numa_node == 1);
  REQUIRE(t.numa_nodes().size() == 2);
  CHECK(t.numa_nodes()[1].cpus.size() == 48);
}

TEST_CASE("AWS p5.48xlarge (space-aligned): NV18, 2 NUMA nodes") {
  NodeTopology t = Parse("aws-p5.48xlarge.txt");
  REQUIRE(t.num_gpus() == 8);
  CHECK(t.num_nics() == 0);
  CheckAllGpuPairs(t, "NV18");
  CHECK(FormatCpuList(t.gpus()[0].cpu_affinity) == "0-47,96-143");
  CHECK(FormatCpuList(t.gpus()[7].cpu_affinity) == "48-95,144-191");
  CHECK(t.gpus()[0].numa_node == 0);
  CHECK(t.gpus()[7].numa_node == 1);
  CHECK(t.numa_nodes().size() == 2);
  CHECK(t.LooksLikeNvSwitch());
}

TEST_CASE("AWS g6e.12xlarge (space-aligned): 4 L40S, NODE everywhere") {
  NodeTopology t = Parse("aws-g6e.12xlarge-4xL40S.txt");
  REQUIRE(t.num_gpus() == 4);
  CHECK(t.num_nics() == 0);
  CheckAllGpuPairs(t, "NODE");
  CHECK(FormatCpuList(t.gpus()[2].cpu_affinity) == "0-47");
  CHECK(t.gpus()[2].numa_node == 0);
  REQUIRE(t.numa_nodes().size() == 1);
  CHECK(t.numa_nodes()[0].id == 0);
  CHECK(t.numa_nodes()[0].cpus.size() == 48);
  CHECK_FALSE(t.LooksLikeNvSwitch());
}

TEST_CASE("8x RTX 4090: SYS everywhere, two NICs PHB to GPU6, no legend") {
  NodeTopology t = Parse("pcie-8x-rtx4090.txt");
  REQUIRE(t.num_gpus() == 8);
  REQUIRE(t.num_nics() == 2);
  CheckAllGpuPairs(t, "SYS");
  CHECK(t.nics()[0].name == "NIC0");
  CHECK(t.nics()[0].device.empty());  // no NIC Legend in the source
  CHECK(N(t, 6, 0) == "PHB");
  CHECK(N(t, 6, 1) == "PHB");
  CHECK(N(t, 0, 0) == "SYS");
  CHECK(N(t, 7, 1) == "SYS");
  CHECK(NN(t, 0, 1) == "PIX");
  CHECK(t.NicsClosestTo(6) == std::vector<int>{0, 1});
  CHECK(t.nics()[0].numa_node == 1);  // through GPU6
  CHECK(t.gpus()[6].numa_node == 1);
  CHECK(FormatCpuList(t.gpus()[1].cpu_affinity) == "0-55,112-167");
  CHECK(t.numa_nodes().size() == 2);
}
