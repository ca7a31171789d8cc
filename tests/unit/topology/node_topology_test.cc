#include "common/topology/node_topology.h"

#include <catch2/catch.hpp>

using namespace gpusched::topology;

TEST_CASE("a new topology is SYS everywhere but the diagonal") {
  NodeTopology t(3, 2);
  CHECK(t.num_gpus() == 3);
  CHECK(t.num_nics() == 2);
  CHECK(t.gpus()[2].index == 2);
  CHECK(t.GpuLink(1, 1).kind == LinkKind::kSelf);
  CHECK(t.GpuLink(0, 1).kind == LinkKind::kSys);
  CHECK(t.GpuNicLink(0, 1).kind == LinkKind::kSys);
  CHECK(t.NicLink(1, 1).kind == LinkKind::kSelf);
}

TEST_CASE("out-of-range indices read as SYS and never crash") {
  NodeTopology t(2, 1);
  CHECK(t.GpuLink(-1, 0).kind == LinkKind::kSys);
  CHECK(t.GpuLink(0, 2).kind == LinkKind::kSys);
  CHECK(t.GpuNicLink(0, 5).kind == LinkKind::kSys);
  t.SetGpuLink(9, 9, Link{LinkKind::kNvLink, 4});  // ignored
  CHECK(t.NicsClosestTo(7).empty());
  NodeTopology empty;
  CHECK(empty.NicsClosestTo(0).empty());
  CHECK_FALSE(empty.LooksLikeNvSwitch());
}

TEST_CASE("closest NICs are all those tied for the best class") {
  NodeTopology t(1, 3);
  t.SetGpuNicLink(0, 0, Link{LinkKind::kNode, 0});
  t.SetGpuNicLink(0, 1, Link{LinkKind::kPxb, 0});
  t.SetGpuNicLink(0, 2, Link{LinkKind::kPxb, 0});
  CHECK(t.NicsClosestTo(0) == std::vector<int>{1, 2});
  t.nics()[1].name = "NIC1";
  t.nics()[1].device = "mlx5_1";
  CHECK(t.FindNic("NIC1") == 1);
  CHECK(t.FindNic("mlx5_1") == 1);
  CHECK_FALSE(t.FindNic("mlx5_9").has_value());
}

TEST_CASE("the NVSwitch flag is the caller's; the heuristic only hints") {
  NodeTopology t(4, 0);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      if (i != j) t.SetGpuLink(i, j, Link{LinkKind::kNvLink, 12});
  CHECK_FALSE(t.nvswitch());
  CHECK(t.LooksLikeNvSwitch());
  t.set_nvswitch(true);
  CHECK(t.nvswitch());
  t.SetGpuLink(0, 1, Link{LinkKind::kNvLink, 2});
  CHECK_FALSE(t.LooksLikeNvSwitch());
}
