// Two replays of the same inputs give the same bytes: table and files.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "daemon/sim/cluster_spec.h"
#include "daemon/sim/metrics.h"
#include "daemon/sim/report.h"
#include "daemon/sim/report_files.h"
#include "daemon/sim/sim_cluster.h"
#include "daemon/sim/simulator.h"
#include "tests/unit/sim/read_file.h"

using namespace gpusched::sim;
using gpusched::sim::testing::ReadFile;

namespace {

// A busy synthetic trace: sizes and durations from a fixed LCG.
Trace Synthetic(int jobs) {
  Trace trace;
  uint64_t state = 42;
  auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return state >> 33;
  };
  const int64_t sizes[] = {1, 1, 1, 1, 2, 4, 8, 8, 16, 32};
  int64_t t = 0;
  for (int i = 0; i < jobs; ++i) {
    TraceJob j;
    j.id = "job" + std::to_string(i);
    t += static_cast<int64_t>(next() % 120);
    j.submit_s = t;
    j.gpus = sizes[next() % 10];
    j.duration_s = 60 + static_cast<int64_t>(next() % 20000);
    trace.jobs.push_back(j);
  }
  trace.rows = jobs;
  return trace;
}

struct Output {
  std::string table;
  std::map<std::string, std::string> files;
};

SimCluster Mixed() {
  std::ifstream in(std::string(GPUSCHED_SIM_CLUSTERS) + "/mixed-nvlink-pcie.toml");
  std::stringstream text;
  text << in.rdbuf();
  auto spec = ParseClusterSpec(text.str());
  REQUIRE(spec.ok());
  auto cluster = BuildCluster(*spec, GPUSCHED_SIM_CLUSTERS);
  REQUIRE(cluster.ok());
  return *std::move(cluster);
}

Output RunOnce(const Trace& trace, const SimCluster& cluster, const std::string& dir) {
  std::vector<SimResult> results;
  std::vector<PolicyMetrics> metrics;
  for (const char* policy : {"topology", "best-fit", "first-fit", "spread"}) {
    SimOptions options;
    options.policy = policy;
    auto result = Simulate(trace, cluster, options);
    REQUIRE(result.ok());
    metrics.push_back(ComputeMetrics(*result));
    results.push_back(*std::move(result));
  }
  Output out;
  RunDescription run;
  run.trace_name = "synthetic";
  run.cluster_summary = cluster.summary;
  out.table = FormatComparison(run, trace, metrics);
  auto written = WriteReportFiles(dir, results, metrics);
  REQUIRE(written.ok());
  for (const std::string& name : *written) out.files[name] = ReadFile(dir + "/" + name);
  return out;
}

}  // namespace

TEST_CASE("simulate: two runs give identical output, byte for byte") {
  const SimCluster cluster = Mixed();
  const Trace trace = Synthetic(1500);

  const std::string base =
      (std::filesystem::temp_directory_path() / ("gpusched-sim-determinism-" + std::to_string(getpid()))).string();
  const Output first = RunOnce(trace, cluster, base + "/a");
  const Output second = RunOnce(trace, cluster, base + "/b");
  std::filesystem::remove_all(base);

  CHECK(first.table == second.table);
  REQUIRE(first.files.size() == 9);  // 5 shared files + one jobs file per policy
  for (const auto& [name, content] : first.files) {
    INFO(name);
    CHECK(second.files.at(name) == content);
  }
  // The trace queues up on this cluster: the comparison is not trivial.
  const std::string& summary = first.files.at("summary.csv");
  CHECK(summary.find("topology,waiting_time_share,all,0\n") == std::string::npos);
}

// What --help promises: in strict order without time limits nothing passes
// the head of the queue, so how deep a pass looks changes only the wait reasons.
TEST_CASE("simulate: in strict order without time limits the queue depth does not change the outcome") {
  const SimCluster cluster = Mixed();
  const Trace trace = Synthetic(800);
  for (const char* policy : {"topology", "spread"}) {
    INFO(policy);
    SimOptions deep, shallow;
    deep.policy = shallow.policy = policy;
    deep.head_blocks_after = shallow.head_blocks_after = absl::ZeroDuration();
    shallow.queue_depth = 1;
    auto a = Simulate(trace, cluster, deep);
    auto b = Simulate(trace, cluster, shallow);
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    REQUIRE(a->jobs.size() == b->jobs.size());
    for (size_t i = 0; i < a->jobs.size(); ++i) {
      INFO("job " << i);
      CHECK(a->jobs[i].start_s == b->jobs[i].start_s);
      CHECK(a->jobs[i].end_s == b->jobs[i].end_s);
      CHECK(a->jobs[i].span == b->jobs[i].span);
    }
  }
}
