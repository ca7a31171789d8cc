// The workload-inflation experiment: what arrives, what is measured, what
// the placement log says, and that no policy ever oversubscribes a node.
#include "daemon/sim/inflation.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "daemon/sim/sharing_command.h"
#include "tests/skip.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/sim/read_file.h"

using namespace gpusched::sim;
using gpusched::core::sharing::PackingPolicy;
using gpusched::sim::testing::ReadFile;

namespace {

const std::string kOpenb = std::string(GPUSCHED_TRACES_DIR) + "/alibaba-openb";
constexpr PackingPolicy kPolicies[] = {PackingPolicy::kRandom, PackingPolicy::kBestFit,  PackingPolicy::kSpread,
                                       PackingPolicy::kFgd,    PackingPolicy::kFgdExact, PackingPolicy::kFillFgd};

// The openb node list and default pod list (the caller skips where the
// traces are missing).
struct OpenbDefault {
  std::vector<OpenbNode> nodes;
  std::vector<OpenbPod> pods;
};
OpenbDefault LoadOpenbDefault() {
  auto nodes = LoadOpenbNodes(kOpenb + "/openb_node_list_gpu_node.csv");
  auto pods = LoadOpenbPods(kOpenb + "/openb_pod_list_default.csv");
  REQUIRE(nodes.ok());
  REQUIRE(pods.ok());
  return {*std::move(nodes), *std::move(pods)};
}

OpenbNode Node(const std::string& name, int gpus, int64_t cpu = 64000, const std::string& model = "T4") {
  OpenbNode n;
  n.name = name;
  n.cpu_milli = cpu;
  n.memory_mib = 262144;
  n.gpus = gpus;
  n.model = model;
  return n;
}

OpenbPod Pod(const std::string& name, int num_gpu, int gpu_milli, int64_t cpu = 1000) {
  OpenbPod p;
  p.name = name;
  p.cpu_milli = cpu;
  p.memory_mib = 1024;
  p.num_gpu = num_gpu;
  p.gpu_milli = gpu_milli;
  return p;
}

}  // namespace

TEST_CASE("inflation: pods arrive until their request reaches the target, and the measure is what was left") {
  auto e = InflationExperiment::Make({Node("a", 2)}, {Pod("whole", 1, 1000)});
  REQUIRE(e.ok());
  InflationOptions options;
  options.inflate_to = 1.5;
  options.measure_at = 1.0;
  const InflationRun run = e->Sampled(PackingPolicy::kFgd, 42, options);
  // Two GPUs: the third whole-GPU pod brings the request to 150% and is rejected.
  REQUIRE(run.arrivals.size() == 3);
  CHECK(run.arrivals[0].node == 0);
  CHECK(run.arrivals[1].node == 0);
  CHECK(run.arrivals[2].node == -1);
  CHECK(run.arrivals[0].gpus == std::vector<int>{0});
  CHECK(run.arrivals[1].gpus == std::vector<int>{1});
  CHECK(run.arrivals[2].pod == "whole#3");
  CHECK(run.arrivals[2].source == "whole");
  REQUIRE(run.unallocated_at_measure.has_value());
  CHECK(*run.unallocated_at_measure == 0);
  CHECK(run.arrivals_at_measure == 2);
  CHECK(run.rejected_at_measure == 0);
  CHECK(run.unallocated_at_end == 0);
  CHECK(run.arrived_at_end == Approx(1.5));
}

TEST_CASE("inflation: a fraction left on a GPU no later task fits is what stays unallocated") {
  // One GPU; 0.7 arrives first, then the 0.5s can never fit beside it.
  auto e = InflationExperiment::Make({Node("a", 1)}, {Pod("big", 1, 700)});
  REQUIRE(e.ok());
  auto run = e->Replayed(PackingPolicy::kBestFit, {Pod("big", 1, 700), Pod("half", 1, 500), Pod("half2", 1, 500)},
                         InflationOptions{});
  REQUIRE(run.ok());
  CHECK(run->arrivals[1].node == -1);
  REQUIRE(run->unallocated_at_measure.has_value());
  CHECK(*run->unallocated_at_measure == Approx(0.3));
  CHECK(run->rejected_at_measure == 1);
  CHECK_FALSE(run->seed.has_value());
}

TEST_CASE("inflation: a model no node has is refused, naming the pod") {
  OpenbPod pod = Pod("picky", 1, 500);
  pod.line = 7;
  pod.gpu_spec = {"H100"};
  auto e = InflationExperiment::Make({Node("a", 2)}, {pod});
  REQUIRE_FALSE(e.ok());
  CHECK(e.status().message() == "line 7: pod picky: gpu_spec model \"H100\" is on no node of the node list");
}

