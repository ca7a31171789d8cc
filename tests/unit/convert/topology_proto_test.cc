#include "common/convert/topology_proto.h"

#include <catch2/catch.hpp>
#include <string>

#include "common/topology/nvidia_smi_topo.h"
#include "tests/unit/topology/fixture_util.h"

namespace convert = gpusched::convert;
namespace topology = gpusched::topology;
namespace v1 = gpusched::v1;

namespace {

topology::NodeTopology Fixture(const std::string& name) {
  auto topo = topology::ParseNvidiaSmiTopo(gpusched::testing::ReadTopoFixture(name));
  REQUIRE(topo.ok());
  return *topo;
}

void CheckSame(const topology::NodeTopology& a, const topology::NodeTopology& b) {
  REQUIRE(a.num_gpus() == b.num_gpus());
  REQUIRE(a.num_nics() == b.num_nics());
  for (int i = 0; i < a.num_gpus(); ++i) {
    CHECK(a.gpus()[i].index == b.gpus()[i].index);
    CHECK(a.gpus()[i].numa_node == b.gpus()[i].numa_node);
    CHECK(a.gpus()[i].cpu_affinity == b.gpus()[i].cpu_affinity);
    for (int j = 0; j < a.num_gpus(); ++j) {
      CHECK(a.GpuLink(i, j) == b.GpuLink(i, j));
      CHECK(a.GpuP2p(i, j) == b.GpuP2p(i, j));
    }
    for (int k = 0; k < a.num_nics(); ++k) CHECK(a.GpuNicLink(i, k) == b.GpuNicLink(i, k));
  }
  for (int k = 0; k < a.num_nics(); ++k) {
    CHECK(a.nics()[k].name == b.nics()[k].name);
    CHECK(a.nics()[k].device == b.nics()[k].device);
    CHECK(a.nics()[k].numa_node == b.nics()[k].numa_node);
    for (int l = 0; l < a.num_nics(); ++l) CHECK(a.NicLink(k, l) == b.NicLink(k, l));
  }
  REQUIRE(a.numa_nodes().size() == b.numa_nodes().size());
  for (size_t n = 0; n < a.numa_nodes().size(); ++n) {
    CHECK(a.numa_nodes()[n].id == b.numa_nodes()[n].id);
    CHECK(a.numa_nodes()[n].cpus == b.numa_nodes()[n].cpus);
  }
  CHECK(a.nvswitch() == b.nvswitch());
  CHECK(a.network() == b.network());
}

}  // namespace

TEST_CASE("every fixture survives the trip through the wire format") {
  for (const char* name : {"dgx1-v100.txt", "dgx-a100.txt", "hgx-h200-8gpu-12nic.txt", "aws-p4d.24xlarge.txt",
                           "aws-p5.48xlarge.txt", "aws-g6e.12xlarge-4xL40S.txt", "pcie-8x-rtx4090.txt"}) {
    INFO(name);
    topology::NodeTopology topo = Fixture(name);
    topo.set_nvswitch(topo.LooksLikeNvSwitch());
    topo.network() = {"r1", "leaf-3", "spine-1", "nvl-a"};
    v1::NodeInfo wire;
    convert::TopologyToProto(topo, &wire);
    auto back = convert::TopologyFromProto(wire);
    REQUIRE(back.ok());
    CheckSame(topo, *back);
  }
}

