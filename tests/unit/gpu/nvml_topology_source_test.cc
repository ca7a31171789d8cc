// NvmlTopologySource against the fake libnvidia-ml (tests/unit/gpu/fake_nvml),
// loaded by absolute path through the same dlopen code the agent uses.

#include "agent/gpu/nvml_topology_source.h"

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "common/topology/nvidia_smi_topo.h"
#include "tests/unit/gpu/nvml_discover.h"
#include "tests/unit/gpu/scoped_env.h"
#include "tests/unit/topology/fixture_util.h"

using gpusched::agent::HostOptions;
using gpusched::agent::NvmlTopologyOptions;
using gpusched::agent::NvmlTopologySource;
using gpusched::agent::OpenAutoTopologySource;
using gpusched::testing::ScopedEnv;
using gpusched::topology::FormatLink;
using gpusched::topology::Link;
using gpusched::topology::LinkKind;
using gpusched::topology::NodeTopology;
using gpusched::topology::P2pStatus;

namespace {

constexpr char kMachine[] = "GPUSCHED_FAKE_NVML_MACHINE";
constexpr char kFail[] = "GPUSCHED_FAKE_NVML_FAIL";

// A host without PCI devices unless `xml` names one of tests/unit/gpu/data.
NvmlTopologyOptions Options(const std::string& library = GPUSCHED_FAKE_NVML, const std::string& xml = "") {
  NvmlTopologyOptions options;
  options.nvml_library = library;
  if (xml.empty()) {
    options.host.hwloc_synthetic = "pack:2 numa:1 core:2 pu:1";
  } else {
    options.host.hwloc_xml_path = std::string(GPUSCHED_GPU_TEST_DATA) + "/" + xml;
  }
  options.host.sysfs_root = "/nonexistent";
  return options;
}

NodeTopology Discover(const NvmlTopologyOptions& options) { return gpusched::testing::DiscoverWithNvml(options); }

NodeTopology Fixture(const std::string& name) {
  const std::string text = gpusched::testing::ReadTopoFixture(name);
  REQUIRE_FALSE(text.empty());
  auto topo = gpusched::topology::ParseNvidiaSmiTopo(text);
  REQUIRE(topo.ok());
  return *std::move(topo);
}

}  // namespace

TEST_CASE("HGX H100: eight GPUs, NV18 through NVSwitch") {
  ScopedEnv machine(kMachine, "hgx-h100");
  NodeTopology topo = Discover(Options());
  REQUIRE(topo.num_gpus() == 8);
  CHECK(topo.nvswitch());
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 8; ++j) {
      INFO(i << "-" << j);
      CHECK(topo.GpuLink(i, j) == (i == j ? Link{LinkKind::kSelf, 0} : Link{LinkKind::kNvLink, 18}));
      if (i != j) CHECK(topo.GpuP2p(i, j) == P2pStatus::kOk);
    }
  }
  CHECK(FormatLink(topo.GpuLink(0, 7)) == "NV18");

  const auto& g0 = topo.gpus()[0];
  CHECK(g0.index == 0);
  CHECK(g0.uuid == "GPU-h100beef-0000-4000-8000-000000000000");
  CHECK(topo.gpus()[7].uuid == "GPU-h100beef-0000-4000-8000-000000000007");
  CHECK(g0.pci_bus_id == "00000000:18:00.0");
  CHECK(topo.gpus()[7].pci_bus_id == "00000000:DB:00.0");
  CHECK(g0.model == "NVIDIA H100 80GB HBM3");
  CHECK(g0.memory_mb == 81559);
  CHECK(g0.compute_capability == 90);
  CHECK(g0.pcie_generation == 5);  // the maximum, not the idle link's gen 1
  CHECK(g0.pcie_width == 16);
  CHECK_FALSE(g0.mig_enabled);
  CHECK(g0.cpu_affinity.size() == 112);
  CHECK(g0.cpu_affinity.front() == 0);
  CHECK(g0.cpu_affinity.back() == 167);
  CHECK(topo.gpus()[4].cpu_affinity.front() == 56);
  // A single-node NVSwitch system reports no multi-node fabric.
  CHECK(g0.fabric_cluster_uuid.empty());
  CHECK(g0.fabric_clique_id == -1);
  CHECK(topo.network().nvlink_domain.empty());
  // The synthetic host: two NUMA nodes, no NICs.
  CHECK(topo.num_nics() == 0);
  CHECK(topo.numa_nodes().size() == 2);
}

TEST_CASE("HGX H100 matches the NVLink part of a real H200 HGX topo -m") {
  ScopedEnv machine(kMachine, "hgx-h100");
  NodeTopology topo = Discover(Options());
  NodeTopology fixture = Fixture("hgx-h200-8gpu-12nic.txt");
  REQUIRE(fixture.num_gpus() == topo.num_gpus());
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 8; ++j) CHECK(topo.GpuLink(i, j) == fixture.GpuLink(i, j));
  }
}

