// The real trace of shared/traces: every file loads; a slice replays.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "daemon/sim/cluster_spec.h"
#include "daemon/sim/csv_trace.h"
#include "daemon/sim/metrics.h"
#include "daemon/sim/sim_cluster.h"
#include "daemon/sim/simulator.h"
#include "daemon/sim/trace_file.h"
#include "tests/skip.h"
#include "tests/unit/sim/read_file.h"

using namespace gpusched::sim;
using gpusched::sim::testing::ReadFile;

namespace {

const std::string kTraces = GPUSCHED_TRACES_DIR;
const std::string kItp = kTraces + "/microsoft_itp_2021.csv";

}  // namespace

TEST_CASE("real traces: every CSV in shared/traces loads") {
  if (!std::filesystem::is_directory(kTraces)) {
    GPUSCHED_SKIP("no " << kTraces);
  }
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kTraces)) {
    if (entry.path().extension() != ".csv") continue;
    INFO(entry.path().string());
    auto trace = LoadTrace(entry.path().string(), TraceFormat::kAuto, {});
    REQUIRE(trace.ok());
    CHECK(trace->rows > 0);
    CHECK(static_cast<int64_t>(trace->jobs.size()) + trace->skipped_unknown_duration + trace->skipped_no_gpus ==
          trace->rows);
    ++files;
  }
  CHECK(files >= 1);
}

TEST_CASE("real traces: the ITP header and a slice; one cluster replays") {
  if (!std::filesystem::exists(kItp)) {
    GPUSCHED_SKIP("no " << kItp);
  }
  const std::string text = ReadFile(kItp);
  CHECK(text.substr(0, text.find('\n')) == "job_id,submit_time_s,num_gpus,duration_s,user,queue,status");
  // The first 2,000 lines on their own.
  size_t cut = 0;
  for (int i = 0; i < 2000; ++i) cut = text.find('\n', cut) + 1;
  auto slice = ParseCsvTrace(text.substr(0, cut), {});
  REQUIRE(slice.ok());
  CHECK(slice->rows == 1999);
  CHECK(slice->skipped_unknown_duration == 0);

  auto whole = LoadTrace(kItp, TraceFormat::kCsv, {});
  REQUIRE(whole.ok());
  CHECK(whole->rows == 69351);
  CHECK(whole->queues.size() == 10);

  auto cluster10 = LoadTrace(kItp, TraceFormat::kCsv, TraceOptions{"cluster10"});
  REQUIRE(cluster10.ok());
  REQUIRE(cluster10->jobs.size() == 260);
  auto spec = ParseClusterSpec(ReadFile(std::string(GPUSCHED_SIM_CLUSTERS) + "/dgx-h100-64.toml"));
  REQUIRE(spec.ok());
  auto cluster = BuildCluster(*spec, GPUSCHED_SIM_CLUSTERS);
  REQUIRE(cluster.ok());
  auto result = Simulate(*cluster10, *cluster, SimOptions{});
  REQUIRE(result.ok());
  const PolicyMetrics m = ComputeMetrics(*result);
  CHECK(m.completed == 260);
  CHECK(m.refused == 0);

  auto missing = LoadTrace(kItp, TraceFormat::kCsv, TraceOptions{"cluster99"});
  REQUIRE_FALSE(missing.ok());
  CHECK(std::string(missing.status().message()).find("no row is in queue \"cluster99\" (queues: cluster01, ") !=
        std::string::npos);
}

TEST_CASE("real traces: cluster08's first 300 jobs with demotion all end, the long ones preempted and resumed") {
  if (!std::filesystem::exists(kItp)) {
    GPUSCHED_SKIP("no " << kItp);
  }
  auto trace = LoadTrace(kItp, TraceFormat::kCsv, TraceOptions{"cluster08"});
  REQUIRE(trace.ok());
  trace->jobs.resize(300);
  auto spec = ParseClusterSpec(ReadFile(std::string(GPUSCHED_SIM_CLUSTERS) + "/dgx-h100-12.toml"));
  REQUIRE(spec.ok());
  auto cluster = BuildCluster(*spec, GPUSCHED_SIM_CLUSTERS);
  REQUIRE(cluster.ok());
  SimOptions options;
  options.multifactor = true;
  options.demote_after = absl::Hours(8);
  // One threshold for every size, as when the loop below was found: gangs
  // are demoted as soon as 1-GPU jobs.
  options.demote_after_per_gpu = false;
  options.checkpoint_restore = absl::Seconds(300);
  // A preempting job that waits for a better placement once its victim is
  // gone must not stop that victim again and again at one instant: this
  // replay did not end when it could.
  auto result = Simulate(*trace, *cluster, options);
  REQUIRE(result.ok());
  const PolicyMetrics m = ComputeMetrics(*result);
  CHECK(m.completed == 300);
  CHECK(result->requeues > 0);
  CHECK(result->requeues < 300);
}
