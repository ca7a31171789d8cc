// What people read: placement strings, durations, tables and the job view;
// and what scripts read: JSON that parses back to the same proto.
#include <catch2/catch.hpp>

#include "cli/format.h"
#include "cli/job_detail.h"
#include "cli/job_table.h"
#include "cli/json_output.h"
#include "cli/node_table.h"
#include "cli/table.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "jobs_fixture.h"

using namespace gpusched;
using namespace gpusched::cli;
using namespace gpusched::cli::testing;

TEST_CASE("GPU index lists collapse runs of three or more") {
  struct Case {
    std::vector<int32_t> indices;
    const char* text;
  };
  auto c = GENERATE(values<Case>({
      {{}, ""},
      {{3}, "3"},
      {{0, 1}, "0,1"},
      {{0, 1, 2, 3}, "0-3"},
      {{3, 2, 1, 0}, "0-3"},
      {{0, 2, 4, 5, 6, 7}, "0,2,4-7"},
      {{0, 1, 2, 4, 5}, "0-2,4,5"},
      {{1, 1, 2}, "1,2"},
  }));
  CHECK(FormatIndexList(c.indices) == c.text);
}

TEST_CASE("the placement string lists nodes in rank order with their GPUs") {
  v1::Job job = RunningJob();
  CHECK(FormatPlacement(job.allocation()) == "node-a[0,1] node-b[0-3]");
  CHECK(FormatPlacement(v1::Allocation()) == "");
  v1::Job cpu_only;
  AddNode(cpu_only, "node-z", 0, {});
  CHECK(FormatPlacement(cpu_only.allocation()) == "node-z");
}

TEST_CASE("durations print like squeue's TIME") {
  struct Case {
    absl::Duration d;
    const char* text;
  };
  auto c = GENERATE(values<Case>({
      {absl::ZeroDuration(), "0:00"},
      {absl::Seconds(59), "0:59"},
      {absl::Seconds(65), "1:05"},
      {absl::Seconds(3723), "1:02:03"},
      {absl::Hours(23) + absl::Minutes(59) + absl::Seconds(59), "23:59:59"},
      {absl::Hours(27), "1-03:00:00"},
      {absl::Hours(24 * 12) + absl::Seconds(1), "12-00:00:01"},
      {absl::Seconds(-5), "0:00"},  // clock skew between daemon and client
  }));
  CHECK(FormatElapsed(c.d) == c.text);
}

TEST_CASE("a job's TIME is its run time, or its wait while it waits") {
  CHECK(JobElapsed(RunningJob(), TestNow()) == absl::Seconds(3723));
  CHECK(JobElapsed(PendingJob(), TestNow()) == absl::Seconds(65));
  CHECK(JobElapsed(FailedJob(), TestNow()) == absl::Hours(27));
  v1::Job never_ran = PendingJob();
  never_ran.set_state(v1::JOB_STATE_CANCELLED);
  *never_ran.mutable_end_time() = ToProtoTime(TestNow() - absl::Seconds(5));
  CHECK(JobElapsed(never_ran, TestNow()) == absl::Seconds(60));
}

TEST_CASE("tables pad columns, mark empty cells and keep no trailing blanks") {
  Table table({"ID", "NAME", "REASON"});
  table.AddRow({"7", "a-long-name", ""});
  table.AddRow({"12345", "", "short"});
  CHECK(table.ToString() ==
        "ID     NAME         REASON\n"
        "7      a-long-name  -\n"
        "12345  -            short\n");
}

TEST_CASE("the job table shows one row per job with placement and time") {
  google::protobuf::RepeatedPtrField<v1::Job> jobs;
  *jobs.Add() = RunningJob();
  *jobs.Add() = PendingJob();
  jobs.Mutable(1)->mutable_priority()->set_total(10522.6);
  *jobs.Add() = FailedJob();
  CHECK(RenderJobTable(jobs, TestNow()) ==
        "ID  NAME       USER   QUEUE     STATE    PRIORITY  GPUS  NODES                    TIME        REASON\n"
        "7   train-llm  alice  research  RUNNING  -         8     node-a[0,1] node-b[0-3]  1:02:03     -\n"
        "8   -          bob    -         PENDING  10523     16    -                        1:05        waiting for 16 "
        "GPUs under one leaf switch\n"
        "12  eval       carol  default   FAILED   -         1     node-c[5]                1-03:00:00  rank 0 exited "
        "with code 3\n");
  CHECK(RenderJobTable({}, TestNow()) == "ID  NAME  USER  QUEUE  STATE  PRIORITY  GPUS  NODES  TIME  REASON\n");
}

