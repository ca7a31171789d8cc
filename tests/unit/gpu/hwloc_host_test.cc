#include "agent/gpu/hwloc_host.h"

#include <sched.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/match.h"
#include "common/topology/cpu_list.h"
#include "tests/support/temp_dir.h"

using gpusched::agent::HostOptions;
using gpusched::agent::HwlocHost;
using gpusched::agent::ParsePciAddress;
using gpusched::agent::PciAddress;
using gpusched::testing::TempDir;
using gpusched::topology::FormatLink;

namespace {

const std::string kData = GPUSCHED_GPU_TEST_DATA;

std::unique_ptr<HwlocHost> LoadXml(const std::string& file, const std::string& sysfs_root = "/nonexistent") {
  HostOptions options;
  options.hwloc_xml_path = kData + "/" + file;
  options.sysfs_root = sysfs_root;
  auto host = HwlocHost::Load(options);
  INFO(host.status().ToString());
  REQUIRE(host.ok());
  return *std::move(host);
}

PciAddress At(const char* bus_id) { return *ParsePciAddress(bus_id); }

std::string Class(const HwlocHost& host, const char* a, const char* b) {
  auto link = host.PciLink(At(a), At(b));
  return link.has_value() ? FormatLink(*link) : "none";
}

}  // namespace

TEST_CASE("this machine: NUMA nodes hold every CPU this process may use, and memory") {
  auto host = HwlocHost::Load(HostOptions{});
  INFO(host.status().ToString());
  REQUIRE(host.ok());
  auto nodes = (*host)->NumaNodes();
  REQUIRE_FALSE(nodes.empty());

  std::set<int> in_nodes;
  for (const auto& node : nodes) {
    CHECK(node.id >= 0);
    CHECK(node.memory_mb > 0);
    in_nodes.insert(node.cpus.begin(), node.cpus.end());
  }
  cpu_set_t allowed;
  REQUIRE(sched_getaffinity(0, sizeof allowed, &allowed) == 0);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &allowed)) CHECK(in_nodes.count(cpu) == 1);
  }
  std::ifstream online_file("/sys/devices/system/cpu/online");
  std::stringstream online_text;
  online_text << online_file.rdbuf();
  auto online = gpusched::topology::ParseCpuList(online_text.str().substr(0, online_text.str().find('\n')));
  REQUIRE(online.ok());
  std::set<int> online_set(online->begin(), online->end());
  for (int cpu : in_nodes) CHECK(online_set.count(cpu) == 1);
}

TEST_CASE("this machine: every NIC found sits on PCI") {
  auto host = HwlocHost::Load(HostOptions{});
  REQUIRE(host.ok());
  auto nics = (*host)->Nics();
  for (size_t k = 0; k < nics.size(); ++k) {
    CHECK(nics[k].name == "NIC" + std::to_string(k));
    CHECK_FALSE(nics[k].device.empty());
    CHECK(ParsePciAddress(nics[k].pci_bus_id).has_value());
  }
}

TEST_CASE("synthetic topology: NUMA nodes split the CPUs; no PCI, so no NICs") {
  HostOptions options;
  options.hwloc_synthetic = "pack:2 numa:2 core:2 pu:2";
  auto host = HwlocHost::Load(options);
  INFO(host.status().ToString());
  REQUIRE(host.ok());
  auto nodes = (*host)->NumaNodes();
  REQUIRE(nodes.size() == 4);
  for (int i = 0; i < 4; ++i) {
    CHECK(nodes[i].id == i);
    CHECK(nodes[i].cpus == std::vector<int>{4 * i, 4 * i + 1, 4 * i + 2, 4 * i + 3});
  }
  CHECK((*host)->Nics().empty());
  CHECK_FALSE((*host)->PciLink(At("0000:05:00.0"), At("0000:06:00.0")).has_value());
}

TEST_CASE("a bad synthetic description or XML path is an error, not a crash") {
  HostOptions synthetic;
  synthetic.hwloc_synthetic = "pack:banana";
  CHECK(HwlocHost::Load(synthetic).status().code() == absl::StatusCode::kInvalidArgument);
  HostOptions xml;
  xml.hwloc_xml_path = "/nonexistent/topo.xml";
  auto missing = HwlocHost::Load(xml);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == absl::StatusCode::kInternal);
  CHECK(absl::StrContains(missing.status().message(), "/nonexistent/topo.xml"));
}

