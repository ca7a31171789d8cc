// One job through the real binaries: submit, run, logs, exit codes, cancel, limits.

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/integration/test_cluster.h"

using namespace gpusched;
using gpusched::testing::TestCluster;

namespace {

std::vector<int> ReadPids(const std::string& path) {
  std::ifstream in(path);
  std::vector<int> pids;
  int pid;
  while (in >> pid) pids.push_back(pid);
  return pids;
}

}  // namespace

TEST_CASE("a job runs, is COMPLETED with exit code 0, and its log holds stdout and stderr", "[integration]") {
  TestCluster cluster;
  uint64_t id = cluster.Submit({"--gpus", "1", "--name", "hello", "--", "/bin/sh", "-c",
                                "echo hello from job $GPUSCHED_JOB_ID; echo to-stderr >&2"});
  v1::Job job = cluster.WaitForEnd(id);
  CHECK(job.state() == v1::JOB_STATE_COMPLETED);
  CHECK(job.exit_code() == 0);
  REQUIRE(job.allocation().nodes_size() == 1);
  CHECK(job.allocation().nodes(0).gpu_indices_size() == 1);

  auto logs = cluster.Cli({"logs", std::to_string(id)});
  CHECK(logs.exit_code == 0);
  CHECK(logs.out.find("hello from job " + std::to_string(id)) != std::string::npos);
  CHECK(logs.out.find("to-stderr") != std::string::npos);

  auto status = cluster.Cli({"status", std::to_string(id)});
  CHECK(status.exit_code == 0);
  CHECK(status.out.find("COMPLETED") != std::string::npos);
  auto json = cluster.Cli({"status", std::to_string(id), "--json"});
  CHECK(json.exit_code == 0);
  CHECK(json.out.find("\"JOB_STATE_COMPLETED\"") != std::string::npos);

  // The daemon's log has a key=value line for each durable change.
  const std::string log = cluster.DaemonLog();
  INFO(log);
  CHECK(log.find("job=" + std::to_string(id) + " state=PENDING reason=\"submitted\"") != std::string::npos);
  CHECK(log.find("job=" + std::to_string(id) + " state=STARTING reason=\"placed on node-") != std::string::npos);
  CHECK(log.find("job=" + std::to_string(id) + " state=COMPLETED") != std::string::npos);
  CHECK(log.find("node=node-a state=UP drained=no") != std::string::npos);
}

TEST_CASE("a failing job is FAILED with its exit code", "[integration]") {
  TestCluster cluster;
  uint64_t id = cluster.Submit({"--gpus", "2", "--", "/bin/sh", "-c", "exit 3"});
  v1::Job job = cluster.WaitForEnd(id);
  CHECK(job.state() == v1::JOB_STATE_FAILED);
  CHECK(job.exit_code() == 3);
  auto missing = cluster.Submit({"--gpus", "1", "--", "/no/such/program"});
  v1::Job failed = cluster.WaitForEnd(missing);
  CHECK(failed.state() == v1::JOB_STATE_FAILED);
  CHECK(failed.reason().find("/no/such/program") != std::string::npos);
}

TEST_CASE("a CPU-only job runs with no GPU visible", "[integration]") {
  TestCluster cluster;
  uint64_t id = cluster.Submit({"--gpus", "0", "--", "/bin/sh", "-c", "echo \"CVD=[$CUDA_VISIBLE_DEVICES]\""});
  v1::Job job = cluster.WaitForEnd(id);
  CHECK(job.state() == v1::JOB_STATE_COMPLETED);
  auto logs = cluster.Cli({"logs", std::to_string(id)});
  CHECK(logs.out.find("CVD=[]") != std::string::npos);
}

