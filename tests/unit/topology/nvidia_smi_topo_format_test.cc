// FormatNvidiaSmiTopo draws what ParseNvidiaSmiTopo reads: every real
// fixture survives parse -> format -> parse, and the lines look like the tool's.
#include "common/topology/nvidia_smi_topo_format.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "common/topology/cpu_list.h"
#include "common/topology/nvidia_smi_topo.h"
#include "fixture_util.h"

using namespace gpusched::topology;
using gpusched::testing::ReadTopoFixture;

namespace {

const char* kFixtures[] = {
    "aws-g6e.12xlarge-4xL40S.txt", "aws-p4d.24xlarge.txt", "aws-p5.48xlarge.txt", "dgx-a100.txt", "dgx1-v100.txt",
    "hgx-h200-8gpu-12nic.txt",     "pcie-8x-rtx4090.txt"};

NodeTopology Parse(const std::string& text) {
  absl::StatusOr<NodeTopology> topo = ParseNvidiaSmiTopo(text);
  INFO(topo.status().ToString() << "\n" << text);
  REQUIRE(topo.ok());
  return *std::move(topo);
}

std::vector<std::string> Lines(const std::string& text) { return absl::StrSplit(text, '\n'); }

}  // namespace

TEST_CASE("every fixture survives parse -> format -> parse") {
  for (const char* name : kFixtures) {
    INFO(name);
    const std::string original = ReadTopoFixture(name);
    REQUIRE_FALSE(original.empty());
    const NodeTopology first = Parse(original);
    const std::string drawn = FormatNvidiaSmiTopo(first);
    INFO(drawn);
    const NodeTopology second = Parse(drawn);

    REQUIRE(second.num_gpus() == first.num_gpus());
    REQUIRE(second.num_nics() == first.num_nics());
    for (int i = 0; i < first.num_gpus(); ++i) {
      INFO("GPU" << i);
      for (int j = 0; j < first.num_gpus(); ++j) {
        CHECK(second.GpuLink(i, j) == first.GpuLink(i, j));
      }
      for (int n = 0; n < first.num_nics(); ++n) {
        CHECK(second.GpuNicLink(i, n) == first.GpuNicLink(i, n));
      }
      CHECK(second.gpus()[i].numa_node == first.gpus()[i].numa_node);
      CHECK(second.gpus()[i].cpu_affinity == first.gpus()[i].cpu_affinity);
    }
    for (int n = 0; n < first.num_nics(); ++n) {
      INFO("NIC" << n);
      for (int m = 0; m < first.num_nics(); ++m) {
        CHECK(second.NicLink(n, m) == first.NicLink(n, m));
      }
      CHECK(second.nics()[n].name == "NIC" + std::to_string(n));
      CHECK(second.nics()[n].device == first.nics()[n].device);
      CHECK(second.nics()[n].numa_node == first.nics()[n].numa_node);
      // Names already of the NIC<k> form come back unchanged.
      if (first.nics()[n].name.rfind("NIC", 0) == 0) {
        CHECK(second.nics()[n].name == first.nics()[n].name);
      }
    }
    REQUIRE(second.numa_nodes().size() == first.numa_nodes().size());
    for (size_t k = 0; k < first.numa_nodes().size(); ++k) {
      CHECK(second.numa_nodes()[k].id == first.numa_nodes()[k].id);
      CHECK(second.numa_nodes()[k].cpus == first.numa_nodes()[k].cpus);
    }
    // A second round draws the same text.
    CHECK(FormatNvidiaSmiTopo(second) == drawn);
  }
}

TEST_CASE("HGX H200 is drawn with tabs, the X cell, N/A-free affinities and a NIC Legend") {
  const NodeTopology t = Parse(ReadTopoFixture("hgx-h200-8gpu-12nic.txt"));
  const std::vector<std::string> lines = Lines(FormatNvidiaSmiTopo(t));
  REQUIRE(lines.size() > 40);
  CHECK(lines[0] ==
        "\tGPU0\tGPU1\tGPU2\tGPU3\tGPU4\tGPU5\tGPU6\tGPU7\tNIC0\tNIC1\tNIC2\tNIC3\tNIC4"
        "\tNIC5\tNIC6\tNIC7\tNIC8\tNIC9\tNIC10\tNIC11\tCPU Affinity\tNUMA Affinity");
  CHECK(lines[1] ==
        "GPU0\t X \tNV18\tNV18\tNV18\tNV18\tNV18\tNV18\tNV18\tPXB\tNODE\tNODE\tNODE\tNODE"
        "\tNODE\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\t0-55,112-167\t0");
  CHECK(lines[9] ==
        "NIC0\tPXB\tNODE\tNODE\tNODE\tSYS\tSYS\tSYS\tSYS\t X \tNODE\tNODE\tNODE\tNODE\tNODE"
        "\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS");
  CHECK(lines[21] == "");
  CHECK(lines[22] == "Legend:");
  CHECK(lines[24] == "  X    = Self");
  CHECK(lines[30] == "  NV#  = a bonded set of # NVLinks");
  CHECK(lines[32] == "NIC Legend:");
  CHECK(lines[34] == "  NIC0: mlx5_0");
  CHECK(lines[45] == "  NIC11: mlx5_11");
  CHECK(lines.back() == "");  // ends with a newline
}

TEST_CASE("unknown affinity prints as N/A; NICs without a device get no legend") {
  NodeTopology t(2, 1);
  t.SetGpuLink(0, 1, Link{LinkKind::kNvLink, 2});
  t.SetGpuLink(1, 0, Link{LinkKind::kNvLink, 2});
  t.SetGpuNicLink(1, 0, Link{LinkKind::kPix, 0});
  t.gpus()[1].cpu_affinity = {0, 1, 2, 5};
  t.gpus()[1].numa_node = 1;
  const std::string drawn = FormatNvidiaSmiTopo(t);
  const std::vector<std::string> lines = Lines(drawn);
  CHECK(lines[0] == "\tGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity");
  CHECK(lines[1] == "GPU0\t X \tNV2\tSYS\tN/A\tN/A");
  CHECK(lines[2] == "GPU1\tNV2\t X \tPIX\t0-2,5\t1");
  CHECK(lines[3] == "NIC0\tSYS\tPIX\t X ");
  CHECK(drawn.find("NIC Legend") == std::string::npos);
  const NodeTopology back = Parse(drawn);
  CHECK(back.gpus()[0].numa_node == -1);
  CHECK(back.gpus()[0].cpu_affinity.empty());
  CHECK(FormatCpuList(back.gpus()[1].cpu_affinity) == "0-2,5");
  CHECK(back.nics()[0].device.empty());
}
