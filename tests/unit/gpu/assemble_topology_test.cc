#include "agent/gpu/assemble_topology.h"

#include <catch2/catch.hpp>

using gpusched::agent::AssembleTopology;
using gpusched::agent::HostOptions;
using gpusched::agent::HwlocHost;
using gpusched::agent::NvmlGpus;
using gpusched::topology::FormatLink;
using gpusched::topology::GpuInfo;
using gpusched::topology::Link;
using gpusched::topology::LinkKind;
using gpusched::topology::P2pStatus;

namespace {

std::unique_ptr<HwlocHost> SwitchTree() {
  HostOptions options;
  options.hwloc_xml_path = std::string(GPUSCHED_GPU_TEST_DATA) + "/switch-tree.xml";
  options.sysfs_root = "/nonexistent";
  auto host = HwlocHost::Load(options);
  REQUIRE(host.ok());
  return *std::move(host);
}

// GPUs as NVML would list them; links start unknown.
NvmlGpus Gpus(std::vector<std::string> bus_ids) {
  NvmlGpus out;
  const size_t n = bus_ids.size();
  for (size_t i = 0; i < n; ++i) {
    GpuInfo g;
    g.index = static_cast<int>(i);
    g.uuid = "GPU-" + std::to_string(i);
    g.pci_bus_id = bus_ids[i];
    out.gpus.push_back(g);
  }
  out.links.assign(n * n, std::nullopt);
  out.p2p.assign(n * n, P2pStatus::kUnknown);
  for (size_t i = 0; i < n; ++i) out.links[i * n + i] = Link{LinkKind::kSelf, 0};
  return out;
}

}  // namespace

TEST_CASE("NVML's classes win; hwloc fills in what NVML could not tell") {
  auto host = SwitchTree();
  NvmlGpus nvml = Gpus({"00000000:05:00.0", "00000000:0A:00.0", "00000000:22:00.0", "00000000:81:00.0"});
  nvml.links[0 * 4 + 2] = Link{LinkKind::kNvLink, 4};
  nvml.links[2 * 4 + 0] = Link{LinkKind::kNvLink, 4};
  nvml.p2p[0 * 4 + 2] = P2pStatus::kOk;
  auto topo = AssembleTopology(nvml, *host);
  CHECK(topo.GpuLink(0, 2) == Link{LinkKind::kNvLink, 4});
  CHECK(topo.GpuP2p(0, 2) == P2pStatus::kOk);
  CHECK(topo.GpuP2p(0, 1) == P2pStatus::kUnknown);
  CHECK(FormatLink(topo.GpuLink(0, 1)) == "PXB");  // from hwloc
  CHECK(FormatLink(topo.GpuLink(1, 3)) == "SYS");
  CHECK(FormatLink(topo.GpuLink(3, 3)) == "X");
}

TEST_CASE("GPUs get their NUMA node and CPUs from where hwloc sees them") {
  auto host = SwitchTree();
  NvmlGpus nvml = Gpus({"00000000:05:00.0", "00000000:81:00.0"});
  nvml.gpus[0].cpu_affinity = {0, 1};  // NVML's answer is kept
  auto topo = AssembleTopology(nvml, *host);
  CHECK(topo.gpus()[0].numa_node == 0);
  CHECK(topo.gpus()[0].cpu_affinity == std::vector<int>{0, 1});
  CHECK(topo.gpus()[1].numa_node == 1);
  CHECK(topo.gpus()[1].cpu_affinity == std::vector<int>{4, 5, 6, 7});
  REQUIRE(topo.numa_nodes().size() == 2);
}

TEST_CASE("GPU-NIC and NIC-NIC classes come from the PCI tree") {
  auto host = SwitchTree();
  auto topo = AssembleTopology(Gpus({"00000000:05:00.0", "00000000:22:00.0", "00000000:81:00.0"}), *host);
  REQUIRE(topo.num_nics() == 4);
  const int mlx5_0 = *topo.FindNic("mlx5_0");
  const int mlx5_2 = *topo.FindNic("mlx5_2");
  const int mlx5_10 = *topo.FindNic("NIC2");
  const int eno1 = *topo.FindNic("eno1");
  CHECK(FormatLink(topo.GpuNicLink(0, mlx5_0)) == "PIX");
  CHECK(FormatLink(topo.GpuNicLink(0, mlx5_2)) == "NODE");
  CHECK(FormatLink(topo.GpuNicLink(1, mlx5_2)) == "PHB");
  CHECK(FormatLink(topo.GpuNicLink(2, eno1)) == "PHB");
  CHECK(FormatLink(topo.GpuNicLink(2, mlx5_0)) == "SYS");
  CHECK(FormatLink(topo.NicLink(mlx5_2, mlx5_10)) == "PIX");
  CHECK(FormatLink(topo.NicLink(mlx5_0, eno1)) == "SYS");
  CHECK(FormatLink(topo.NicLink(eno1, eno1)) == "X");
  CHECK(topo.NicsClosestTo(0) == std::vector<int>{mlx5_0});
}

TEST_CASE("a GPU hwloc cannot see: NUMA node from its CPUs, NODE to NICs there, else SYS") {
  auto host = SwitchTree();
  NvmlGpus nvml = Gpus({"00000000:C1:00.0", "00000000:C2:00.0", "00000000:C3:00.0"});
  nvml.gpus[0].cpu_affinity = {4, 5};
  nvml.gpus[1].cpu_affinity = {3, 4};  // straddles two nodes: no answer
  auto topo = AssembleTopology(nvml, *host);
  CHECK(topo.gpus()[0].numa_node == 1);
  CHECK(topo.gpus()[1].numa_node == -1);
  CHECK(topo.gpus()[2].numa_node == -1);
  CHECK(FormatLink(topo.GpuNicLink(1, *topo.FindNic("eno1"))) == "SYS");
  CHECK(FormatLink(topo.GpuNicLink(0, *topo.FindNic("eno1"))) == "NODE");
  CHECK(FormatLink(topo.GpuNicLink(0, *topo.FindNic("mlx5_0"))) == "SYS");
}

TEST_CASE("no GPUs: the host alone") {
  auto host = SwitchTree();
  auto topo = AssembleTopology(NvmlGpus{}, *host);
  CHECK(topo.num_gpus() == 0);
  CHECK(topo.num_nics() == 4);
  CHECK(topo.numa_nodes().size() == 2);
  CHECK_FALSE(topo.nvswitch());
  CHECK(topo.network().nvlink_domain.empty());
}
