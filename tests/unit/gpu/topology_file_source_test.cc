#include "agent/gpu/topology_file_source.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <string>

using gpusched::agent::TopologyFileOptions;
using gpusched::agent::TopologyFileSource;
using gpusched::topology::LinkKind;

namespace {

TopologyFileOptions Options(const std::string& fixture) {
  TopologyFileOptions options;
  options.path = std::string(GPUSCHED_FIXTURES_DIR) + "/topo/" + fixture;
  options.node_name = "node-a";
  options.gpu_model = "NVIDIA H200";
  options.gpu_memory_mb = 143771;
  return options;
}

}  // namespace

TEST_CASE("a topo -m fixture becomes the node's GPUs, NICs and links") {
  auto node = TopologyFileSource(Options("hgx-h200-8gpu-12nic.txt")).Discover();
  REQUIRE(node.ok());
  REQUIRE(node->num_gpus() == 8);
  CHECK(node->num_nics() == 12);
  CHECK(node->GpuLink(0, 7).kind == LinkKind::kNvLink);
  CHECK(node->GpuLink(0, 7).nvlinks == 18);
  CHECK(node->nvswitch());
  for (const auto& gpu : node->gpus()) {
    CHECK(gpu.model == "NVIDIA H200");
    CHECK(gpu.memory_mb == 143771);
    CHECK(gpu.uuid == "GPU-file-node-a-" + std::to_string(gpu.index));
  }
}

TEST_CASE("a PCIe-only fixture is not NVSwitch") {
  auto node = TopologyFileSource(Options("pcie-8x-rtx4090.txt")).Discover();
  REQUIRE(node.ok());
  CHECK(node->num_gpus() == 8);
  CHECK_FALSE(node->nvswitch());
  CHECK(node->GpuLink(0, 1).kind == LinkKind::kSys);
}

TEST_CASE("DGX-1's hybrid cube mesh is point-to-point NVLink, not NVSwitch") {
  auto node = TopologyFileSource(Options("dgx1-v100.txt")).Discover();
  REQUIRE(node.ok());
  CHECK_FALSE(node->nvswitch());
}

TEST_CASE("a missing file is NotFound and a garbage file names the file and line") {
  auto missing = TopologyFileSource(Options("no-such-file.txt")).Discover();
  CHECK(missing.status().code() == absl::StatusCode::kNotFound);
  CHECK(std::string(missing.status().message()).find("no-such-file.txt") != std::string::npos);

  std::string path = "/tmp/gpusched-topo-garbage-" + std::to_string(getpid()) + ".txt";
  std::ofstream(path) << "this is not\nnvidia-smi output\n";
  TopologyFileOptions options = Options("x");
  options.path = path;
  auto garbage = TopologyFileSource(options).Discover();
  std::remove(path.c_str());
  CHECK(garbage.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(garbage.status().message()).find(path) != std::string::npos);
  CHECK(std::string(garbage.status().message()).find("line") != std::string::npos);
}

TEST_CASE("GPU memory must be given") {
  TopologyFileOptions options = Options("dgx-a100.txt");
  options.gpu_memory_mb = 0;
  CHECK(TopologyFileSource(options).Discover().status().code() == absl::StatusCode::kInvalidArgument);
}
