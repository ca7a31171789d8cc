// What PrepareLaunch adds from the node's topology: NCCL hints, NCCL_TOPO_FILE,
// CPU binding, and the GPU order every rank sees.
#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "agent/runner/launch_plan.h"
#include "test_util.h"

using namespace gpusched::agent;
using namespace gpusched::agent::testing;
namespace topology = gpusched::topology;
namespace v1 = gpusched::v1;

namespace {

LaunchContext NoTopology(const TempDir& dir) {
  LaunchContext c;
  c.node_name = "node-a";
  c.log_dir = dir.path();
  c.advertise_address = "127.0.0.1";
  c.agent_env = {{"PATH", "/usr/bin:/bin"}};
  return c;
}

LaunchContext Context(const TempDir& dir, const topology::NodeTopology& topo) {
  LaunchContext c = NoTopology(dir);
  c.topology = &topo;
  // A slice of both sockets of the H200 fixture.
  c.agent_cpus = {0, 1, 60, 61};
  return c;
}

std::map<std::string, std::string> EnvOf(const ProcessSpec& process) {
  std::map<std::string, std::string> env;
  for (const std::string& entry : process.env) {
    auto eq = entry.find('=');
    env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  return env;
}

}  // namespace

TEST_CASE("launch hints: every rank sees the node's GPUs in ring order and the NICs of all of them") {
  TempDir dir;
  const topology::NodeTopology h200 = FixtureTopology("hgx-h200-8gpu-12nic.txt");
  // The daemon's ring order, not sorted: GPU 4 first.
  auto plan = PrepareLaunch(MakeLaunch(1, {"true"}, {4, 0, 1}), Context(dir, h200));
  REQUIRE(plan.ok());
  REQUIRE(plan->processes.size() == 3);
  const std::vector<std::vector<int>> cpus = {{60, 61}, {0, 1}, {0, 1}};
  for (int local = 0; local < 3; ++local) {
    INFO("local rank " << local);
    auto env = EnvOf(plan->processes[local]);
    CHECK(env.at("CUDA_VISIBLE_DEVICES") == "4,0,1");
    CHECK(env.at("CUDA_DEVICE_ORDER") == "PCI_BUS_ID");
    CHECK(env.at("LOCAL_RANK") == std::to_string(local));
    // One list for the whole node (see PrepareLaunch), in the GPUs' order.
    CHECK(env.at("NCCL_IB_HCA") == "=mlx5_6,mlx5_0,mlx5_3");
    CHECK_FALSE(env.contains("NCCL_SOCKET_IFNAME"));
    CHECK_FALSE(env.contains("NCCL_TOPO_FILE"));
    // Local rank i drives CUDA device i, GPU gpu_indices[i], and is bound near it.
    CHECK(plan->processes[local].cpus == cpus[local]);
    CHECK(env.at("GPUSCHED_CPU_BIND") == (local == 0 ? "60-61" : "0-1"));
  }
  CHECK(plan->cpu_bind_note.empty());
}

TEST_CASE("launch hints: the job's own NCCL settings win, the scheduler's binding report does not yield") {
  TempDir dir;
  const topology::NodeTopology h200 = FixtureTopology("hgx-h200-8gpu-12nic.txt");
  LaunchContext context = Context(dir, h200);
  context.nccl_topo_file = dir / "nccl-topo.xml";

  auto defaults = PrepareLaunch(MakeLaunch(1, {"true"}, {0}), context);
  REQUIRE(defaults.ok());
  CHECK(EnvOf(defaults->processes[0]).at("NCCL_TOPO_FILE") == dir / "nccl-topo.xml");

  v1::LaunchJob launch = MakeLaunch(2, {"true"}, {0});
  auto& env = *launch.mutable_spec()->mutable_env();
  env["NCCL_IB_HCA"] = "mlx5_7";
  env["NCCL_TOPO_FILE"] = "/home/alice/my-topo.xml";
  env["CUDA_DEVICE_ORDER"] = "FASTEST_FIRST";
  env["GPUSCHED_CPU_BIND"] = "everything";
  auto plan = PrepareLaunch(launch, context);
  REQUIRE(plan.ok());
  auto got = EnvOf(plan->processes[0]);
  CHECK(got.at("NCCL_IB_HCA") == "mlx5_7");
  CHECK(got.at("NCCL_TOPO_FILE") == "/home/alice/my-topo.xml");
  CHECK(got.at("CUDA_DEVICE_ORDER") == "FASTEST_FIRST");
  CHECK(got.at("GPUSCHED_CPU_BIND") == "0-1");
  // Even an empty value is the job's choice (NCCL's own default).
  env["NCCL_IB_HCA"] = "";
  plan = PrepareLaunch(launch, context);
  REQUIRE(plan.ok());
  CHECK(EnvOf(plan->processes[0]).at("NCCL_IB_HCA").empty());
}

TEST_CASE("launch hints: unbound processes say why once, and report an empty binding") {
  TempDir dir;
  const topology::NodeTopology h200 = FixtureTopology("hgx-h200-8gpu-12nic.txt");
  LaunchContext context = Context(dir, h200);
  context.agent_cpus = {0, 1};  // this machine: NUMA node 1's CPUs are not here

  auto plan = PrepareLaunch(MakeLaunch(1, {"true"}, {0, 4}), context);
  REQUIRE(plan.ok());
  CHECK(plan->processes[0].cpus == std::vector<int>{0, 1});
  CHECK(plan->processes[1].cpus.empty());
  CHECK(EnvOf(plan->processes[1]).at("GPUSCHED_CPU_BIND").empty());
  CHECK_THAT(plan->cpu_bind_note, Catch::Contains("GPU(s) 4"));

  // Binding turned off: nothing bound, nothing to explain.
  context.cpu_bind = CpuBindMode::kNone;
  plan = PrepareLaunch(MakeLaunch(2, {"true"}, {0, 4}), context);
  REQUIRE(plan.ok());
  CHECK(plan->processes[0].cpus.empty());
  CHECK(EnvOf(plan->processes[0]).at("GPUSCHED_CPU_BIND").empty());
  CHECK(plan->cpu_bind_note.empty());
  // The NIC hint does not depend on binding.
  CHECK(EnvOf(plan->processes[0]).at("NCCL_IB_HCA") == "=mlx5_0,mlx5_6");
}

TEST_CASE("launch hints: no topology, no hints") {
  TempDir dir;
  auto plan = PrepareLaunch(MakeLaunch(1, {"true"}, {0, 1}), NoTopology(dir));
  REQUIRE(plan.ok());
  auto env = EnvOf(plan->processes[0]);
  CHECK_FALSE(env.contains("NCCL_IB_HCA"));
  CHECK_FALSE(env.contains("NCCL_SOCKET_IFNAME"));
  CHECK(env.at("GPUSCHED_CPU_BIND").empty());
  CHECK(plan->processes[0].cpus.empty());
}