TEST_CASE("inflation: a pod restricted to a model lands only on that model") {
  OpenbPod v100 = Pod("v100-only", 1, 500);
  v100.gpu_spec = {"V100M16"};
  auto e = InflationExperiment::Make({Node("t4", 2, 64000, "T4"), Node("v100", 2, 64000, "V100M16")}, {v100});
  REQUIRE(e.ok());
  for (PackingPolicy policy : kPolicies) {
    const InflationRun run = e->Sampled(policy, 1, InflationOptions{});
    for (const InflationArrival& a : run.arrivals) {
      if (a.node >= 0) CHECK(e->nodes()[a.node].name == "v100");
    }
  }
}

TEST_CASE(
    "inflation on the openb trace: no policy oversubscribes a GPU or a node's CPU or memory, and FGD packs best") {
  if (!std::filesystem::is_directory(kOpenb)) GPUSCHED_SKIP("no " << kOpenb);
  const OpenbDefault openb = LoadOpenbDefault();
  absl::flat_hash_map<std::string, const OpenbPod*> by_name;
  for (const OpenbPod& p : openb.pods) by_name[p.name] = &p;
  auto e = InflationExperiment::Make(openb.nodes, openb.pods);
  REQUIRE(e.ok());
  InflationOptions options;
  options.inflate_to = 1.1;
  absl::flat_hash_map<PackingPolicy, double> unallocated;
  for (PackingPolicy policy : kPolicies) {
    INFO(gpusched::core::sharing::PackingPolicyName(policy));
    const InflationRun run = e->Sampled(policy, 7, options);
    REQUIRE(run.unallocated_at_measure.has_value());
    unallocated[policy] = *run.unallocated_at_measure;
    std::vector<std::vector<int>> gpu_used(e->nodes().size());
    std::vector<int64_t> cpu_used(e->nodes().size()), memory_used(e->nodes().size());
    for (size_t n = 0; n < e->nodes().size(); ++n) gpu_used[n].assign(e->nodes()[n].gpus, 0);
    int64_t allocated = 0;
    for (const InflationArrival& a : run.arrivals) {
      const OpenbPod& pod = *by_name.at(a.source);
      if (a.node < 0) continue;
      REQUIRE(static_cast<int>(a.gpus.size()) == pod.num_gpu);
      cpu_used[a.node] += pod.cpu_milli;
      memory_used[a.node] += pod.memory_mib;
      for (int g : a.gpus) gpu_used[a.node][g] += pod.gpu_milli;
      allocated += int64_t{pod.num_gpu} * pod.gpu_milli;
    }
    for (size_t n = 0; n < e->nodes().size(); ++n) {
      CHECK(cpu_used[n] <= e->nodes()[n].cpu_milli);
      CHECK(memory_used[n] <= e->nodes()[n].memory_mib);
      for (int used : gpu_used[n]) CHECK(used <= 1000);
    }
    CHECK(run.unallocated_at_end ==
          Approx(1 - static_cast<double>(allocated) / static_cast<double>(e->gpu_capacity_milli())));
  }
  // The order the FGD paper reports, on this seed too, and fill-fgd ahead.
  CHECK(unallocated[PackingPolicy::kFillFgd] < unallocated[PackingPolicy::kFgd]);
  CHECK(unallocated[PackingPolicy::kFgd] < unallocated[PackingPolicy::kBestFit]);
  CHECK(unallocated[PackingPolicy::kBestFit] < unallocated[PackingPolicy::kRandom]);
}

TEST_CASE("inflation on the openb trace: fill-fgd leaves at most 4.0% unallocated at 100% arrived over seeds 42-51") {
  // Issue 18's goal, as `gpuschedd simulate-sharing` measures it (FGD
  // leaves 4.94% on the same draws). Deterministic: seeded draws, pure packing.
  if (!std::filesystem::is_directory(kOpenb)) GPUSCHED_SKIP("no " << kOpenb);
  const OpenbDefault openb = LoadOpenbDefault();
  auto e = InflationExperiment::Make(openb.nodes, openb.pods);
  REQUIRE(e.ok());
  InflationOptions options;
  options.inflate_to = 1.0;  // nothing after the 100% mark is measured
  double sum = 0;
  for (uint64_t seed = 42; seed <= 51; ++seed) {
    const InflationRun run = e->Sampled(PackingPolicy::kFillFgd, seed, options);
    REQUIRE(run.unallocated_at_measure.has_value());
    sum += *run.unallocated_at_measure;
  }
  CHECK(sum / 10 <= 0.040);
}