TEST_CASE("DGX-1: point-to-point NVLink and the PCIe tree reproduce nvidia-smi topo -m") {
  ScopedEnv machine(kMachine, "dgx1-v100");
  NodeTopology topo = Discover(Options(GPUSCHED_FAKE_NVML, "dgx1-pcie.xml"));
  NodeTopology fixture = Fixture("dgx1-v100.txt");
  REQUIRE(topo.num_gpus() == 8);
  CHECK_FALSE(topo.nvswitch());
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 8; ++j) {
      INFO("GPU" << i << " GPU" << j);
      CHECK(FormatLink(topo.GpuLink(i, j)) == FormatLink(fixture.GpuLink(i, j)));
    }
    CHECK(topo.gpus()[i].cpu_affinity == fixture.gpus()[i].cpu_affinity);
    CHECK(topo.gpus()[i].numa_node == i / 4);
  }
  // NICs are matched by device name: topo -m lists them mlx5_0, mlx5_2, ...
  REQUIRE(topo.num_nics() == 4);
  for (int k = 0; k < 4; ++k) {
    const std::string device = fixture.nics()[k].device;
    auto ours = topo.FindNic(device);
    REQUIRE(ours.has_value());
    for (int i = 0; i < 8; ++i) {
      INFO("GPU" << i << " " << device);
      CHECK(FormatLink(topo.GpuNicLink(i, *ours)) == FormatLink(fixture.GpuNicLink(i, k)));
    }
    for (int l = 0; l < 4; ++l) {
      INFO(device << " " << fixture.nics()[l].device);
      CHECK(FormatLink(topo.NicLink(*ours, *topo.FindNic(fixture.nics()[l].device))) ==
            FormatLink(fixture.NicLink(k, l)));
    }
  }
  CHECK(topo.nics()[0].device == "mlx5_0");
  CHECK(topo.nics()[0].name == "NIC0");
  CHECK(topo.nics()[0].numa_node == 0);
  CHECK(topo.nics()[3].numa_node == 1);
  // P2P: over NVLink or within a socket; not across QPI without NVLink.
  CHECK(topo.GpuP2p(0, 4) == P2pStatus::kOk);
  CHECK(topo.GpuP2p(0, 3) == P2pStatus::kOk);
  CHECK(topo.GpuP2p(0, 5) == P2pStatus::kNotSupported);
  CHECK(topo.gpus()[0].compute_capability == 70);
  CHECK(topo.gpus()[0].memory_mb == 32510);
}

TEST_CASE("an old driver without the newer functions still yields the NVLink mesh") {
  ScopedEnv machine(kMachine, "dgx1-v100");
  NodeTopology topo = Discover(Options(GPUSCHED_FAKE_NVML_OLD));
  NodeTopology fixture = Fixture("dgx1-v100.txt");
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 8; ++j) CHECK(FormatLink(topo.GpuLink(i, j)) == FormatLink(fixture.GpuLink(i, j)));
  }
  const auto& g = topo.gpus()[0];
  CHECK(g.compute_capability == 0);  // unknown, not an error
  CHECK(g.pcie_generation == 3);     // from the current link
  CHECK_FALSE(g.mig_enabled);
  CHECK(g.fabric_clique_id == -1);
  CHECK(g.uuid == "GPU-v100cafe-0000-4000-8000-000000000000");
}

TEST_CASE("PCIe-only L40S VM: no NVLink, no P2P, every pair NODE as topo -m shows") {
  ScopedEnv machine(kMachine, "pcie-l40s");
  NodeTopology topo = Discover(Options());
  NodeTopology fixture = Fixture("aws-g6e.12xlarge-4xL40S.txt");
  REQUIRE(topo.num_gpus() == 4);
  CHECK_FALSE(topo.nvswitch());
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) {
      CHECK(topo.GpuLink(i, j) == fixture.GpuLink(i, j));
      if (i != j) CHECK(topo.GpuP2p(i, j) == P2pStatus::kNotSupported);
    }
  }
  CHECK(topo.gpus()[0].model == "NVIDIA L40S");
  CHECK(topo.gpus()[0].compute_capability == 89);
  CHECK(topo.gpus()[0].memory_mb == 46068);
  CHECK(topo.gpus()[0].pcie_generation == 4);
  CHECK_FALSE(topo.gpus()[0].mig_enabled);
}

