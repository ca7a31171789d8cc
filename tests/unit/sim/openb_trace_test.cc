// The Alibaba openb node and pod lists: the published files load, and a
// broken row fails naming its line and field.
#include "daemon/sim/openb_trace.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "absl/strings/match.h"
#include "daemon/sim/trace_file.h"
#include "tests/skip.h"

using namespace gpusched::sim;

namespace {

const std::string kOpenb = std::string(GPUSCHED_TRACES_DIR) + "/alibaba-openb";
constexpr const char* kNodeHeader = "sn,cpu_milli,memory_mib,gpu,model\n";
constexpr const char* kPodHeader =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n";

std::string ErrorOfPods(const std::string& rows) {
  auto pods = ParseOpenbPods(std::string(kPodHeader) + rows);
  REQUIRE_FALSE(pods.ok());
  return std::string(pods.status().message());
}

std::string ErrorOfNodes(const std::string& rows) {
  auto nodes = ParseOpenbNodes(std::string(kNodeHeader) + rows);
  REQUIRE_FALSE(nodes.ok());
  return std::string(nodes.status().message());
}

}  // namespace

TEST_CASE("openb: the published node and pod lists load with the counts their README gives") {
  if (!std::filesystem::is_directory(kOpenb)) GPUSCHED_SKIP("no " << kOpenb);
  auto nodes = LoadOpenbNodes(kOpenb + "/openb_node_list_gpu_node.csv");
  REQUIRE(nodes.ok());
  CHECK(nodes->size() == 1213);
  int gpus = 0;
  for (const OpenbNode& n : *nodes) gpus += n.gpus;
  CHECK(gpus == 6212);
  auto pods = LoadOpenbPods(kOpenb + "/openb_pod_list_default.csv");
  REQUIRE(pods.ok());
  CHECK(pods->size() == 8152);
  int cpu_only = 0, fractional = 0, multi = 0;
  for (const OpenbPod& p : *pods) {
    cpu_only += p.num_gpu == 0;
    fractional += p.num_gpu == 1 && p.gpu_milli < 1000;
    multi += p.num_gpu > 1;
  }
  CHECK(cpu_only == 1088);
  CHECK(fractional == 3078);
  CHECK(multi == 75);
}

TEST_CASE("openb: a pod row that is wrong names its line and field") {
  CHECK(ErrorOfPods("p0,1000,1024,1,500,,LS,Running,0,1,0\np1,1000,1024,1,1001,,LS,Running,0,1,0\n") ==
        "line 3: field gpu_milli: at most 1000, got 1001");
  CHECK(ErrorOfPods("p0,1000,1024,0,500,,LS,Running,0,1,0\n") == "line 2: field gpu_milli: is 500 but num_gpu is 0");
  CHECK(ErrorOfPods("p0,1000,1024,2,0,,LS,Running,0,1,0\n") == "line 2: field gpu_milli: is 0 but num_gpu is 2");
  CHECK(ErrorOfPods("p0,lots,1024,1,500,,LS,Running,0,1,0\n") ==
        "line 2: field cpu_milli: expected a whole number >= 0, got \"lots\"");
  CHECK(ErrorOfPods("p0,1000,1024,1,500,T4||V100,LS,Running,0,1,0\n") ==
        "line 2: field gpu_spec: has an empty model name");
  CHECK(ErrorOfPods(",1000,1024,1,500,,LS,Running,0,1,0\n") == "line 2: field name: is empty");
  CHECK(ErrorOfPods("p0,1000,1024,1,500\n") == "line 2: expected 11 fields as in the header, got 5");
  CHECK(ErrorOfPods("") == "no pods: the file has a header only");
  auto no_column = ParseOpenbPods("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,1,1,1\n");
  REQUIRE_FALSE(no_column.ok());
  CHECK(no_column.status().message() ==
        "line 1: field gpu_spec: missing from the header (expected name,cpu_milli,memory_mib,num_gpu,gpu_milli,"
        "gpu_spec)");
}

TEST_CASE("openb: a pod's allowed models are split on |") {
  auto pods = ParseOpenbPods(std::string(kPodHeader) + "p0,1000,1024,1,500,T4|V100M16,LS,Running,0,1,0\n");
  REQUIRE(pods.ok());
  CHECK((*pods)[0].gpu_spec == std::vector<std::string>{"T4", "V100M16"});
}

