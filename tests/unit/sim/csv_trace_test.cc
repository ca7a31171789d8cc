#include "daemon/sim/csv_trace.h"

#include <catch2/catch.hpp>
#include <string>

using namespace gpusched::sim;
using Catch::Matchers::StartsWith;

namespace {

const std::string kHeader = "job_id,submit_time_s,num_gpus,duration_s,user,queue,status\n";

std::string ErrorOf(const std::string& rows, const std::string& header = kHeader) {
  auto trace = ParseCsvTrace(header + rows, {});
  INFO(header + rows);
  REQUIRE_FALSE(trace.ok());
  CHECK(trace.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(trace.status().message());
}

}  // namespace

TEST_CASE("csv trace: rows become jobs, sorted and rebased; skips are counted") {
  auto trace = ParseCsvTrace(kHeader +
                                 "b,120,8,3600,alice,c1,\n"
                                 "a,100,1,60,,c1,Pass\n"
                                 "\"c,1\",100,2,,,c1,\n"  // unknown duration
                                 "d,150,0,10,,c1,\n"      // no GPUs
                                 "e,90,4,5,,c2,\n"        // other queue
                                 "f,130,16,7,bob,c1,Failed\r\n",
                             TraceOptions{"c1"});
  REQUIRE(trace.ok());
  CHECK(trace->rows == 6);
  CHECK(trace->skipped_unknown_duration == 1);
  CHECK(trace->skipped_no_gpus == 1);
  CHECK(trace->skipped_other_queue == 1);
  CHECK(trace->queues == std::set<std::string>{"c1", "c2"});
  REQUIRE(trace->jobs.size() == 3);
  CHECK(trace->jobs[0].id == "a");
  CHECK(trace->jobs[0].submit_s == 0);
  CHECK(trace->jobs[0].line == 3);
  CHECK(trace->jobs[1].id == "b");
  CHECK(trace->jobs[1].submit_s == 20);
  CHECK(trace->jobs[1].gpus == 8);
  CHECK(trace->jobs[1].duration_s == 3600);
  CHECK(trace->jobs[1].user == "alice");
  CHECK(trace->jobs[2].id == "f");
  CHECK(trace->jobs[2].submit_s == 30);
}

TEST_CASE("csv trace: columns may come in any order, extra columns are ignored") {
  auto trace = ParseCsvTrace(
      "queue,status,extra,duration_s,num_gpus,submit_time_s,user,job_id\n"
      "q,,x,10,2,5,u,j1\n",
      {});
  REQUIRE(trace.ok());
  REQUIRE(trace->jobs.size() == 1);
  CHECK(trace->jobs[0].gpus == 2);
  CHECK(trace->jobs[0].duration_s == 10);
}

TEST_CASE("csv trace: malformed input names the line and the field") {
  CHECK_THAT(ErrorOf("a,0,1,10,,q,\nb,x,1,10,,q,\n"),
             StartsWith("line 3: field submit_time_s: expected a whole number >= 0, got \"x\""));
  CHECK_THAT(ErrorOf("a,0,-1,10,,q,\n"),
             StartsWith("line 2: field num_gpus: expected a whole number >= 0, got \"-1\""));
  CHECK_THAT(ErrorOf("a,0,1.5,10,,q,\n"), StartsWith("line 2: field num_gpus: expected a whole number"));
  CHECK_THAT(ErrorOf("a,0,1,ten,,q,\n"), StartsWith("line 2: field duration_s: expected a whole number"));
  CHECK_THAT(ErrorOf("a,,1,10,,q,\n"), StartsWith("line 2: field submit_time_s: is empty"));
  CHECK_THAT(ErrorOf(",0,1,10,,q,\n"), StartsWith("line 2: field job_id: is empty"));
  CHECK_THAT(ErrorOf("a,0,1,10,,q\n"), StartsWith("line 2: expected 7 fields as in the header, got 6"));
  CHECK_THAT(ErrorOf("\"a,0,1,10,,q,\n"), StartsWith("line 2: unterminated quote"));
  CHECK_THAT(ErrorOf("\"a\"b,0,1,10,,q,\n"), StartsWith("line 2: field 1: text after a closing quote"));
  CHECK_THAT(ErrorOf("", "job_id,submit_time_s,num_gpus,user,queue,status\n"),
             StartsWith("line 1: field duration_s: missing from the header"));
  CHECK_THAT(ErrorOf("", "job_id,job_id,submit_time_s\n"),
             StartsWith("line 1: field job_id: column is named twice in the header"));
  auto empty = ParseCsvTrace("", {});
  REQUIRE_FALSE(empty.ok());
  CHECK_THAT(std::string(empty.status().message()), StartsWith("line 1: the file is empty"));
}

TEST_CASE("csv trace: a malformed row fails even in a queue that is not replayed") {
  auto trace = ParseCsvTrace(kHeader + "a,0,1,10,,keep,\nb,0,x,10,,other,\n", TraceOptions{"keep"});
  REQUIRE_FALSE(trace.ok());
  CHECK_THAT(std::string(trace.status().message()), StartsWith("line 3: field num_gpus"));
}