TEST_CASE("PCIe classes from a two-level switch tree") {
  auto host = LoadXml("switch-tree.xml");
  // GPU 05 and mlx5_0 (06) hang off one leaf switch.
  CHECK(Class(*host, "0000:05:00.0", "0000:06:00.0") == "PIX");
  // GPU 0a is on another leaf switch below the same top switch.
  CHECK(Class(*host, "0000:05:00.0", "0000:0a:00.0") == "PXB");
  CHECK(Class(*host, "0000:06:00.0", "0000:0a:00.0") == "PXB");
  // GPU 22 is on the socket's other host bridge; the RoCE ports 21:00.x on
  // another root port of that host bridge.
  CHECK(Class(*host, "0000:05:00.0", "0000:22:00.0") == "NODE");
  CHECK(Class(*host, "0000:22:00.0", "0000:21:00.0") == "PHB");
  // The two ports of one NIC.
  CHECK(Class(*host, "0000:21:00.0", "0000:21:00.1") == "PIX");
  // Across sockets.
  CHECK(Class(*host, "0000:05:00.0", "00000000:81:00.0") == "SYS");
  CHECK(Class(*host, "0000:81:00.0", "0000:82:00.0") == "PHB");
  CHECK(Class(*host, "0000:05:00.0", "0000:05:00.0") == "X");
  CHECK(Class(*host, "0000:05:00.0", "0000:77:00.0") == "none");
  // Symmetric.
  CHECK(Class(*host, "0000:0a:00.0", "0000:05:00.0") == "PXB");
  CHECK(Class(*host, "0000:81:00.0", "0000:05:00.0") == "SYS");
}

TEST_CASE("NUMA node and CPUs of a PCI device") {
  auto host = LoadXml("switch-tree.xml");
  CHECK(host->NumaNodeOf(At("0000:05:00.0")) == 0);
  CHECK(host->NumaNodeOf(At("0000:81:00.0")) == 1);
  CHECK_FALSE(host->NumaNodeOf(At("0000:77:00.0")).has_value());
  CHECK(host->CpusNear(At("0000:81:00.0")) == std::vector<int>{4, 5, 6, 7});
  CHECK(host->CpusNear(At("0000:77:00.0")).empty());
  auto nodes = host->NumaNodes();
  REQUIRE(nodes.size() == 2);
  CHECK(nodes[0].memory_mb == 64 * 1024);
  CHECK(nodes[1].memory_mb == 32 * 1024);
  CHECK(nodes[1].cpus == std::vector<int>{4, 5, 6, 7});
}

TEST_CASE("NICs: one per PCI function, RDMA names first in natural order, with speeds") {
  TempDir sys;
  sys.Write("class/infiniband/mlx5_0/ports/1/rate", "400 Gb/sec (4X NDR)\n");
  sys.Write("class/net/ens3f0np0/speed", "200000\n");  // mlx5_2's interface: no RDMA rate
  sys.Write("class/net/eno1/speed", "25000\n");
  auto host = LoadXml("switch-tree.xml", sys.path().string());
  auto nics = host->Nics();
  REQUIRE(nics.size() == 4);
  CHECK(nics[0].name == "NIC0");
  CHECK(nics[0].device == "mlx5_0");  // not ib0: the IB port is one NIC
  CHECK(nics[0].pci_bus_id == "00000000:06:00.0");
  CHECK(nics[0].numa_node == 0);
  CHECK(nics[0].link_speed_gbps == 400);
  CHECK(nics[1].device == "mlx5_2");
  CHECK(nics[1].link_speed_gbps == 200);
  CHECK(nics[2].device == "mlx5_10");
  CHECK(nics[2].pci_bus_id == "00000000:21:00.1");
  CHECK(nics[2].link_speed_gbps == 0);
  CHECK(nics[3].name == "NIC3");
  CHECK(nics[3].device == "eno1");  // Ethernet only: after every RDMA device
  CHECK(nics[3].numa_node == 1);
  CHECK(nics[3].link_speed_gbps == 25);
}