TEST_CASE("openb: a node row that is wrong names its line and field") {
  CHECK(ErrorOfNodes("n0,64000,262144,2,P100\nn0,64000,262144,2,P100\n") ==
        "line 3: field sn: node n0 is also on line 2");
  CHECK(ErrorOfNodes("n0,64000,262144,65,P100\n") == "line 2: field gpu: at most 64, got 65");
  CHECK(ErrorOfNodes("n0,64000,262144,2,\n") == "line 2: field model: is empty");
  CHECK(ErrorOfNodes("n0,-5,262144,2,P100\n") == "line 2: field cpu_milli: expected a whole number >= 0, got \"-5\"");
}

TEST_CASE("openb: a file that cannot be read is named") {
  auto missing = LoadOpenbNodes("/nonexistent/nodes.csv");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message() == "cannot read trace file /nonexistent/nodes.csv");
  CHECK(absl::IsNotFound(missing.status()));
}

TEST_CASE("openb: as a trace, each scheduled GPU pod is a job from its creation for deletion - scheduled") {
  // p0 is created at 100 and scheduled at 160: it waited 60 s at Alibaba,
  // and held its GPU share for 500 - 160.
  auto trace = ParseOpenbTrace(std::string(kPodHeader) +
                               "p0,6500,12288,1,460,,LS,Running,100,500,160\n"
                               "cpu,4000,8192,0,0,,BE,Running,120,900,120\n"
                               "never,4000,8192,1,1000,,LS,Pending,130,900,\n"
                               "p8,64000,262144,8,1000,G2,LS,Succeeded,150,4150,150\n");
  REQUIRE(trace.ok());
  CHECK(trace->rows == 4);
  CHECK(trace->skipped_no_gpus == 1);
  CHECK(trace->skipped_unknown_duration == 1);
  REQUIRE(trace->jobs.size() == 2);
  const TraceJob& share = trace->jobs[0];
  CHECK(share.id == "p0");
  CHECK(share.submit_s == 0);  // times start at the first job's submission
  CHECK(share.duration_s == 340);
  CHECK(share.gpus == 1);
  CHECK(share.gpu_milli == 460);
  CHECK(share.cpu_milli == 6500);
  CHECK(share.memory_mib == 12288);
  CHECK(share.gpu_model.empty());
  CHECK(share.one_node);
  CHECK(share.user == kOpenbUser);
  CHECK(share.line == 2);
  const TraceJob& whole = trace->jobs[1];
  CHECK(whole.submit_s == 50);
  CHECK(whole.duration_s == 4000);
  CHECK(whole.gpus == 8);
  CHECK(whole.gpu_milli == 1000);
  CHECK(whole.gpu_model == "G2");
}

TEST_CASE("openb: as a trace, times out of order and several allowed models are refused by line") {
  auto error_of = [](const std::string& rows) {
    auto trace = ParseOpenbTrace(std::string(kPodHeader) + rows);
    REQUIRE_FALSE(trace.ok());
    return std::string(trace.status().message());
  };
  CHECK(error_of("p0,1000,1024,1,500,,LS,Running,100,500,90\n") ==
        "line 2: field scheduled_time: 90 is before creation_time 100");
  CHECK(error_of("p0,1000,1024,1,500,,LS,Running,100,150,200\n") ==
        "line 2: field deletion_time: 150 is before scheduled_time 200");
  CHECK(error_of("p0,1000,1024,1,500,,LS,Running,,150,200\n") == "line 2: field creation_time: is empty");
  CHECK(error_of("p0,1000,1024,1,500,T4|P100,LS,Running,0,150,0\n") ==
        "line 2: field gpu_spec: names 2 models; a replay through the core takes one (a job asks for one model)");
  auto no_times = ParseOpenbTrace("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\np,1,1,1,1,\n");
  REQUIRE_FALSE(no_times.ok());
  CHECK(absl::StrContains(no_times.status().message(), "field creation_time: missing from the header"));
}

TEST_CASE("openb: the published pod list is told apart by its header and replays 6,203 of its pods") {
  if (!std::filesystem::is_directory(kOpenb)) GPUSCHED_SKIP("no " << kOpenb);
  const std::string path = kOpenb + "/openb_pod_list_default.csv";
  auto trace = LoadTrace(path, TraceFormat::kAuto, TraceOptions{});
  REQUIRE(trace.ok());
  CHECK(trace->rows == 8152);
  CHECK(trace->skipped_no_gpus == 1088);
  CHECK(trace->skipped_unknown_duration == 861);  // the Pending pods that ask for GPUs
  CHECK(trace->jobs.size() == 6203);
  CHECK(trace->warnings.empty());
  TraceOptions one_queue;
  one_queue.queue = "cluster04";
  auto queued = LoadTrace(path, TraceFormat::kAuto, one_queue);
  REQUIRE_FALSE(queued.ok());
  CHECK(queued.status().message() == path + ": an openb pod list has no queues; replay it without --queue");
}