TEST_CASE("GB200 tray: switches outside the node, one multi-node NVLink clique") {
  ScopedEnv machine(kMachine, "gb200-nvl");
  NodeTopology topo = Discover(Options());
  REQUIRE(topo.num_gpus() == 4);
  CHECK(topo.nvswitch());
  CHECK(FormatLink(topo.GpuLink(0, 3)) == "NV18");
  CHECK(topo.gpus()[2].pci_bus_id == "00000018:01:00.0");
  CHECK(topo.gpus()[0].compute_capability == 100);
  for (const auto& g : topo.gpus()) {
    CHECK(g.fabric_cluster_uuid == "10111213-1415-1617-1819-1a1b1c1d1e1f");
    CHECK(g.fabric_clique_id == 32766);
  }
  CHECK(topo.network().nvlink_domain == "10111213-1415-1617-1819-1a1b1c1d1e1f/32766");
  CHECK_FALSE(topo.gpus()[2].mig_enabled);
  CHECK(topo.gpus()[3].mig_enabled);
}

TEST_CASE("a failing required NVML call fails discovery, naming the call and GPU") {
  ScopedEnv machine(kMachine, "hgx-h100");
  ScopedEnv fail(kFail, "nvmlDeviceGetMemoryInfo:3");
  auto source = NvmlTopologySource::Open(Options());
  REQUIRE(source.ok());
  auto topo = (*source)->Discover();
  REQUIRE_FALSE(topo.ok());
  CHECK(topo.status().code() == absl::StatusCode::kInternal);
  CHECK(topo.status().message() == "nvmlDeviceGetMemoryInfo (GPU 3): GPU is lost (NVML error 15)");
}

TEST_CASE("a failing optional NVML call leaves only that field unknown") {
  ScopedEnv machine(kMachine, "hgx-h100");
  ScopedEnv fail(kFail, "nvmlDeviceGetCudaComputeCapability:2");
  NodeTopology topo = Discover(Options());
  CHECK(topo.gpus()[2].compute_capability == 0);
  CHECK(topo.gpus()[1].compute_capability == 90);
  CHECK(topo.gpus()[2].memory_mb == 81559);
}

TEST_CASE("NVLink state failures mean no NVLink; the PCIe class takes over") {
  ScopedEnv machine(kMachine, "hgx-h100");
  ScopedEnv fail(kFail, "nvmlDeviceGetNvLinkState");
  NodeTopology topo = Discover(Options());
  CHECK_FALSE(topo.nvswitch());
  CHECK(FormatLink(topo.GpuLink(0, 1)) == "NODE");
  CHECK(FormatLink(topo.GpuLink(0, 7)) == "SYS");
}

TEST_CASE("no usable NVML: Open says why, auto falls back to the host alone") {
  SECTION("library missing") {
    NvmlTopologyOptions options = Options("/nonexistent/libnvidia-ml.so.1");
    auto source = NvmlTopologySource::Open(options);
    REQUIRE_FALSE(source.ok());
    CHECK(source.status().code() == absl::StatusCode::kUnavailable);
    CHECK(absl::StartsWith(source.status().message(), "NVML not available: /nonexistent/libnvidia-ml.so.1"));

    auto fallback = OpenAutoTopologySource(options);
    CHECK(fallback.nvml_status.code() == absl::StatusCode::kUnavailable);
    REQUIRE(fallback.source != nullptr);
    auto topo = fallback.source->Discover();
    REQUIRE(topo.ok());
    CHECK(topo->num_gpus() == 0);
    CHECK(topo->numa_nodes().size() == 2);
  }
  SECTION("driver not loaded") {
    ScopedEnv fail(kFail, "nvmlInit_v2");
    auto fallback = OpenAutoTopologySource(Options());
    CHECK(absl::StrContains(fallback.nvml_status.message(), "Driver Not Loaded"));
    REQUIRE(fallback.source != nullptr);
    auto topo = fallback.source->Discover();
    REQUIRE(topo.ok());
    CHECK(topo->num_gpus() == 0);
  }
  SECTION("NVML works") {
    ScopedEnv machine(kMachine, "pcie-l40s");
    auto chosen = OpenAutoTopologySource(Options());
    CHECK(chosen.nvml_status.ok());
    auto topo = chosen.source->Discover();
    REQUIRE(topo.ok());
    CHECK(topo->num_gpus() == 4);
  }
}

TEST_CASE("on this machine, with the real library name, auto never fails") {
  NvmlTopologyOptions options;  // libnvidia-ml.so.1 and this machine's hwloc
  auto chosen = OpenAutoTopologySource(options);
  REQUIRE(chosen.source != nullptr);
  auto topo = chosen.source->Discover();
  INFO(chosen.nvml_status.ToString());
  REQUIRE(topo.ok());
  CHECK_FALSE(topo->numa_nodes().empty());
  if (!chosen.nvml_status.ok()) CHECK(topo->num_gpus() == 0);
}
