// Elastic pools end to end: the pool's resume program starts a real
// gpusched-agent with fake GPUs on loopback, its suspend program stops it.
// Jobs boot exactly the nodes they need; failed, hung and silent boots put
// the node back to POWERED_DOWN with the reason and are retried; a daemon
// killed while nodes boot carries on after its restart; nothing is lost and
// no job runs twice.
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/test_cluster.h"
#include "tests/support/temp_dir.h"

using gpusched::testing::TempDir;
using gpusched::testing::TestCluster;
namespace v1 = gpusched::v1;

namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The operator's programs. Each resume attempt takes the next line of
// `plan` (empty: ok): "fail" exits 3, "hang" sleeps past any timeout,
// "noagent" exits 0 without starting one, "slow" waits 2 s first.
class PoolHost {
 public:
  PoolHost() {
    const std::string d = dir_.path().string();
    dir_.Write("plan", "");
    Executable("resume.sh",
               "#!/bin/sh\n"
               "d=" +
                   d +
                   "\n"
                   "echo \"resuming $1\"\n"
                   "cat \"$2\" >> \"$d/requests\"\n"
                   "action=$(head -n 1 \"$d/plan\"); sed -i 1d \"$d/plan\"\n"
                   "case \"$action\" in\n"
                   "  fail) echo \"no capacity for $1\" >&2; exit 3 ;;\n"
                   "  hang) exec sleep 600 ;;\n"
                   "  noagent) exit 0 ;;\n"
                   "  slow) sleep 2 ;;\n"
                   "esac\n"
                   "IFS=,\n"
                   "for n in $1; do\n"
                   "  " GPUSCHED_AGENT_BIN
                   " --daemon \"$(cat \"$d/address\")\" --node-name \"$n\" --fake-gpus 2 \\\n"
                   "    --log-dir \"$d/logs/$n\" --heartbeat-interval-ms 500 >>\"$d/agent-$n.log\" 2>&1 </dev/null &\n"
                   "  echo $! > \"$d/$n.pid\"\n"
                   "done\n");
    Executable("suspend.sh",
               "#!/bin/sh\n"
               "d=" +
                   d +
                   "\n"
                   "IFS=,\n"
                   "for n in $1; do\n"
                   "  kill $(cat \"$d/$n.pid\") && rm \"$d/$n.pid\" && echo \"stopped $n\"\n"
                   "done\n");
  }
  ~PoolHost() {
    // Agents the programs started outlive nothing of the test.
    for (const char* n : {"pa", "pb", "pc"}) {
      const std::string pid = Slurp(dir_ / (std::string(n) + ".pid"));
      if (!pid.empty()) kill(std::stoi(pid), SIGKILL);
    }
  }

  std::string Config(const std::string& resume_timeout, const std::string& pool_class = "on-demand") const {
    return dir_.Write("gpuschedd.toml",
                      "[[pool]]\nname = \"burst\"\nnodes = \"pa, pb, pc\"\nclass = \"" + pool_class +
                          "\"\n"
                          "cost_per_gpu_hour = 2.5\nresume_program = \"resume.sh\"\nsuspend_program = \"suspend.sh\"\n"
                          "resume_timeout = \"" +
                          resume_timeout +
                          "\"\nidle_before_suspend = \"0:02\"\n"
                          "gpus = 2\ncpus = 1\nmemory_mb = 64\n");
  }
  void Plan(const std::string& lines) const { dir_.Write("plan", lines); }
  void SetAddress(const std::string& address) const { dir_.Write("address", address); }
  bool Running(const std::string& node) const { return !Slurp(dir_ / (node + ".pid")).empty(); }
  std::string Requests() const { return Slurp(dir_ / "requests"); }
  std::string path(const std::string& name) const { return dir_ / name; }

 private:
  void Executable(const std::string& name, const std::string& text) { chmod(dir_.Write(name, text).c_str(), 0755); }
  TempDir dir_;
};

// The lines of `text`, sorted: ranks append in any order.
std::string Sorted(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (const std::string& line : lines) out += line + "\n";
  return out;
}

v1::Node NodeOf(const TestCluster& cluster, const std::string& name) {
  v1::ListNodesResponse nodes;
  grpc::ClientContext ctx;
  cluster.stub().ListNodes(&ctx, {}, &nodes);
  for (const v1::Node& node : nodes.nodes()) {
    if (node.info().name() == name) return node;
  }
  FAIL("no node " << name);
  return {};
}

