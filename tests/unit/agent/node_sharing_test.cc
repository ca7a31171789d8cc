// How an agent turns its share modes into what launches need, and which
// settings it refuses as it starts.
#include "agent/node_sharing.h"

#include <catch2/catch.hpp>

#include "common/io/logging/logging.h"
#include "test_util.h"

using namespace gpusched::agent;
using namespace gpusched::agent::testing;
namespace v1 = gpusched::v1;

namespace {

v1::NodeInfo Node(std::vector<v1::GpuShareMode> modes, std::vector<bool> mig = {}) {
  v1::NodeInfo node;
  node.set_name("node-a");
  for (size_t i = 0; i < modes.size(); ++i) {
    v1::GpuInfo& gpu = *node.add_gpus();
    gpu.set_index(static_cast<int>(i));
    gpu.set_uuid("GPU-" + std::to_string(i));
    gpu.set_share_mode(modes[i]);
    gpu.set_mig_enabled(i < mig.size() && mig[i]);
  }
  return node;
}

absl::StatusOr<GpuSharing> Start(const AgentOptions& options, const v1::NodeInfo& node,
                                 std::unique_ptr<MpsControlDaemon>* mps) {
  return StartGpuSharing(options, node, gpusched::GetLogger("test"), mps);
}

}  // namespace

TEST_CASE("an agent with MPS GPUs starts the MPS control daemon for them alone, and launches can ask it") {
  TempDir dir;
  AgentOptions options;
  options.log_dir = dir.path();
  options.mps_control_program = GPUSCHED_FAKE_MPS_CONTROL;
  std::unique_ptr<MpsControlDaemon> mps;
  auto sharing =
      Start(options, Node({v1::GPU_SHARE_MODE_EXCLUSIVE, v1::GPU_SHARE_MODE_MPS, v1::GPU_SHARE_MODE_TIMESLICE}), &mps);
  REQUIRE(sharing.ok());
  REQUIRE(mps != nullptr);
  CHECK(sharing->ModeOf(0) == v1::GPU_SHARE_MODE_EXCLUSIVE);
  CHECK(sharing->ModeOf(1) == v1::GPU_SHARE_MODE_MPS);
  CHECK(sharing->ModeOf(2) == v1::GPU_SHARE_MODE_TIMESLICE);
  CHECK(sharing->mps_pipe_dir == dir / "mps/pipe");
  CHECK(sharing->mps_ready().ok());
  mps->Stop();
  CHECK_THAT(ReadFile(dir / "mps/log/stand-in.log"), Catch::Contains("devices=GPU-1\n"));
  CHECK_FALSE(sharing->mps_ready().ok());
}

TEST_CASE("an agent without MPS GPUs runs no MPS control daemon") {
  TempDir dir;
  AgentOptions options;
  options.log_dir = dir.path();
  std::unique_ptr<MpsControlDaemon> mps;
  auto sharing = Start(options, Node({v1::GPU_SHARE_MODE_TIMESLICE}), &mps);
  REQUIRE(sharing.ok());
  CHECK(mps == nullptr);
  CHECK_FALSE(sharing->mps_ready);
}

TEST_CASE("share modes that do not fit the GPUs stop the agent with the reason") {
  TempDir dir;
  AgentOptions options;
  options.log_dir = dir.path();
  std::unique_ptr<MpsControlDaemon> mps;
  SECTION("a GPU index the node does not have") {
    options.gpu_share_modes[9] = v1::GPU_SHARE_MODE_MPS;
    auto sharing = Start(options, Node({v1::GPU_SHARE_MODE_EXCLUSIVE, v1::GPU_SHARE_MODE_EXCLUSIVE}), &mps);
    REQUIRE_FALSE(sharing.ok());
    CHECK(sharing.status().message() == "gpu_share_modes names GPU 9, but node-a has GPUs 0,1");
  }
  SECTION("a GPU in MIG mode shared another way") {
    auto sharing = Start(options, Node({v1::GPU_SHARE_MODE_MPS}, {true}), &mps);
    REQUIRE_FALSE(sharing.ok());
    CHECK(sharing.status().message() ==
          "GPU 0 of node-a is in MIG mode: it is shared as its MIG instances (gpu_share_modes \"0\" = \"mig\"), "
          "not mps");
  }
  SECTION("mig for a GPU not in MIG mode") {
    auto sharing = Start(options, Node({v1::GPU_SHARE_MODE_MIG}), &mps);
    REQUIRE_FALSE(sharing.ok());
    CHECK_THAT(std::string(sharing.status().message()),
               Catch::Contains("GPU 0 of node-a is set to be shared as MIG instances, but MIG mode is off"));
  }
}