TEST_CASE("inflation on the openb trace: replaying a run's arrivals in order places them the same") {
  if (!std::filesystem::is_directory(kOpenb)) GPUSCHED_SKIP("no " << kOpenb);
  const OpenbDefault openb = LoadOpenbDefault();
  absl::flat_hash_map<std::string, OpenbPod> by_name;
  for (const OpenbPod& p : openb.pods) by_name[p.name] = p;
  auto e = InflationExperiment::Make(openb.nodes, openb.pods);
  REQUIRE(e.ok());
  InflationOptions options;
  options.inflate_to = 0.8;
  const InflationRun sampled = e->Sampled(PackingPolicy::kFgd, 42, options);
  CHECK(e->Sampled(PackingPolicy::kFgd, 43, options).arrivals[0].source != sampled.arrivals[0].source);
  std::vector<OpenbPod> arrivals;
  for (const InflationArrival& a : sampled.arrivals) {
    OpenbPod copy = by_name.at(a.source);
    copy.name = a.pod;
    arrivals.push_back(copy);
  }
  auto replayed = e->Replayed(PackingPolicy::kFgd, arrivals, options);
  REQUIRE(replayed.ok());
  REQUIRE(replayed->arrivals.size() == sampled.arrivals.size());
  for (size_t i = 0; i < arrivals.size(); ++i) {
    INFO(i);
    CHECK(replayed->arrivals[i].node == sampled.arrivals[i].node);
    CHECK(replayed->arrivals[i].gpus == sampled.arrivals[i].gpus);
  }
}

TEST_CASE("simulate-sharing writes one placement log per policy and seed in the published columns") {
  const gpusched::testing::TempDir tmp;
  const std::string dir = tmp.path().string();
  std::ofstream(dir + "/nodes.csv") << "sn,cpu_milli,memory_mib,gpu,model\nn-a,8000,65536,2,T4\n";
  std::ofstream(dir + "/pods.csv") << "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n"
                                      "p-share,1000,1024,1,600,\np-cpu,1000,1024,0,0,\n";
  SimulateSharingOptions options;
  options.nodes_path = dir + "/nodes.csv";
  options.pods_path = dir + "/pods.csv";
  options.arrivals_path = dir + "/arrivals.csv";
  options.policies = {"best-fit", "fgd"};
  options.out_dir = dir + "/out";
  options.inflation.measure_at = 0.5;  // reached by the second arrival (1.2 of 2 GPUs)
  std::ofstream(options.arrivals_path) << "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n"
                                          "a1,1000,1024,1,600,\na2,1000,1024,1,600,\na3,1000,1024,1,600,\n"
                                          "a4,1000,1024,0,0,\n";
  std::ostringstream out, err;
  REQUIRE(RunSimulateSharing(options, out, err).ok());
  CHECK(ReadFile(options.out_dir + "/placements-best-fit.csv") ==
        "seq,pod,source,node,gpus\n1,a1,a1,n-a,0:600\n2,a2,a2,n-a,1:600\n3,a3,a3,unscheduled,\n4,a4,a4,n-a,\n");
  CHECK(std::filesystem::exists(options.out_dir + "/placements-fgd.csv"));
  const std::string summary = ReadFile(options.out_dir + "/summary.csv");
  CHECK(summary.rfind("policy,seed,arrivals_at_measure,", 0) == 0);
  CHECK(summary.find("best-fit,,2,0,0.400000,") != std::string::npos);
  CHECK(out.str().find("best-fit") != std::string::npos);
}

TEST_CASE("simulate-sharing refuses a policy or seed list it does not know, saying which") {
  SimulateSharingOptions options;
  options.policies = {"fgd", "tetris"};
  std::ostringstream out, err;
  absl::Status s = RunSimulateSharing(options, out, err);
  CHECK(s.message() ==
        "--policy: unknown policy \"tetris\" (known: random, best-fit, spread, fgd, fgd-exact, fill-fgd)");
  CHECK(ParseSeeds("9-3").status().message() == "--seeds \"9-3\": 9-3 runs backwards (expected A-B or A,B,C)");
  CHECK(ParseSeeds("1,x").status().message() == "--seeds \"1,x\": \"x\" is not a seed (expected A-B or A,B,C)");
  CHECK(*ParseSeeds("42-44,50") == std::vector<uint64_t>{42, 43, 44, 50});
}
