// MIG discovery through NVML, against the fake libnvidia-ml's a100-mig
// machine: two GPUs an operator partitioned, two left whole.
#include <catch2/catch.hpp>

#include "agent/gpu/nvml_mig_reader.h"
#include "tests/unit/gpu/nvml_discover.h"
#include "tests/unit/gpu/scoped_env.h"

using gpusched::agent::MigProfileFromName;
using gpusched::agent::NvmlTopologyOptions;
using gpusched::testing::ScopedEnv;
using gpusched::topology::MigDevice;
using gpusched::topology::NodeTopology;

namespace {

NodeTopology Discover(const std::string& library) {
  NvmlTopologyOptions options;
  options.nvml_library = library;
  options.host.hwloc_synthetic = "pack:2 numa:1 core:2 pu:1";
  options.host.sysfs_root = "/nonexistent";
  return gpusched::testing::DiscoverWithNvml(options);
}

}  // namespace

TEST_CASE("a GPU in MIG mode reports its MIG devices: index, UUID, profile, instance ids, memory, slices") {
  ScopedEnv machine("GPUSCHED_FAKE_NVML_MACHINE", "a100-mig");
  const NodeTopology topo = Discover(GPUSCHED_FAKE_NVML);
  REQUIRE(topo.num_gpus() == 4);
  const auto& split = topo.gpus()[0];
  CHECK(split.mig_enabled);
  REQUIRE(split.mig_devices.size() == 2);
  CHECK(split.mig_devices[1] == MigDevice{1, "MIG-3g40gb00-0000-4000-8000-000000000001", "3g.40gb", 2, 0, 40192, 3});
  const auto& sevenths = topo.gpus()[1];
  REQUIRE(sevenths.mig_devices.size() == 7);
  for (const MigDevice& d : sevenths.mig_devices) {
    CHECK(d.profile == "1g.10gb");
    CHECK(d.slices == 1);
    CHECK(d.memory_mb == 9728);
  }
  CHECK(sevenths.mig_devices[6].index == 6);
  CHECK_FALSE(topo.gpus()[2].mig_enabled);
  CHECK(topo.gpus()[2].mig_devices.empty());
}

TEST_CASE("MIG devices NVML cannot hand out are left out, and discovery goes on") {
  ScopedEnv machine("GPUSCHED_FAKE_NVML_MACHINE", "a100-mig");
  ScopedEnv fail("GPUSCHED_FAKE_NVML_FAIL", "nvmlDeviceGetMigDeviceHandleByIndex:0");
  const NodeTopology topo = Discover(GPUSCHED_FAKE_NVML);
  REQUIRE(topo.num_gpus() == 4);
  CHECK(topo.gpus()[0].mig_enabled);
  CHECK(topo.gpus()[0].mig_devices.empty());
  CHECK(topo.gpus()[1].mig_devices.size() == 7);
}

TEST_CASE("a MIG profile is read from the device's name") {
  CHECK(MigProfileFromName("NVIDIA A100-SXM4-80GB MIG 3g.40gb") == "3g.40gb");
  CHECK(MigProfileFromName("NVIDIA H100 80GB HBM3 MIG 1c.3g.40gb") == "1c.3g.40gb");
  CHECK(MigProfileFromName("NVIDIA H100 80GB HBM3") == "");
}
