#include "agent/runner/nccl_hints.h"

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "test_util.h"

using namespace gpusched::agent;
using gpusched::agent::testing::FixtureTopology;
namespace topology = gpusched::topology;
using topology::Link;
using topology::LinkKind;

namespace {

std::vector<std::string> Devices(const topology::NodeTopology& topo, const std::vector<int>& nics) {
  std::vector<std::string> out;
  for (int nic : nics) out.push_back(topo.nics()[nic].device);
  return out;
}

using Env = std::map<std::string, std::string>;

}  // namespace

TEST_CASE("NIC hints on real machines: each GPU's own rail, in GPU order, never a storage NIC") {
  struct Case {
    const char* fixture;
    std::vector<int> gpus;
    std::vector<std::string> nics;
  };
  auto c = GENERATE(values<Case>({
      // HGX H200: one NIC per GPU behind its PCIe switch (PXB); the dual-port
      // pairs NIC1/2 and NIC7/8 are only NODE from every GPU.
      {"hgx-h200-8gpu-12nic.txt", {0}, {"mlx5_0"}},
      {"hgx-h200-8gpu-12nic.txt", {0, 1}, {"mlx5_0", "mlx5_3"}},
      {"hgx-h200-8gpu-12nic.txt", {1, 0}, {"mlx5_3", "mlx5_0"}},  // ring order is kept
      {"hgx-h200-8gpu-12nic.txt", {5}, {"mlx5_9"}},
      {"hgx-h200-8gpu-12nic.txt",
       {0, 1, 2, 3, 4, 5, 6, 7},
       {"mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11"}},
      // DGX A100: two NICs per GPU pair, both PXB; mlx5_4/5 and 10/11 are the
      // storage NICs, SYS from every GPU.
      {"dgx-a100.txt", {0}, {"mlx5_0", "mlx5_1"}},
      {"dgx-a100.txt", {0, 1}, {"mlx5_0", "mlx5_1"}},
      {"dgx-a100.txt", {6, 2}, {"mlx5_8", "mlx5_9", "mlx5_2", "mlx5_3"}},
      // DGX-1: PIX beats PHB; the columns are not in device order.
      {"dgx1-v100.txt", {0}, {"mlx5_0"}},
      {"dgx1-v100.txt", {0, 2}, {"mlx5_0", "mlx5_1"}},
      {"dgx1-v100.txt", {7, 4}, {"mlx5_3", "mlx5_2"}},
  }));
  INFO(c.fixture << " GPUs " << absl::StrJoin(c.gpus, ","));
  const topology::NodeTopology topo = FixtureTopology(c.fixture);
  CHECK(Devices(topo, NicsNearGpus(topo, c.gpus)) == c.nics);
  // "=": exact names, or NCCL would read mlx5_1 as mlx5_1* and take mlx5_10 and mlx5_11 too.
  CHECK(NcclNetworkEnv(topo, c.gpus) == Env{{"NCCL_IB_HCA", "=" + absl::StrJoin(c.nics, ",")}});
}

TEST_CASE("NIC hints: a NIC across the CPU interconnect only when no GPU has a nearer one") {
  topology::NodeTopology topo(2, 3);
  topo.nics()[0].device = "mlx5_0";
  topo.nics()[1].device = "mlx5_1";
  topo.nics()[2].device = "mlx5_2";
  topo.SetGpuNicLink(0, 0, Link{LinkKind::kPix, 0});
  topo.SetGpuNicLink(0, 1, Link{LinkKind::kNode, 0});
  // GPU 1 sees every NIC as SYS.
  CHECK(NicsNearGpus(topo, {0, 1}) == std::vector<int>{0});
  CHECK(NicsNearGpus(topo, {1, 0}) == std::vector<int>{0});
  CHECK(NicsNearGpus(topo, {1}) == std::vector<int>{0, 1, 2});
  topo.SetGpuNicLink(1, 2, Link{LinkKind::kNode, 0});
  CHECK(NicsNearGpus(topo, {0, 1}) == std::vector<int>{0, 2});
}

TEST_CASE("NIC hints: Ethernet NICs go to NCCL_SOCKET_IFNAME, and RDMA wins over them") {
  topology::NodeTopology topo(2, 2);
  topo.nics()[0].device = "ens1f0np0";
  topo.nics()[1].device = "mlx5_1";
  topo.SetGpuNicLink(0, 0, Link{LinkKind::kPxb, 0});
  topo.SetGpuNicLink(1, 1, Link{LinkKind::kPxb, 0});
  CHECK(NcclNetworkEnv(topo, {0}) == Env{{"NCCL_SOCKET_IFNAME", "=ens1f0np0"}});
  CHECK(NcclNetworkEnv(topo, {1}) == Env{{"NCCL_IB_HCA", "=mlx5_1"}});
  CHECK(NcclNetworkEnv(topo, {0, 1}) == Env{{"NCCL_IB_HCA", "=mlx5_1"}});
}

TEST_CASE("NIC hints: nothing when no usable NIC is known") {
  // Fake GPUs: no NICs at all.
  CHECK(NcclNetworkEnv(topology::NodeTopology(4, 0), {0, 1}).empty());
  // A topo -m without a NIC Legend names its NICs NIC0, NIC1: not devices.
  topology::NodeTopology unnamed(1, 1);
  unnamed.nics()[0].name = "NIC0";
  unnamed.SetGpuNicLink(0, 0, Link{LinkKind::kPix, 0});
  CHECK(NcclNetworkEnv(unnamed, {0}).empty());
  // CPU-only jobs, and GPU indices the topology does not know.
  const topology::NodeTopology h200 = FixtureTopology("hgx-h200-8gpu-12nic.txt");
  CHECK(NcclNetworkEnv(h200, {}).empty());
  CHECK(NcclNetworkEnv(h200, {8, -1}).empty());
}

TEST_CASE("NIC hints: RDMA devices are told from network interfaces by their driver's naming") {
  for (const char* rdma : {"mlx5_0", "mlx5_11", "mlx4_0", "ibp12s0", "rocep65s0f0", "hfi1_0", "efa_0", "bnxt_re0",
                           "irdma0", "qedr0", "erdma_0", "rxe0", "siw0"}) {
    INFO(rdma);
    CHECK(IsRdmaDevice(rdma));
  }
  for (const char* netdev : {"eth0", "ens1f0np0", "enp65s0f0", "eno1", "bond0", "NIC0", ""}) {
    INFO(netdev);
    CHECK_FALSE(IsRdmaDevice(netdev));
  }
}
