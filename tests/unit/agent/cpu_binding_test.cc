#include "agent/runner/cpu_binding.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/runner/job_runner.h"
#include "agent/runner/nccl_hints.h"
#include "agent/runner/process_spawner.h"
#include "agent/topology_discovery.h"
#include "common/topology/cpu_list.h"
#include "test_util.h"
#include "tests/skip.h"

using namespace gpusched::agent;
using namespace gpusched::agent::testing;
namespace topology = gpusched::topology;
namespace v1 = gpusched::v1;
using Kind = v1::JobUpdate;

namespace {

std::vector<int> Range(int first, int last) {
  std::vector<int> out;
  for (int i = first; i <= last; ++i) out.push_back(i);
  return out;
}

std::vector<int> Concat(std::vector<int> a, const std::vector<int>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::vector<int> Intersect(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

std::vector<int> AgentCpus() {
  auto cpus = AllowedCpusOfThisThread();
  REQUIRE(cpus.ok());
  REQUIRE_FALSE(cpus->empty());
  return *cpus;
}

// Two GPUs on two NUMA nodes made of the CPUs this test may use: the first
// CPU, and the others (the first again on a one-CPU machine).
topology::NodeTopology ThisMachine(const std::vector<int>& cpus) {
  topology::NodeTopology topo(2, 0);
  topo.numa_nodes() = {
      topology::NumaNode{0, {cpus.front()}, 0},
      topology::NumaNode{
          1, cpus.size() > 1 ? std::vector<int>(cpus.begin() + 1, cpus.end()) : std::vector<int>{cpus.front()}, 0}};
  topo.gpus()[0].numa_node = 0;
  topo.gpus()[1].numa_node = 1;
  return topo;
}

JobRunnerOptions Options(const TempDir& dir, topology::NodeTopology topo) {
  JobRunnerOptions o = RunnerOptions(dir);
  o.topology = std::move(topo);
  return o;
}

// What the kernel says the process may run on, as the job itself sees it.
constexpr char kReport[] = "grep Cpus_allowed_list /proc/self/status; echo \"bind=[$GPUSCHED_CPU_BIND]\"";

std::string Expected(const std::vector<int>& cpus, bool bound) {
  return absl::StrCat("Cpus_allowed_list:\t", topology::FormatCpuList(cpus), "\nbind=[",
                      bound ? topology::FormatCpuList(cpus) : "", "]\n");
}

std::string RunAndRead(JobRunner& runner, UpdateRecorder& updates, const TempDir& dir, v1::LaunchJob launch, int rank) {
  const uint64_t id = launch.job_id();
  runner.Launch(launch);
  auto exited = updates.WaitFor(id, Kind::KIND_EXITED);
  REQUIRE(exited);
  REQUIRE(exited->exit_code() == 0);
  return ReadFile(dir / absl::StrCat("job-", id, "/rank-", rank, ".log"));
}

}  // namespace

TEST_CASE("CPU binding: a GPU's NUMA node, else its CPU affinity, within the agent's CPUs") {
  const topology::NodeTopology h200 = FixtureTopology("hgx-h200-8gpu-12nic.txt");
  const std::vector<int> numa0 = Concat(Range(0, 55), Range(112, 167));
  const std::vector<int> numa1 = Concat(Range(56, 111), Range(168, 223));
  const std::vector<int> all = Range(0, 223);
  CHECK(GpuLocalCpus(h200, 0) == numa0);
  CHECK(GpuLocalCpus(h200, 7) == numa1);

  CHECK(ChooseCpuBinding(h200, {0}, all).cpus == numa0);
  CHECK(ChooseCpuBinding(h200, {5}, all).cpus == numa1);
  CHECK(ChooseCpuBinding(h200, {0, 4}, all).cpus == all);  // a per-node process: the union
  // The agent confined to part of the machine (cgroup, taskset): only that part.
  CHECK(ChooseCpuBinding(h200, {0}, {3, 60, 120}).cpus == std::vector<int>{3, 120});

  // This fixture on a two-CPU machine: NUMA node 0 overlaps it, node 1 does not.
  CpuBinding near = ChooseCpuBinding(h200, {0}, {0, 1});
  CHECK(near.cpus == std::vector<int>{0, 1});
  CHECK(near.not_bound_reason.empty());
  CpuBinding far = ChooseCpuBinding(h200, {4}, {0, 1});
  CHECK(far.cpus.empty());
  CHECK_THAT(far.not_bound_reason, Catch::Contains("56-111,168-223") && Catch::Contains("(0-1)"));
  CHECK(ChooseCpuBinding(h200, {0, 4}, {0, 1}).cpus == std::vector<int>{0, 1});

  // DGX-1's topo -m has no NUMA column: the GPU's CPU affinity serves.
  const topology::NodeTopology dgx1 = FixtureTopology("dgx1-v100.txt");
  CHECK(ChooseCpuBinding(dgx1, {5}, Range(0, 79)).cpus == Concat(Range(20, 39), Range(60, 79)));
}

TEST_CASE("CPU binding: none when there is nothing to bind to") {
  const topology::NodeTopology h200 = FixtureTopology("hgx-h200-8gpu-12nic.txt");
  // A CPU-only process: nothing to be near, nothing to say.
  CpuBinding cpu_only = ChooseCpuBinding(h200, {}, {0, 1});
  CHECK(cpu_only.cpus.empty());
  CHECK(cpu_only.not_bound_reason.empty());
  // Fake GPUs: no NUMA, no affinity.
  CpuBinding fake = ChooseCpuBinding(topology::NodeTopology(2, 0), {1}, {0, 1});
  CHECK(fake.cpus.empty());
  CHECK_THAT(fake.not_bound_reason, Catch::Contains("GPU 1"));
  // One GPU of a per-node process unknown: binding to the others' CPUs would
  // starve it, so none.
  CHECK(ChooseCpuBinding(h200, {0, 9}, {0, 1}).cpus.empty());
}

TEST_CASE("CPU binding: the runner's processes run on their GPU's NUMA node") {
  TempDir dir;
  UpdateRecorder updates;
  const std::vector<int> cpus = AgentCpus();
  const topology::NodeTopology topo = ThisMachine(cpus);
  JobRunner runner(Options(dir, topo), updates.Callback());

  // Per GPU: rank 0 drives GPU 1 (the launch's first GPU), rank 1 GPU 0.
  const std::vector<int> node1 = topo.numa_nodes()[1].cpus;
  const std::vector<int> node0 = topo.numa_nodes()[0].cpus;
  CHECK(RunAndRead(runner, updates, dir, MakeShellLaunch(1, kReport, {1, 0}), 0) == Expected(node1, true));
  CHECK(ReadFile(dir / "job-1/rank-1.log") == Expected(node0, true));

  // Per node: one process near every GPU of the node.
  v1::LaunchJob per_node = MakeShellLaunch(2, kReport, {0, 1});
  per_node.mutable_spec()->set_launch_mode(v1::LAUNCH_MODE_PER_NODE);
  CHECK(RunAndRead(runner, updates, dir, per_node, 0) == Expected(cpus, true));

  // A CPU-only job keeps the agent's CPUs.
  CHECK(RunAndRead(runner, updates, dir, MakeShellLaunch(3, kReport), 0) == Expected(cpus, false));
}

TEST_CASE("CPU binding: a fixture topology binds only where it overlaps this machine") {
  TempDir dir;
  UpdateRecorder updates;
  const std::vector<int> cpus = AgentCpus();
  const topology::NodeTopology h200 = FixtureTopology("hgx-h200-8gpu-12nic.txt");
  JobRunner runner(Options(dir, h200), updates.Callback());
  // On a two-CPU machine GPU 0's node (0-55,...) overlaps it and GPU 4's
  // (56-111,...) does not; on a bigger one both may.
  for (int gpu : {0, 4}) {
    INFO("GPU " << gpu);
    const uint64_t id = 10 + gpu;
    const std::vector<int> expected = Intersect(GpuLocalCpus(h200, gpu), cpus);
    const std::string log = RunAndRead(runner, updates, dir, MakeShellLaunch(id, kReport, {gpu}), 0);
    CHECK(log == (expected.empty() ? Expected(cpus, false) : Expected(expected, true)));
  }
}

TEST_CASE("CPU binding: --cpu-bind none leaves every process on the agent's CPUs") {
  TempDir dir;
  UpdateRecorder updates;
  const std::vector<int> cpus = AgentCpus();
  JobRunnerOptions options = Options(dir, ThisMachine(cpus));
  options.cpu_bind = CpuBindMode::kNone;
  JobRunner runner(options, updates.Callback());
  CHECK(RunAndRead(runner, updates, dir, MakeShellLaunch(1, kReport, {1, 0}), 0) == Expected(cpus, false));
}

TEST_CASE("CPU binding: a binding the kernel refuses fails the launch, saying so") {
  TempDir dir;
  ProcessSpec spec;
  spec.executable = "/bin/true";
  spec.argv = {"true"};
  spec.workdir = dir.path();
  spec.log_path = dir / "log";
  spec.cpus = {65000};  // no such CPU online
  auto pid = SpawnProcess(spec);
  REQUIRE_FALSE(pid.ok());
  CHECK(pid.status().message() ==
        "binding to CPUs 65000: Invalid argument (the agent's --cpu-bind none turns binding off)");
}

// The real thing where there is one: NVML's topology of this node, its GPU 0,
// and a process bound near it. Nodes without the driver skip it.
TEST_CASE("CPU binding: on a node with NVML, a job runs near its GPU") {
  AgentOptions agent;
  agent.node_name = "nvml-node";
  agent.gpu_source = GpuSource::kNvml;
  auto discovered = DiscoverTopology(agent);
  if (!discovered.ok() || discovered->topology.num_gpus() == 0) {
    GPUSCHED_SKIP("no NVML GPUs here: " << (discovered.ok() ? "none found" : discovered.status().ToString()));
  }
  const topology::NodeTopology& topo = discovered->topology;
  const int gpu = topo.gpus()[0].index;
  const std::vector<int> cpus = AgentCpus();
  const std::vector<int> local = GpuLocalCpus(topo, gpu);
  const std::vector<int> expected = Intersect(local, cpus);
  const auto nccl = NcclNetworkEnv(topo, {gpu});
  WARN("GPU " << gpu << " NUMA node " << topo.gpus()[0].numa_node << ", near CPUs " << topology::FormatCpuList(local)
              << ", agent CPUs " << topology::FormatCpuList(cpus) << ", " << topo.num_nics() << " NICs, NCCL hint "
              << (nccl.empty() ? "none" : nccl.begin()->first + "=" + nccl.begin()->second));

  TempDir dir;
  UpdateRecorder updates;
  JobRunner runner(Options(dir, topo), updates.Callback());
  const std::string log = RunAndRead(runner, updates, dir, MakeShellLaunch(1, kReport, {gpu}), 0);
  CHECK(log == (expected.empty() ? Expected(cpus, false) : Expected(expected, true)));
}