TEST_CASE("GPU details, P2P status and fabric clique survive the trip") {
  topology::NodeTopology topo(2, 0);
  topology::GpuInfo& gpu = topo.gpus()[1];
  gpu.uuid = "GPU-1";
  gpu.pci_bus_id = "00000000:19:00.0";
  gpu.model = "NVIDIA H100 80GB HBM3";
  gpu.memory_mb = 81559;
  gpu.mig_enabled = true;
  gpu.compute_capability = 90;
  gpu.pcie_generation = 5;
  gpu.pcie_width = 16;
  gpu.fabric_cluster_uuid = "abc";
  gpu.fabric_clique_id = 7;
  topo.SetGpuP2p(0, 1, topology::P2pStatus::kOk);
  topo.SetGpuP2p(1, 0, topology::P2pStatus::kNotSupported);
  v1::NodeInfo wire;
  convert::TopologyToProto(topo, &wire);
  auto back = convert::TopologyFromProto(wire);
  REQUIRE(back.ok());
  const topology::GpuInfo& got = back->gpus()[1];
  CHECK(got.uuid == "GPU-1");
  CHECK(got.pci_bus_id == "00000000:19:00.0");
  CHECK(got.model == "NVIDIA H100 80GB HBM3");
  CHECK(got.memory_mb == 81559);
  CHECK(got.mig_enabled);
  CHECK(got.compute_capability == 90);
  CHECK(got.pcie_generation == 5);
  CHECK(got.pcie_width == 16);
  CHECK(got.fabric_cluster_uuid == "abc");
  CHECK(got.fabric_clique_id == 7);
  CHECK(back->GpuP2p(0, 1) == topology::P2pStatus::kOk);
  CHECK(back->GpuP2p(1, 0) == topology::P2pStatus::kNotSupported);
}

TEST_CASE("an agent that sends GPUs without links gets every pair as SYS") {
  v1::NodeInfo wire;
  wire.add_gpus()->set_index(0);
  wire.add_gpus()->set_index(1);
  auto topo = convert::TopologyFromProto(wire);
  REQUIRE(topo.ok());
  CHECK(topo->GpuLink(0, 1).kind == topology::LinkKind::kSys);
  CHECK(topo->GpuLink(1, 1).kind == topology::LinkKind::kSelf);
}

TEST_CASE("malformed topologies are refused, naming the field and entry") {
  topology::NodeTopology topo(2, 1);
  v1::NodeInfo good;
  convert::TopologyToProto(topo, &good);

  auto message = [](const v1::NodeInfo& wire) {
    auto result = convert::TopologyFromProto(wire);
    REQUIRE_FALSE(result.ok());
    CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
    return std::string(result.status().message());
  };

  v1::NodeInfo wire = good;
  wire.mutable_topology()->mutable_gpu_links()->RemoveLast();
  CHECK_THAT(message(wire), Catch::Contains("gpu_links has 3 entries, want 2x2"));

  wire = good;
  wire.mutable_topology()->mutable_gpu_links(1)->set_kind(static_cast<v1::LinkKind>(42));
  CHECK_THAT(message(wire), Catch::Contains("gpu_links[0][1] has unknown link kind 42"));

  wire = good;
  wire.mutable_topology()->mutable_gpu_links(0)->set_kind(v1::LINK_KIND_SYS);
  CHECK_THAT(message(wire), Catch::Contains("gpu_links[0][0] must be SELF"));

  wire = good;
  wire.mutable_topology()->mutable_gpu_nic_links(1)->set_kind(v1::LINK_KIND_SELF);
  CHECK_THAT(message(wire), Catch::Contains("gpu_nic_links[1][0] is SELF between two devices"));

  wire = good;
  wire.mutable_topology()->mutable_gpu_links(1)->set_kind(v1::LINK_KIND_NVLINK);
  wire.mutable_topology()->mutable_gpu_links(1)->set_nvlinks(0);
  CHECK_THAT(message(wire), Catch::Contains("gpu_links[0][1] is NVLink with 0 links"));

  wire = good;
  wire.mutable_gpus(1)->set_index(0);
  CHECK_THAT(message(wire), Catch::Contains("gpus[1].index 0 is repeated"));

  wire = good;
  wire.mutable_topology()->add_gpu_p2p(gpusched::v1::P2P_STATUS_OK);
  CHECK_THAT(message(wire), Catch::Contains("gpu_p2p has 1 entries, want 2x2"));
}