TEST_CASE("the node table shows free/total and the running jobs") {
  google::protobuf::RepeatedPtrField<v1::Node> nodes;
  v1::Node& a = *nodes.Add();
  a.mutable_info()->set_name("dgx-01");
  a.mutable_info()->set_cpus(256);
  a.mutable_info()->set_memory_mb(2 * 1048576);
  for (int i = 0; i < 8; ++i) a.mutable_info()->add_gpus()->set_model("NVIDIA H100 80GB HBM3");
  a.set_state(v1::NODE_STATE_UP);
  a.set_gpus_free(2);
  a.set_cpus_free(64);
  a.set_mem_free_mb(512 * 1024);
  for (uint64_t id : {7, 9, 11, 13, 15, 17}) a.add_running_jobs(id);
  v1::Node& b = *nodes.Add();
  b.mutable_info()->set_name("cpu-01");
  b.mutable_info()->set_cpus(64);
  b.mutable_info()->set_memory_mb(262144);
  b.set_state(v1::NODE_STATE_DOWN);
  b.set_reason("agent disconnected 5m ago");
  CHECK(RenderNodeTable(nodes) ==
        "NAME    STATE  GPUS  MODEL           GPU-LINKS  NVL-DOMAIN  CPUS    MEMORY   JOBS       LABELS  REASON\n"
        "dgx-01  UP     2/8   H100-80GB-HBM3  PCIe       -           64/256  512G/2T  7,9,11,+3  -       -\n"
        "cpu-01  DOWN   0/0   -               -          -           0/64    0M/256G  -          -       "
        "agent disconnected 5m ago\n");
}

TEST_CASE("the detailed job view shows spec, times, allocation and events") {
  v1::Job job = RunningJob();
  job.set_client_request_id("abc123");
  v1::JobEvent* e1 = job.add_events();
  *e1->mutable_time() = job.submit_time();
  e1->set_state(v1::JOB_STATE_PENDING);
  e1->set_reason("submitted");
  v1::JobEvent* e2 = job.add_events();
  *e2->mutable_time() = job.start_time();
  e2->set_state(v1::JOB_STATE_RUNNING);
  (*job.mutable_spec()->mutable_env())["SECRET_TOKEN"] = "hunter2";
  job.mutable_allocation()->set_est_bus_bandwidth_gbps(25.0);
  job.mutable_allocation()->set_worst_link("NET");
  job.mutable_allocation()->set_span("leaf leaf-01");
  job.mutable_allocation()->set_policy("topology");

  const std::string view = RenderJobDetail(job, TestNow(), absl::UTCTimeZone());
  INFO(view);
  for (const char* line : {
           "Job 7 (train-llm)\n",
           "State:       RUNNING\n",
           "Command:     torchrun train.py '--note=two words'\n",
           "Workdir:     /home/alice/proj\n",
           "Resources:   8 GPUs (2 nodes x 4), 8 CPUs/GPU, 64G/GPU\n",
           "Launch:      per-gpu\n",
           "Time limit:  01:30:00\n",
           "Queue:       research\n",
           "Submitted:   2024-05-01 11:00:00\n",
           "Started:     2024-05-01 12:57:57\n",
           "Ended:       -\n",
           "Run time:    1:02:03\n",
           "Env:         SECRET_TOKEN\n",
           "Request id:  abc123\n",
           "Placement:   node-a[0,1] node-b[0-3]\n",
           "Master:      10.0.0.1:29500\n",
           // GPUs in ring order, as the ranks get them.
           "  node-a  0     -        0,1      -     -       /var/log/gpusched/7/node-a\n",
           "  node-b  1     -        3,0,1,2  -     -       /var/log/gpusched/7/node-b\n",
           "Topology:    prefer\n",
           "Estimated:   25 GB/s ring bus bandwidth; worst link NET; spans leaf leaf-01 (topology policy)\n",
           "Events:\n",
           "  2024-05-01 11:00:00  PENDING  submitted\n",
           "  2024-05-01 12:57:57  RUNNING  -\n",
       }) {
    CHECK_THAT(view, Catch::Contains(line));
  }
  CHECK_THAT(view, !Catch::Contains("hunter2"));
  CHECK_THAT(view, !Catch::Contains("Starts by"));
  *job.mutable_estimated_start_time() = job.submit_time();
  CHECK_THAT(
      RenderJobDetail(job, TestNow(), absl::UTCTimeZone()),
      Catch::Contains(
          "Starts by:   2024-05-01 11:00:00 (reserved by backfill from when running jobs are expected to end)\n"));
  job.clear_estimated_start_time();
  CHECK_THAT(view, !Catch::Contains("Stopping"));
  job.set_stopping_as(v1::JOB_STATE_CANCELLED);
  CHECK_THAT(
      RenderJobDetail(job, TestNow(), absl::UTCTimeZone()),
      Catch::Contains("State:       RUNNING\nStopping:    its processes are being stopped; it will end CANCELLED\n"));
  CHECK_THAT(view, !Catch::Contains("Exit code"));

  const std::string failed = RenderJobDetail(FailedJob(), TestNow(), absl::UTCTimeZone());
  INFO(failed);
  CHECK_THAT(failed, Catch::Contains("Script:      3 lines, first: #!/bin/bash\n"));
  CHECK_THAT(failed, Catch::Contains("Exit code:   3\n"));
  CHECK_THAT(failed, Catch::Contains("Reason:      rank 0 exited with code 3\n"));

  const std::string pending = RenderJobDetail(PendingJob(), TestNow(), absl::UTCTimeZone());
  INFO(pending);
  CHECK_THAT(pending, Catch::Contains("Waited:      1:05\n"));
  CHECK_THAT(pending, Catch::Contains("Time limit:  none\n"));
  CHECK_THAT(pending, !Catch::Contains("Allocation"));
}

