#include "agent/gpu/nvlink_matrix.h"

#include <catch2/catch.hpp>

using gpusched::agent::BuildNvLinkMatrix;
using gpusched::agent::GpuNvLinks;
using gpusched::agent::NvLinkEnd;
using gpusched::agent::NvLinkPeer;
using gpusched::agent::PciAddress;

namespace {

PciAddress Bus(uint32_t bus) { return PciAddress{0, bus, 0, 0}; }

GpuNvLinks Gpu(uint32_t bus) {
  GpuNvLinks g;
  g.address = Bus(bus);
  return g;
}

void Add(GpuNvLinks& g, int n, NvLinkPeer peer, std::optional<PciAddress> remote) {
  for (int k = 0; k < n; ++k) g.links.push_back(NvLinkEnd{peer, remote});
}

}  // namespace

TEST_CASE("point-to-point links count towards the GPU at the far end") {
  std::vector<GpuNvLinks> gpus = {Gpu(1), Gpu(2), Gpu(3)};
  Add(gpus[0], 2, NvLinkPeer::kGpu, Bus(2));
  Add(gpus[1], 2, NvLinkPeer::kGpu, Bus(1));
  Add(gpus[1], 1, NvLinkPeer::kGpu, Bus(3));
  Add(gpus[2], 1, NvLinkPeer::kGpu, Bus(2));
  Add(gpus[2], 1, NvLinkPeer::kGpu, Bus(9));  // a GPU of another node? not ours
  auto m = BuildNvLinkMatrix(gpus);
  CHECK(m.at(0, 1) == 2);
  CHECK(m.at(1, 0) == 2);
  CHECK(m.at(1, 2) == 1);
  CHECK(m.at(0, 2) == 0);
  CHECK(m.at(0, 0) == 0);
  CHECK_FALSE(m.nvswitch);
}

TEST_CASE("without the remote type, a link whose far end is one of our GPUs is point to point") {
  std::vector<GpuNvLinks> gpus = {Gpu(1), Gpu(2)};
  Add(gpus[0], 4, NvLinkPeer::kUnknown, Bus(2));
  Add(gpus[1], 4, NvLinkPeer::kUnknown, Bus(1));
  auto m = BuildNvLinkMatrix(gpus);
  CHECK(m.at(0, 1) == 4);
  CHECK(m.at(1, 0) == 4);
}

TEST_CASE("GPUs on the same NVSwitches reach each other with all their switch links") {
  std::vector<GpuNvLinks> gpus = {Gpu(1), Gpu(2), Gpu(3)};
  for (auto& g : gpus) {
    Add(g, 9, NvLinkPeer::kSwitch, Bus(0x70));
    Add(g, 9, NvLinkPeer::kSwitch, Bus(0x71));
  }
  gpus[2].links.pop_back();  // one link down on GPU 2
  auto m = BuildNvLinkMatrix(gpus);
  CHECK(m.nvswitch);
  CHECK(m.at(0, 1) == 18);
  CHECK(m.at(0, 2) == 17);  // the narrower side decides, and both ways agree
  CHECK(m.at(2, 0) == 17);
}

TEST_CASE("disjoint switches or different fabric partitions do not connect") {
  std::vector<GpuNvLinks> gpus = {Gpu(1), Gpu(2), Gpu(3), Gpu(4)};
  Add(gpus[0], 6, NvLinkPeer::kSwitch, Bus(0x70));
  Add(gpus[1], 6, NvLinkPeer::kSwitch, Bus(0x80));
  Add(gpus[2], 6, NvLinkPeer::kSwitch, std::nullopt);  // switch outside the node
  Add(gpus[3], 6, NvLinkPeer::kSwitch, std::nullopt);
  gpus[2].fabric = "c/1";
  gpus[3].fabric = "c/2";
  auto m = BuildNvLinkMatrix(gpus);
  CHECK(m.at(0, 1) == 0);
  CHECK(m.at(2, 3) == 0);
  gpus[3].fabric = "c/1";
  CHECK(BuildNvLinkMatrix(gpus).at(2, 3) == 6);
}

TEST_CASE("links to other devices count for nothing") {
  std::vector<GpuNvLinks> gpus = {Gpu(1), Gpu(2)};
  Add(gpus[0], 3, NvLinkPeer::kOther, Bus(0x50));  // e.g. a POWER9 CPU
  Add(gpus[1], 3, NvLinkPeer::kOther, Bus(0x50));
  auto m = BuildNvLinkMatrix(gpus);
  CHECK(m.at(0, 1) == 0);
  CHECK_FALSE(m.nvswitch);
  CHECK(BuildNvLinkMatrix({}).num_gpus == 0);
}