TEST_CASE("cancel kills the job's whole process group and frees its GPUs", "[integration]") {
  TestCluster cluster;
  // Each of the 4 ranks (one per GPU) records its shell and two background
  // children in a file of its own: 12 processes in 4 process groups.
  const std::string pids = cluster.dir() + "/pids-";
  uint64_t id = cluster.Submit({"--gpus", "4", "--", "/bin/sh", "-c",
                                "f=" + pids +
                                    "$RANK; echo $$ > $f.tmp; sleep 300 & echo $! >> $f.tmp; "
                                    "sleep 300 & echo $! >> $f.tmp; mv $f.tmp $f; wait"});
  cluster.WaitForState(id, v1::JOB_STATE_RUNNING);
  std::vector<int> started;
  for (int i = 0; i < 100 && started.size() < 12; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    started.clear();
    for (int rank = 0; rank < 4; ++rank) {
      for (int pid : ReadPids(pids + std::to_string(rank))) started.push_back(pid);
    }
  }
  REQUIRE(started.size() == 12);

  auto cancel = cluster.Cli({"cancel", std::to_string(id)});
  CHECK(cancel.exit_code == 0);
  v1::Job job = cluster.WaitForEnd(id);
  CHECK(job.state() == v1::JOB_STATE_CANCELLED);
  for (int pid : started) {
    INFO("pid " << pid);
    bool gone = false;
    for (int i = 0; i < 100 && !gone; ++i) {
      gone = gpusched::testing::ProcessGone(pid);
      if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    CHECK(gone);
  }
  // The GPUs are free again: another 4-GPU job runs on that node.
  uint64_t next = cluster.Submit({"--gpus", "4", "--", "/bin/true"});
  CHECK(cluster.WaitForEnd(next).state() == v1::JOB_STATE_COMPLETED);

  auto again = cluster.Cli({"cancel", std::to_string(id)});
  CHECK(again.exit_code != 0);
  CHECK(again.err.find("already ended") != std::string::npos);
}

TEST_CASE("a job past its time limit ends TIMEOUT, even if it ignores SIGTERM", "[integration]") {
  TestCluster cluster;
  uint64_t polite = cluster.Submit({"--gpus", "1", "--time", "0:01", "--", "/bin/sleep", "300"});
  uint64_t stubborn =
      cluster.Submit({"--gpus", "1", "--time", "0:01", "--", "/bin/sh", "-c", "trap '' TERM; sleep 300 & wait; wait"});
  v1::Job a = cluster.WaitForEnd(polite);
  v1::Job b = cluster.WaitForEnd(stubborn);
  CHECK(a.state() == v1::JOB_STATE_TIMEOUT);
  CHECK(b.state() == v1::JOB_STATE_TIMEOUT);
  CHECK(a.reason().find("time limit") != std::string::npos);
}

TEST_CASE("logs --follow streams a running job's output until it ends", "[integration]") {
  TestCluster cluster;
  uint64_t id =
      cluster.Submit({"--gpus", "1", "--", "/bin/sh", "-c", "echo first; sleep 1; echo second; sleep 1; echo third"});
  cluster.WaitForState(id, v1::JOB_STATE_RUNNING);
  auto follow = cluster.Cli({"logs", std::to_string(id), "--follow"});
  CHECK(follow.exit_code == 0);
  CHECK(follow.out == "first\nsecond\nthird\n");
  CHECK(cluster.GetJob(id).state() == v1::JOB_STATE_COMPLETED);
}

TEST_CASE("#SBATCH --output: rank 0's output goes to the file it names, its %j filled in", "[integration]") {
  TestCluster cluster({{"node-a", 2}});
  const std::string script = cluster.dir() + "/train.sh";
  {
    std::ofstream(script) << "#!/bin/sh\n#SBATCH --gpus=2 --output=" << cluster.dir()
                          << "/slurm-%j.out\necho hello from rank $RANK\necho warning >&2\n";
  }
  const uint64_t id = cluster.Submit({"--script", script});
  REQUIRE(cluster.WaitForEnd(id).state() == v1::JOB_STATE_COMPLETED);
  std::ifstream in(cluster.dir() + "/slurm-" + std::to_string(id) + ".out");
  std::stringstream text;
  text << in.rdbuf();
  CHECK(text.str() == "hello from rank 0\nwarning\n");
  // Rank 1 keeps its log as always.
  CHECK(cluster.Cli({"logs", std::to_string(id), "--rank", "1"}).out == "hello from rank 1\nwarning\n");
  const std::string status = cluster.Cli({"status", std::to_string(id)}).out;
  CHECK_THAT(status, Catch::Contains("Output:") && Catch::Contains("/slurm-%j.out (rank 0's stdout and stderr)"));
  CHECK_THAT(status, Catch::Contains("--output " + cluster.dir() + "/slurm-%j.out  (script line 2: #SBATCH"));
}

TEST_CASE("#SBATCH --error: rank 0's stderr goes to its own file, its stdout to --output", "[integration]") {
  TestCluster cluster({{"node-a", 1}});
  const std::string script = cluster.dir() + "/train.sh";
  {
    std::ofstream(script) << "#!/bin/sh\n#SBATCH --gpus=1 -o out-%j.txt\n#SBATCH -e err-%j.txt\necho progress\n"
                             "echo warning >&2\n";
  }
  const uint64_t id = cluster.Submit({"--script", script, "--workdir", cluster.dir()});
  REQUIRE(cluster.WaitForEnd(id).state() == v1::JOB_STATE_COMPLETED);
  auto read = [&](const std::string& name) {
    std::ifstream in(cluster.dir() + "/" + name + std::to_string(id) + ".txt");
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  };
  CHECK(read("out-") == "progress\n");
  CHECK(read("err-") == "warning\n");
  const std::string status = cluster.Cli({"status", std::to_string(id)}).out;
  CHECK_THAT(status,
             Catch::Contains("/out-%j.txt (rank 0's stdout)") && Catch::Contains("/err-%j.txt (rank 0's stderr)"));
}
