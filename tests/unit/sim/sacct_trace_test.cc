#include "daemon/sim/sacct_trace.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>

#include "daemon/sim/trace_file.h"

using namespace gpusched::sim;
using Catch::Matchers::StartsWith;

namespace {

const std::string kSample = std::string(GPUSCHED_SIM_TEST_DATA) + "/sacct_sample.txt";
const std::string kHeader = "JobID|Submit|Elapsed|AllocTRES\n";

std::string ErrorOf(const std::string& text) {
  auto trace = ParseSacctTrace(text, {});
  INFO(text);
  REQUIRE_FALSE(trace.ok());
  CHECK(trace.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(trace.status().message());
}

}  // namespace

TEST_CASE("sacct: the hand-made sample export") {
  // Auto-detected by the '|' in the header.
  auto trace = LoadTrace(kSample, TraceFormat::kAuto, {});
  REQUIRE(trace.ok());
  CHECK(trace->rows == 8);
  CHECK(trace->skipped_steps == 2);             // 1001.batch, 1001.extern
  CHECK(trace->skipped_no_gpus == 1);           // 1004, CPU only
  CHECK(trace->skipped_unknown_duration == 1);  // 1005, still pending
  REQUIRE(trace->jobs.size() == 4);
  struct Want {
    const char* id;
    int64_t submit_s, gpus, duration_s;
    const char* user;
  };
  const Want want[] = {{"1001", 0, 1, 2 * 3600, "alice"},
                       {"1002", 1800, 8, 26 * 3600, "bob"},       // typed and untyped gres: the total counts once
                       {"1003", 3600, 2, 45 * 60 + 30, "carol"},  // typed gres only; failed jobs are kept
                       {"1006_3", 7200, 4, 300, "erin"}};         // empty AllocTRES: ReqTRES
  for (size_t i = 0; i < 4; ++i) {
    INFO(want[i].id);
    CHECK(trace->jobs[i].id == want[i].id);
    CHECK(trace->jobs[i].submit_s == want[i].submit_s);
    CHECK(trace->jobs[i].gpus == want[i].gpus);
    CHECK(trace->jobs[i].duration_s == want[i].duration_s);
    CHECK(trace->jobs[i].user == want[i].user);
    CHECK(trace->jobs[i].queue == "gpu");
  }
  auto gpu_only = LoadTrace(kSample, TraceFormat::kSacct, TraceOptions{"cpu"});
  REQUIRE(gpu_only.ok());
  CHECK(gpu_only->jobs.empty());
  CHECK(gpu_only->skipped_no_gpus == 1);
}

TEST_CASE("sacct: durations and TRES strings") {
  CHECK(ParseSlurmDuration("45:30") == 2730);
  CHECK(ParseSlurmDuration("02:00:00") == 7200);
  CHECK(ParseSlurmDuration("1-02:00:00") == 93600);
  CHECK(ParseSlurmDuration("00:05:01.123") == 301);
  CHECK_FALSE(ParseSlurmDuration("5").has_value());
  CHECK_FALSE(ParseSlurmDuration("00:61:00").has_value());
  CHECK_FALSE(ParseSlurmDuration("UNLIMITED").has_value());
  CHECK(GpusFromTres("cpu=8,gres/gpu=2,mem=64G") == 2);
  CHECK(GpusFromTres("gres/gpu:a100=2,gres/gpu:v100=1") == 3);
  CHECK(GpusFromTres("gres/gpu:a100=2,gres/gpu=2") == 2);
  CHECK(GpusFromTres("cpu=8,mem=1G") == 0);
  CHECK(GpusFromTres("") == 0);
  CHECK_FALSE(GpusFromTres("gres/gpu=two").has_value());
}

TEST_CASE("sacct: without Elapsed, End - Start") {
  auto trace = ParseSacctTrace(
      "JobID|Submit|Start|End|ReqTRES\n"
      "7|2024-01-01T00:00:00|2024-01-01T00:10:00|2024-01-01T01:10:00|gres/gpu=2\n",
      {});
  REQUIRE(trace.ok());
  REQUIRE(trace->jobs.size() == 1);
  CHECK(trace->jobs[0].duration_s == 3600);
}

TEST_CASE("sacct: malformed input names the line and the field") {
  CHECK_THAT(ErrorOf(kHeader + "1|2024-01-01T00:00:00|01:00|gres/gpu=1\n2|yesterday|01:00|gres/gpu=1\n"),
             StartsWith("line 3: field Submit: expected YYYY-MM-DDTHH:MM:SS, got \"yesterday\""));
  CHECK_THAT(ErrorOf(kHeader + "1|2024-01-01T00:00:00|an hour|gres/gpu=1\n"),
             StartsWith("line 2: field Elapsed: expected [D-][HH:]MM:SS, got \"an hour\""));
  CHECK_THAT(ErrorOf(kHeader + "1|2024-01-01T00:00:00|01:00|gres/gpu=x\n"),
             StartsWith("line 2: field AllocTRES: gres/gpu is not a whole number in \"gres/gpu=x\""));
  CHECK_THAT(ErrorOf(kHeader + "1|2024-01-01T00:00:00|01:00\n"),
             StartsWith("line 2: expected 4 fields as in the header, got 3"));
  CHECK_THAT(ErrorOf(kHeader + "|2024-01-01T00:00:00|01:00|gres/gpu=1\n"), StartsWith("line 2: field JobID: is empty"));
  CHECK_THAT(ErrorOf("JobID|Elapsed|AllocTRES\n"), StartsWith("line 1: field Submit: missing from the header"));
  CHECK_THAT(ErrorOf("JobID|Submit|Elapsed\n"), StartsWith("line 1: field AllocTRES: missing from the header"));
  CHECK_THAT(ErrorOf("JobID|Submit|AllocTRES\n"), StartsWith("line 1: field Elapsed: missing from the header"));
  CHECK_THAT(ErrorOf("JobID|Submit|Start|End|ReqTRES\n1|2024-01-01T00:00:00|2024-01-01T02:00:00|"
                     "2024-01-01T01:00:00|gres/gpu=1\n"),
             StartsWith("line 2: field End: is before Start"));
}