template <typename Done>
void WaitUntil(const TestCluster& cluster, double seconds, Done done, const std::string& what) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(int(seconds * 1000));
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) FAIL(what << "\ndaemon log:\n" << cluster.DaemonLog());
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace

TEST_CASE("elastic pool: a gang boots exactly its nodes, runs, and they power down when idle", "[integration]") {
  PoolHost host;
  TestCluster cluster({}, {"--config", host.Config("0:30")});
  host.SetAddress(cluster.address());
  for (const char* n : {"pa", "pb", "pc"}) CHECK(NodeOf(cluster, n).state() == v1::NODE_STATE_POWERED_DOWN);
  CHECK_THAT(cluster.Cli({"nodes"}).out, Catch::Contains("POWERED_DOWN"));

  const uint64_t job = cluster.Submit({"--nodes", "2", "--gpus-per-node", "2", "--", "/bin/true"});
  const v1::Job done = cluster.WaitForEnd(job, 30);
  CHECK(done.state() == v1::JOB_STATE_COMPLETED);
  REQUIRE(done.allocation().nodes_size() == 2);
  // Exactly the gang's nodes, in one resume: the third never booted.
  CHECK(NodeOf(cluster, "pc").state() == v1::NODE_STATE_POWERED_DOWN);
  CHECK_FALSE(host.Running("pc"));
  CHECK_THAT(host.Requests(),
             Catch::Contains("\"action\": \"resume\", \"pool\": \"burst\", \"nodes\": [\"pa\", \"pb\"]"));
  CHECK_THAT(host.Requests(), Catch::Contains("{\"id\": " + std::to_string(job) + ", \"nodes\": [\"pa\", \"pb\"]"));
  // The program's output is in the daemon's log with the pool and nodes.
  CHECK_THAT(cluster.DaemonLog(), Catch::Contains("pool burst resume pa,pb stdout: resuming pa,pb"));

  WaitUntil(
      cluster, 20,
      [&] {
        return NodeOf(cluster, "pa").state() == v1::NODE_STATE_POWERED_DOWN &&
               NodeOf(cluster, "pb").state() == v1::NODE_STATE_POWERED_DOWN;
      },
      "the idle nodes did not power down");
  CHECK_FALSE(host.Running("pa"));
  CHECK_FALSE(host.Running("pb"));
  CHECK_THAT(NodeOf(cluster, "pa").reason(), Catch::Contains("suspend program done (powering down: idle for"));
  CHECK_THAT(cluster.DaemonLog(), Catch::Contains("pool burst suspend pa,pb stdout: stopped pa"));
}

TEST_CASE("elastic pool: failed, hung and silent boots go back to POWERED_DOWN with the reason and are retried",
          "[integration]") {
  PoolHost host;
  host.Plan("fail\nhang\nnoagent\n");
  TestCluster cluster({}, {"--config", host.Config("0:03")});
  host.SetAddress(cluster.address());
  const std::string runs = host.path("runs");
  const uint64_t job =
      cluster.Submit({"--gpus", "2", "--", "/bin/sh", "-c", "echo ran-$RANK-$GPUSCHED_RESTART_COUNT >> " + runs});
  const v1::Job done = cluster.WaitForEnd(job, 40);
  CHECK(done.state() == v1::JOB_STATE_COMPLETED);
  CHECK(Sorted(Slurp(runs)) == "ran-0-0\nran-1-0\n");  // each rank once, attempt 0
  const std::string log = cluster.DaemonLog();
  CHECK_THAT(log, Catch::Contains("stderr: no capacity for pa"));
  CHECK_THAT(log, Catch::Contains("POWERED_DOWN (resume failed: " + host.path("resume.sh") + " exited with status 3)"));
  CHECK_THAT(log, Catch::Contains("did not finish within 3s; killed it"));
  CHECK_THAT(log, Catch::Contains("POWERED_DOWN (resume timed out: its agent did not register with its GPUs"));
  CHECK_THAT(log, Catch::Contains("pa: UP (its agent registered with 2 GPUs)"));
}

