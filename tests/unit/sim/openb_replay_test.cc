// The Alibaba openb trace replayed through the core on a clock: its node
// list as a cluster of time-sliced GPUs, its pods as jobs with GPU shares,
// with answers worked out by hand.
#include <catch2/catch.hpp>
#include <string>

#include "daemon/sim/metrics.h"
#include "daemon/sim/openb_cluster.h"
#include "daemon/sim/openb_trace.h"
#include "daemon/sim/simulator.h"

using namespace gpusched;
using namespace gpusched::sim;

namespace {

constexpr const char* kNodeHeader = "sn,cpu_milli,memory_mib,gpu,model\n";
constexpr const char* kPodHeader =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n";

SimCluster Cluster(const std::string& rows) {
  auto nodes = ParseOpenbNodes(std::string(kNodeHeader) + rows);
  REQUIRE(nodes.ok());
  auto cluster = BuildOpenbCluster(*nodes, "test");
  REQUIRE(cluster.ok());
  return *std::move(cluster);
}

std::string NodeOf(const JobOutcome& job) { return job.placement.substr(0, job.placement.find(':')); }

}  // namespace

TEST_CASE("openb cluster: every GPU of a node is time-sliced, of the list's model, with its CPUs and memory") {
  const SimCluster cluster = Cluster("t4,64000,262144,2,T4\ncpu,96000,393216,0,\ng2,96000,393216,8,G2\n");
  REQUIRE(cluster.nodes.size() == 2);  // the node without GPUs is left out
  CHECK(cluster.total_gpus == 10);
  const v1::NodeInfo& t4 = cluster.nodes[0];
  CHECK(t4.name() == "t4");
  CHECK(t4.cpus() == 64);
  CHECK(t4.memory_mb() == 262144);
  REQUIRE(t4.gpus_size() == 2);
  for (const v1::GpuInfo& gpu : t4.gpus()) {
    CHECK(gpu.model() == "T4");
    CHECK(gpu.memory_mb() == 16384);
    CHECK(gpu.share_mode() == v1::GPU_SHARE_MODE_TIMESLICE);
  }
  CHECK(cluster.nodes[1].gpus(0).memory_mb() == 0);  // G2's memory is not public
  CHECK(cluster.summary ==
        "2 nodes, 10 GPUs: 1 G2 nodes (8 GPUs), 1 T4 nodes (2 GPUs); every GPU time-sliced, links unknown; "
        "1 nodes without GPUs left out");

  auto none = ParseOpenbNodes(std::string(kNodeHeader) + "cpu,96000,393216,0,\n");
  REQUIRE(none.ok());
  auto empty = BuildOpenbCluster(*none, "cpu-only");
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.status().message() == "no node has a GPU");
}

TEST_CASE("openb replay: shares run together on one GPU, a whole GPU never joins them, and waits are exact") {
  // Two nodes of one T4 each. a and b (30% each) share one GPU from 0; w
  // (whole) takes the other at 5; c (50%) does not fit beside a and b
  // and waits for them (100); d (whole) cannot join c's shared GPU and waits
  // for w's (105).
  const SimCluster cluster = Cluster("n1,8000,32768,1,T4\nn2,8000,32768,1,T4\n");
  auto trace = ParseOpenbTrace(std::string(kPodHeader) +
                               "a,1000,1024,1,300,,LS,Running,0,100,0\n"
                               "b,1000,1024,1,300,,LS,Running,0,100,0\n"
                               "w,1000,1024,1,1000,,LS,Running,5,105,5\n"
                               "c,1000,1024,1,500,,LS,Running,10,60,10\n"
                               "d,1000,1024,1,1000,,LS,Running,20,30,20\n");
  REQUIRE(trace.ok());
  for (const char* packing : {"best-fit", "fgd", "fill-fgd"}) {
    INFO(packing);
    SimOptions options;
    options.policy = "best-fit";
    options.share_packing = *core::ParseSharePacking(packing);
    auto result = Simulate(*trace, cluster, options);
    REQUIRE(result.ok());
    REQUIRE(result->jobs.size() == 5);
    struct Want {
      double start, end;
      int gpu_milli;
    };
    const Want want[] = {{0, 100, 300}, {0, 100, 300}, {5, 105, 1000}, {100, 150, 500}, {105, 115, 1000}};
    for (size_t i = 0; i < 5; ++i) {
      const JobOutcome& job = result->jobs[i];
      INFO(job.trace_id);
      CHECK(job.state == v1::JOB_STATE_COMPLETED);
      CHECK(job.start_s == want[i].start);
      CHECK(job.end_s == want[i].end);
      CHECK(job.gpu_milli == want[i].gpu_milli);
    }
    const auto& jobs = result->jobs;
    CHECK(NodeOf(jobs[0]) == NodeOf(jobs[1]));  // a and b share a GPU
    CHECK(NodeOf(jobs[2]) != NodeOf(jobs[0]));  // w is not put on it
    CHECK(NodeOf(jobs[3]) == NodeOf(jobs[0]));  // c takes the GPU a and b left
    CHECK(NodeOf(jobs[4]) == NodeOf(jobs[2]));  // d takes w's

    const PolicyMetrics m = ComputeMetrics(*result);
    CHECK(m.completed == 5);
    CHECK(m.makespan_s == 150);
    // GPU-seconds: a 30, b 30, w 100, c 25, d 10, over 2 GPUs x 150 s.
    CHECK(m.utilization == Approx(195.0 / 300.0));
    CHECK(m.wait[kShareClass].count == 3);
    CHECK(m.wait[kShareClass].mean == Approx(90.0 / 3));
    CHECK(m.wait[SizeClassOf(1)].count == 2);
    CHECK(m.wait[SizeClassOf(1)].mean == Approx(85.0 / 2));
    REQUIRE_FALSE(result->usage.empty());
    CHECK(result->usage.front().busy_gpus == Approx(0.6));
  }
}

TEST_CASE("openb replay: spread puts shares on separate GPUs while it can, and a whole GPU then waits for one") {
  // Two nodes of one T4 each. a and b (30% each) take a GPU each from 0;
  // w (whole) finds no GPU nobody shares and waits for a's end (100).
  const SimCluster cluster = Cluster("n1,8000,32768,1,T4\nn2,8000,32768,1,T4\n");
  auto trace = ParseOpenbTrace(std::string(kPodHeader) +
                               "a,1000,1024,1,300,,LS,Running,0,100,0\n"
                               "b,1000,1024,1,300,,LS,Running,0,200,0\n"
                               "w,1000,1024,1,1000,,LS,Running,5,105,5\n");
  REQUIRE(trace.ok());
  SimOptions options;
  options.policy = "best-fit";
  options.share_packing = core::SharePacking::kSpread;
  auto result = Simulate(*trace, cluster, options);
  REQUIRE(result.ok());
  REQUIRE(result->jobs.size() == 3);
  const auto& jobs = result->jobs;
  CHECK(NodeOf(jobs[0]) != NodeOf(jobs[1]));
  CHECK(jobs[1].start_s == 0);
  CHECK(jobs[2].start_s == 100);
  CHECK(NodeOf(jobs[2]) == NodeOf(jobs[0]));
}
