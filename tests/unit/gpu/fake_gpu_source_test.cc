#include "agent/gpu/fake_gpu_source.h"

#include <catch2/catch.hpp>

using gpusched::agent::FakeGpuSource;

TEST_CASE("fake GPUs have indices 0..N-1 and UUIDs unique across nodes") {
  FakeGpuSource source("node-a", 3, "NVIDIA H100 80GB HBM3", 81559);
  auto node = source.Discover();
  REQUIRE(node.ok());
  REQUIRE(node->num_gpus() == 3);
  for (int i = 0; i < 3; ++i) {
    CHECK(node->gpus()[i].index == i);
    CHECK(node->gpus()[i].uuid == "GPU-fake-node-a-" + std::to_string(i));
    CHECK(node->gpus()[i].model == "NVIDIA H100 80GB HBM3");
    CHECK(node->gpus()[i].memory_mb == 81559);
  }
  auto other = FakeGpuSource("node-b", 1, "m", 1).Discover();
  REQUIRE(other.ok());
  CHECK(other->gpus()[0].uuid != node->gpus()[0].uuid);
}

TEST_CASE("no fake GPUs is a CPU-only node; a negative count is an error") {
  auto none = FakeGpuSource("n", 0, "m", 1).Discover();
  REQUIRE(none.ok());
  CHECK(none->num_gpus() == 0);
  auto bad = FakeGpuSource("n", -1, "m", 1).Discover();
  CHECK(bad.status().code() == absl::StatusCode::kInvalidArgument);
}
