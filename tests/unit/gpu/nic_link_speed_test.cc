#include "agent/gpu/nic_link_speed.h"

#include <catch2/catch.hpp>

#include "tests/support/temp_dir.h"

using gpusched::agent::NetLinkSpeedGbps;
using gpusched::agent::RdmaLinkSpeedGbps;
using gpusched::testing::TempDir;

TEST_CASE("an RDMA device's speed is its fastest port's rate") {
  TempDir sys;
  sys.Write("class/infiniband/mlx5_0/ports/1/rate", "400 Gb/sec (4X NDR)\n");
  sys.Write("class/infiniband/mlx4_0/ports/1/rate", "56 Gb/sec (4X FDR)\n");
  sys.Write("class/infiniband/mlx4_0/ports/2/rate", "10 Gb/sec (4X SDR)\n");
  sys.Write("class/infiniband/odd_0/ports/1/rate", "fast\n");
  CHECK(RdmaLinkSpeedGbps(sys.path(), "mlx5_0") == 400);
  CHECK(RdmaLinkSpeedGbps(sys.path(), "mlx4_0") == 56);
  CHECK(RdmaLinkSpeedGbps(sys.path(), "odd_0") == 0);
  CHECK(RdmaLinkSpeedGbps(sys.path(), "missing_0") == 0);
}

TEST_CASE("a network interface's speed is in Mb/s and unknown while down") {
  TempDir sys;
  sys.Write("class/net/ens1f0/speed", "100000\n");
  sys.Write("class/net/eno1/speed", "25000\n");
  sys.Write("class/net/down0/speed", "-1\n");
  CHECK(NetLinkSpeedGbps(sys.path(), "ens1f0") == 100);
  CHECK(NetLinkSpeedGbps(sys.path(), "eno1") == 25);
  CHECK(NetLinkSpeedGbps(sys.path(), "down0") == 0);
  CHECK(NetLinkSpeedGbps(sys.path(), "missing0") == 0);
}