TEST_CASE("elastic pool: a daemon killed while nodes boot carries on after its restart", "[integration]") {
  PoolHost host;
  host.Plan("slow\n");
  TestCluster cluster({}, {"--config", host.Config("0:30")});
  host.SetAddress(cluster.address());
  const std::string runs = host.path("runs");
  const uint64_t job =
      cluster.Submit({"--gpus", "2", "--", "/bin/sh", "-c", "echo ran-$RANK-$GPUSCHED_RESTART_COUNT >> " + runs});
  // Killed once the resume program runs: a daemon killed between marking
  // the node POWERING_UP and starting the program cannot know whether it
  // ran, and rightly waits out resume_timeout (30 s) before booting again.
  WaitUntil(
      cluster, 10,
      [&] {
        return NodeOf(cluster, "pa").state() == v1::NODE_STATE_POWERING_UP &&
               host.Requests().find("\"resume\"") != std::string::npos;
      },
      "pa did not start booting");
  cluster.CrashDaemon();
  cluster.StartDaemon();
  CHECK(NodeOf(cluster, "pa").state() != v1::NODE_STATE_POWERED_DOWN);
  const v1::Job done = cluster.WaitForEnd(job, 30);
  CHECK(done.state() == v1::JOB_STATE_COMPLETED);
  CHECK(Sorted(Slurp(runs)) == "ran-0-0\nran-1-0\n");  // each rank once, attempt 0
  // One boot: the restarted daemon waited for the one in flight.
  size_t resumes = 0;
  const std::string requests = host.Requests();
  for (size_t at = requests.find("\"resume\""); at != std::string::npos; at = requests.find("\"resume\"", at + 1)) {
    ++resumes;
  }
  CHECK(resumes == 1);
}

TEST_CASE("elastic pool: a spot interruption of a running 2-node gang requeues it onto a replacement node",
          "[integration]") {
  PoolHost host;
  TestCluster cluster({}, {"--config", host.Config("0:30", "spot")});
  host.SetAddress(cluster.address());
  const std::string runs = host.path("runs");
  // A job that checkpoints on notice: its first attempt waits to be
  // interrupted, keeps what GPUSCHED_PREEMPT_NOTICE says, and leaves; the
  // next attempt (from the checkpoint) finishes.
  const std::string script = "echo ran-$NODE_RANK-$GPUSCHED_RESTART_COUNT >> " + runs +
                             "\n"
                             "[ \"$GPUSCHED_RESTART_COUNT\" != 0 ] && exit 0\n"
                             "trap 'cp \"$GPUSCHED_PREEMPT_NOTICE\" " +
                             runs +
                             "-notice-$NODE_RANK; exit 0' TERM\n"
                             "sleep 300 & wait\n";
  const uint64_t job =
      cluster.Submit({"--nodes", "2", "--gpus-per-node", "2", "--launch", "per-node", "--", "/bin/sh", "-c", script});
  WaitUntil(
      cluster, 30,
      [&] {
        return cluster.GetJob(job).state() == v1::JOB_STATE_RUNNING && Sorted(Slurp(runs)) == "ran-0-0\nran-1-0\n";
      },
      "the gang did not start");
  // A notice shorter than the pool's idle_before_suspend: pa is taken back
  // at the deadline, not suspended for idling first.
  const auto interrupt = cluster.Cli({"nodes", "interrupt", "pa", "--in", "1s", "--reason", "notice-17"});
  INFO(interrupt.out << interrupt.err);
  REQUIRE(interrupt.exit_code == 0);
  CHECK_THAT(interrupt.out, Catch::Contains("node pa: spot interruption (notice-17): taken back at"));

  const v1::Job done = cluster.WaitForEnd(job, 40);
  CHECK(done.state() == v1::JOB_STATE_COMPLETED);
  CHECK(done.attempt() == 1);
  // Each rank once per attempt: nothing lost, nothing run twice.
  CHECK(Sorted(Slurp(runs)) == "ran-0-0\nran-0-1\nran-1-0\nran-1-1\n");
  // Both ranks were told the deadline before their SIGTERM.
  for (const char* rank : {"0", "1"}) {
    const std::string notice = Slurp(runs + "-notice-" + rank);
    CHECK_THAT(notice, Catch::Contains("deadline_unix_ms="));
    CHECK_THAT(notice, Catch::Contains("reason=spot interruption of pa"));
  }
  // The second attempt ran on pb and the replacement pc, never on pa.
  std::set<std::string> placed;
  for (const auto& part : done.allocation().nodes()) placed.insert(part.node());
  CHECK(placed == std::set<std::string>{"pb", "pc"});
  // At the deadline pa was taken back: powered down by the suspend program.
  WaitUntil(
      cluster, 20,
      [&] {
        const v1::Node pa = NodeOf(cluster, "pa");
        return pa.state() == v1::NODE_STATE_POWERED_DOWN && pa.drain_reason().empty();
      },
      "pa was not taken back");
  CHECK_FALSE(host.Running("pa"));
  CHECK_THAT(NodeOf(cluster, "pa").reason(), Catch::Contains("taken back by its spot interruption"));
  CHECK(NodeOf(cluster, "pa").drain_reason().empty());
}
