#pragma once

#include <catch2/catch.hpp>

#include "agent/gpu/nvml_topology_source.h"

namespace gpusched::testing {

// What NVML discovery makes of the machine the fake libnvidia-ml scripts
// (GPUSCHED_FAKE_NVML_MACHINE); fails the test when discovery fails.
inline topology::NodeTopology DiscoverWithNvml(const agent::NvmlTopologyOptions& options) {
  auto source = agent::NvmlTopologySource::Open(options);
  INFO(source.status().ToString());
  REQUIRE(source.ok());
  auto topo = (*source)->Discover();
  INFO(topo.status().ToString());
  REQUIRE(topo.ok());
  return *std::move(topo);
}

}  // namespace gpusched::testing