TEST_CASE("the detailed view of a pending job says what run time the pass expects, and from what") {
  v1::Job job = PendingJob();
  job.mutable_spec()->set_user("bob");
  job.mutable_spec()->set_name("train");
  v1::PriorityFactors& p = *job.mutable_priority();
  p.set_total(100);
  CHECK_THAT(RenderJobDetail(job, TestNow(), absl::UTCTimeZone()),
             Catch::Contains("Expected run: unknown: no time limit, and no run of a similar job has ended yet\n"));
  p.set_expected_run_s(7200);
  p.set_estimate_typical_s(7200);
  p.set_estimate_high_s(10800);
  p.set_estimate_samples(12);
  p.set_estimate_basis(v1::ESTIMATE_BASIS_USER_AND_NAME);
  CHECK_THAT(RenderJobDetail(job, TestNow(), absl::UTCTimeZone()),
             Catch::Contains("Expected run: 02:00:00 (no time limit; typically 02:00:00, at most 03:00:00 in 9 of 10 "
                             "runs, from the last 12 runs of bob's jobs named train)\n"));
  job.mutable_spec()->set_time_limit_s(3600);
  p.set_expected_run_s(3600);
  CHECK_THAT(RenderJobDetail(job, TestNow(), absl::UTCTimeZone()),
             Catch::Contains("Expected run: 01:00:00 (its time limit 01:00:00; jobs like it ran typically 02:00:00"));
  job.set_wait_cause(v1::WAIT_CAUSE_BEHIND_RESERVATION);
  CHECK_THAT(RenderJobDetail(job, TestNow(), absl::UTCTimeZone()),
             Catch::Contains("Wait kind:   behind-reservation\n"));
  job.clear_priority();  // not pending: nothing to say
  CHECK_THAT(RenderJobDetail(job, TestNow(), absl::UTCTimeZone()), !Catch::Contains("Expected run"));
}

TEST_CASE("resources read as people say them") {
  v1::Resources r;
  CHECK(DescribeResources(r) == "daemon defaults");
  r.set_gpus(1);
  CHECK(DescribeResources(r) == "1 GPU");
  r = v1::Resources();
  r.set_cpus(4);
  r.set_mem_mb(16384);
  CHECK(DescribeResources(r) == "4 CPUs, 16G memory");
}

TEST_CASE("JSON output is the canonical mapping and parses back to the same proto") {
  v1::Job job = RunningJob();
  (*job.mutable_spec()->mutable_env())["A"] = "1";
  job.add_events()->set_state(v1::JOB_STATE_RUNNING);
  auto json = ToJson(job);
  REQUIRE(json.ok());
  CHECK(json->find('\n') == std::string::npos);
  CHECK_THAT(*json, Catch::Contains("\"state\":\"JOB_STATE_RUNNING\""));
  CHECK_THAT(*json, Catch::Contains("\"id\":\"7\""));  // uint64 is a string in proto3 JSON
  v1::Job parsed;
  REQUIRE(google::protobuf::util::JsonStringToMessage(*json, &parsed).ok());
  CHECK(google::protobuf::util::MessageDifferencer::Equals(parsed, job));

  v1::ListJobsResponse list;
  *list.add_jobs() = RunningJob();
  *list.add_jobs() = FailedJob();
  auto list_json = ToJson(list);
  REQUIRE(list_json.ok());
  CHECK_THAT(*list_json, Catch::StartsWith("{\"jobs\":["));
  v1::ListJobsResponse parsed_list;
  REQUIRE(google::protobuf::util::JsonStringToMessage(*list_json, &parsed_list).ok());
  CHECK(google::protobuf::util::MessageDifferencer::Equals(parsed_list, list));
}
