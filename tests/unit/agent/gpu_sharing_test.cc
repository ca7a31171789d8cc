#include "agent/runner/gpu_sharing.h"

#include <catch2/catch.hpp>
#include <string>

#include "absl/status/status.h"

using namespace gpusched::agent;
namespace v1 = gpusched::v1;
namespace topology = gpusched::topology;

namespace {

v1::LaunchJob ShareLaunch(std::vector<int> gpus, int milli, int64_t mem_mb, v1::GpuShareMode mode) {
  v1::LaunchJob launch;
  launch.set_job_id(9);
  for (int g : gpus) launch.add_gpu_indices(g);
  launch.set_gpu_share_milli(milli);
  launch.set_gpu_mem_limit_mb(mem_mb);
  launch.set_gpu_share_mode(mode);
  return launch;
}

topology::NodeTopology FourGpus() {
  topology::NodeTopology topo(4, 0);
  for (int i = 0; i < 4; ++i) {
    topo.gpus()[i].index = i;
    topo.gpus()[i].uuid = "GPU-000" + std::to_string(i);
  }
  return topo;
}

GpuSharing Mps(absl::Status ready = absl::OkStatus()) {
  GpuSharing sharing;
  sharing.modes = {{1, v1::GPU_SHARE_MODE_MPS}, {3, v1::GPU_SHARE_MODE_MPS}, {2, v1::GPU_SHARE_MODE_TIMESLICE}};
  sharing.mps_pipe_dir = "/var/lib/gpusched/logs/mps/pipe";
  sharing.mps_log_dir = "/var/lib/gpusched/logs/mps/log";
  sharing.mps_ready = [ready] { return ready; };
  return sharing;
}

}  // namespace

TEST_CASE("under MPS a job gets its share as the thread percentage, its memory limit per device, and GPUs by UUID") {
  const topology::NodeTopology topo = FourGpus();
  auto env = GpuShareEnvironment(ShareLaunch({3, 1}, 300, 10240, v1::GPU_SHARE_MODE_MPS), Mps(), &topo, "node-a");
  REQUIRE(env.ok());
  CHECK(env->at("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE") == "30");
  // Devices as the job numbers them: 0 is GPU 3, 1 is GPU 1.
  CHECK(env->at("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT") == "0=10240M,1=10240M");
  CHECK(env->at("CUDA_VISIBLE_DEVICES") == "GPU-0003,GPU-0001");
  CHECK(env->at("CUDA_MPS_PIPE_DIRECTORY") == "/var/lib/gpusched/logs/mps/pipe");
  CHECK(env->at("CUDA_MPS_LOG_DIRECTORY") == "/var/lib/gpusched/logs/mps/log");
  CHECK(env->at("GPUSCHED_GPU_SHARING") == "mps");
  CHECK(env->at("GPUSCHED_GPU_LIMITS_ENFORCED") == "1");
  CHECK(env->at("GPUSCHED_GPU_SHARE_PERCENT") == "30");
  CHECK(env->at("GPUSCHED_GPU_MEM_LIMIT_MB") == "10240");
}

TEST_CASE("under MPS a share below one percent still gets one percent of the threads, never zero (which is none)") {
  const topology::NodeTopology topo = FourGpus();
  auto env = GpuShareEnvironment(ShareLaunch({1}, 5, 100, v1::GPU_SHARE_MODE_MPS), Mps(), &topo, "node-a");
  REQUIRE(env.ok());
  CHECK(env->at("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE") == "1");
  auto rounded = GpuShareEnvironment(ShareLaunch({1}, 125, 100, v1::GPU_SHARE_MODE_MPS), Mps(), &topo, "node-a");
  REQUIRE(rounded.ok());
  CHECK(rounded->at("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE") == "12");
}

TEST_CASE("without UUIDs in the topology, MPS jobs name their GPUs by index") {
  auto env = GpuShareEnvironment(ShareLaunch({1}, 500, 100, v1::GPU_SHARE_MODE_MPS), Mps(), nullptr, "node-a");
  REQUIRE(env.ok());
  CHECK(env->at("CUDA_VISIBLE_DEVICES") == "1");
}

TEST_CASE("a time-sliced job is told its share and memory, and that nothing enforces them") {
  auto env = GpuShareEnvironment(ShareLaunch({2}, 125, 10240, v1::GPU_SHARE_MODE_TIMESLICE), Mps(), nullptr, "node-a");
  REQUIRE(env.ok());
  CHECK(env->at("GPUSCHED_GPU_SHARE_PERCENT") == "12.5");
  CHECK(env->at("GPUSCHED_GPU_MEM_LIMIT_MB") == "10240");
  CHECK(env->at("GPUSCHED_GPU_SHARING") == "timeslice");
  CHECK(env->at("GPUSCHED_GPU_LIMITS_ENFORCED") == "0");
  CHECK_FALSE(env->contains("CUDA_VISIBLE_DEVICES"));
  CHECK_FALSE(env->contains("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"));
  // From a daemon that predates the field: time-slicing, the only way then.
  auto old = GpuShareEnvironment(ShareLaunch({2}, 125, 10240, v1::GPU_SHARE_MODE_UNSPECIFIED), Mps(), nullptr, "n");
  REQUIRE(old.ok());
  CHECK(old->at("GPUSCHED_GPU_SHARING") == "timeslice");
}

TEST_CASE("a whole-GPU launch gets no share variables") {
  auto env = GpuShareEnvironment(ShareLaunch({0}, 0, 0, v1::GPU_SHARE_MODE_UNSPECIFIED), Mps(), nullptr, "node-a");
  REQUIRE(env.ok());
  CHECK(env->empty());
}

TEST_CASE("a share is refused on GPUs the node does not share the way it was placed, or while MPS is down") {
  SECTION("an exclusive GPU") {
    auto env = GpuShareEnvironment(ShareLaunch({0}, 300, 100, v1::GPU_SHARE_MODE_TIMESLICE), Mps(), nullptr, "node-a");
    REQUIRE_FALSE(env.ok());
    CHECK(env.status().message() ==
          "the job asks for 30% of GPU 0, but node-a does not share it (gpu_share_mode = "
          "exclusive)");
  }
  SECTION("placed for MPS on a time-sliced GPU: its limits would not be enforced") {
    auto env = GpuShareEnvironment(ShareLaunch({1, 2}, 300, 100, v1::GPU_SHARE_MODE_MPS), Mps(), nullptr, "node-a");
    REQUIRE_FALSE(env.ok());
    CHECK(env.status().message() ==
          "the job was placed on GPU 2 of node-a shared by mps, but the node shares it by timeslice (gpu_share_mode)");
  }
  SECTION("the MPS control daemon is not running") {
    auto env = GpuShareEnvironment(ShareLaunch({1}, 300, 100, v1::GPU_SHARE_MODE_MPS),
                                   Mps(absl::FailedPreconditionError("the MPS control daemon exited with status 1")),
                                   nullptr, "node-a");
    REQUIRE_FALSE(env.ok());
    CHECK(env.status().message() ==
          "the job's GPU limits cannot be enforced on node-a: the MPS control daemon exited with status 1");
  }
}
