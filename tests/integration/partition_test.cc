// Four "hosts" in network namespaces this test creates (a bridge in the
// daemon's, a veth pair to each agent's; addresses exist only inside them):
// a gang's MASTER_ADDR is its rank-0 host's address, and a host cut off from
// the daemon loses its node, the gang is stopped on every node and runs again
// elsewhere, and once healed the cut-off host keeps no half of it. Needs
// root (ip netns); skipped otherwise.

#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <limits>
#include <memory>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "google/protobuf/util/json_util.h"
#include "gpusched/v1/scheduler.pb.h"
#include "tests/skip.h"
#include "tests/support/subprocess.h"

using namespace gpusched;
using gpusched::testing::CommandResult;
using gpusched::testing::ReadFile;
using gpusched::testing::RunCommand;
using gpusched::testing::Subprocess;

namespace {

constexpr const char* kIp = "/usr/sbin/ip";
constexpr const char* kDaemonAddress = "10.77.0.1:6870";

void Run(const std::vector<std::string>& argv) {
  CommandResult r = RunCommand(argv);
  INFO(absl::StrJoin(argv, " ") << ": " << r.out << r.err);
  REQUIRE(r.exit_code == 0);
}

// Host 0 (the daemon's) holds a bridge at 10.77.0.1; host i (1..3) reaches it
// over a veth pair as 10.77.0.(i+1). Names carry the pid: tests may run side by side.
class Hosts {
 public:
  Hosts() : prefix_(absl::StrCat("gs", getpid() % 100000)) {
    for (int i = 0; i < 4; ++i) Run({kIp, "netns", "add", Ns(i)});
    for (int i = 0; i < 4; ++i) Run({kIp, "-n", Ns(i), "link", "set", "lo", "up"});
    Run({kIp, "-n", Ns(0), "link", "add", "br0", "type", "bridge"});
    Run({kIp, "-n", Ns(0), "addr", "add", "10.77.0.1/24", "dev", "br0"});
    Run({kIp, "-n", Ns(0), "link", "set", "br0", "up"});
    for (int i = 1; i < 4; ++i) {
      Run({kIp, "link", "add", BridgeEnd(i), "type", "veth", "peer", "name", HostEnd(i)});
      Run({kIp, "link", "set", BridgeEnd(i), "netns", Ns(0)});
      Run({kIp, "link", "set", HostEnd(i), "netns", Ns(i)});
      Run({kIp, "-n", Ns(0), "link", "set", BridgeEnd(i), "master", "br0"});
      Run({kIp, "-n", Ns(0), "link", "set", BridgeEnd(i), "up"});
      Run({kIp, "-n", Ns(i), "addr", "add", Address(i) + "/24", "dev", HostEnd(i)});
      Run({kIp, "-n", Ns(i), "link", "set", HostEnd(i), "up"});
    }
  }
  ~Hosts() {
    for (int i = 0; i < 4; ++i) RunCommand({kIp, "netns", "del", Ns(i)});
  }

  std::string Ns(int i) const { return absl::StrCat(prefix_, "h", i); }
  static std::string Address(int i) { return absl::StrCat("10.77.0.", i + 1); }
  // argv run on host i.
  std::vector<std::string> On(int i, std::vector<std::string> argv) const {
    argv.insert(argv.begin(), {kIp, "netns", "exec", Ns(i)});
    return argv;
  }
  // Cuts host i off the network, or puts it back.
  void Link(int i, bool up) const { Run({kIp, "-n", Ns(0), "link", "set", BridgeEnd(i), up ? "up" : "down"}); }

 private:
  std::string BridgeEnd(int i) const { return absl::StrCat(prefix_, "b", i); }
  std::string HostEnd(int i) const { return absl::StrCat(prefix_, "p", i); }
  const std::string prefix_;
};

template <typename Pred>
bool WaitUntil(Pred pred, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return pred();
}

bool Alive(int pid) { return pid > 0 && kill(pid, 0) == 0 && !gpusched::testing::ProcessGone(pid); }

// The first and last beat (CLOCK_REALTIME in ns, written by `date +%s%N`
// every 50 ms by a gang's ranks) of an attempt, over the files of all its
// nodes: beat-NODE-ATTEMPT. All the hosts share this machine's clock.
struct BeatSpan {
  int64_t first = std::numeric_limits<int64_t>::max();
  int64_t last = std::numeric_limits<int64_t>::min();
  int files = 0;
};
BeatSpan Beats(const std::string& dir, int attempt) {
  BeatSpan span;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (!absl::StartsWith(name, "beat-") || !absl::EndsWith(name, absl::StrCat("-", attempt))) continue;
    ++span.files;
    for (absl::string_view line : absl::StrSplit(ReadFile(entry.path().string()), '\n', absl::SkipEmpty())) {
      int64_t ns = 0;
      if (!absl::SimpleAtoi(line, &ns)) continue;
      span.first = std::min(span.first, ns);
      span.last = std::max(span.last, ns);
    }
  }
  return span;
}

}  // namespace

TEST_CASE("a host cut off loses its node; its gang runs again elsewhere, and healed it keeps no half of it",
          "[integration]") {
  if (geteuid() != 0 || access(kIp, X_OK) != 0) {
    GPUSCHED_SKIP("not root, or no ip(8): cannot make network namespaces");
  }
  char tmpl[] = "/tmp/gpusched-netns-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  Hosts hosts;
  auto cli = [&](std::vector<std::string> args) {
    args.insert(args.begin(), GPUSCHED_CLI_BIN);
    return RunCommand(hosts.On(0, args), {{"GPUSCHED_ADDR", kDaemonAddress}});
  };
  auto job = [&](uint64_t id) {
    CommandResult r = cli({"status", std::to_string(id), "--json"});
    v1::Job out;
    REQUIRE(google::protobuf::util::JsonStringToMessage(r.out, &out).ok());
    return out;
  };
  auto node_state = [&](const std::string& name) {
    v1::ListNodesResponse nodes;
    CommandResult r = cli({"nodes", "--json"});
    if (!google::protobuf::util::JsonStringToMessage(r.out, &nodes).ok()) return v1::NODE_STATE_UNSPECIFIED;
    for (const v1::Node& node : nodes.nodes()) {
      if (node.info().name() == name) return node.state();
    }
    return v1::NODE_STATE_UNSPECIFIED;
  };
  {
    Subprocess daemon(
        hosts.On(0, {GPUSCHEDD_BIN, "serve", "--init", "--allow-unauthenticated-tcp", "--allow-root-jobs", "--listen",
                     kDaemonAddress, "--state-dir", dir + "/state", "--tick-ms", "50", "--kill-grace-ms", "500",
                     "--node-not-responding-ms", "1500", "--node-down-ms", "3000"}),
        dir + "/daemon.log");
    REQUIRE(WaitUntil([&] { return absl::StrContains(daemon.Log(), "serving on"); }, 20));
    std::vector<std::unique_ptr<Subprocess>> agents;
    for (int i = 1; i < 4; ++i) {
      // No --advertise-address: each agent must find its own host's address.
      agents.push_back(std::make_unique<Subprocess>(
          hosts.On(i, {GPUSCHED_AGENT_BIN, "--daemon", kDaemonAddress, "--node-name", absl::StrCat("host", i),
                       "--log-dir", dir + "/logs", "--heartbeat-interval-ms", "300", "--fake-gpus", "4"}),
          absl::StrCat(dir, "/agent", i, ".log")));
    }
    REQUIRE(WaitUntil(
        [&] {
          return node_state("host1") == v1::NODE_STATE_UP && node_state("host2") == v1::NODE_STATE_UP &&
                 node_state("host3") == v1::NODE_STATE_UP;
        },
        30));

    // One process per node, each recording its pid by node and attempt, and
    // then beating: the time, every 50 ms, as long as it runs.
    CommandResult submitted = cli({"submit", "--nodes", "2", "--gpus-per-node", "4", "--launch", "per-node",
                                   "--workdir", dir, "--", "/bin/sh", "-c",
                                   "echo MASTER=$MASTER_ADDR; echo $$ > " + dir +
                                       "/pid-$GPUSCHED_NODE-$GPUSCHED_RESTART_COUNT; "
                                       "while :; do date +%s%N >> " +
                                       dir + "/beat-$GPUSCHED_NODE-$GPUSCHED_RESTART_COUNT; sleep 0.05; done"});
    INFO(submitted.out << submitted.err);
    REQUIRE(submitted.exit_code == 0);
    const uint64_t id = std::stoull(submitted.out.substr(std::string("Submitted job ").size()));
    REQUIRE(WaitUntil([&] { return job(id).state() == v1::JOB_STATE_RUNNING; }, 20));
    const v1::Job running = job(id);
    REQUIRE(running.allocation().nodes_size() == 2);
    const v1::NodeAllocation& rank0 =
        running.allocation().nodes(0).node_rank() == 0 ? running.allocation().nodes(0) : running.allocation().nodes(1);
    const std::string victim = running.allocation().nodes(0).node_rank() == 1 ? running.allocation().nodes(0).node()
                                                                              : running.allocation().nodes(1).node();
    const int victim_host = victim.back() - '0';
    // MASTER_ADDR: the rank-0 host's own address, as its agent found it.
    CHECK(rank0.address() == Hosts::Address(rank0.node().back() - '0'));
    CHECK(running.allocation().master_addr() == rank0.address());
    REQUIRE(WaitUntil([&] { return absl::StrContains(cli({"logs", std::to_string(id)}).out, "MASTER="); }, 10));
    CHECK(absl::StrContains(cli({"logs", std::to_string(id)}).out, "MASTER=" + rank0.address()));

    std::string pid_text;
    REQUIRE(WaitUntil([&] { return !(pid_text = ReadFile(dir + "/pid-" + victim + "-0")).empty(); }, 10));
    int victim_rank = 0;
    REQUIRE(absl::SimpleAtoi(absl::StripAsciiWhitespace(pid_text), &victim_rank));

    // Cut the rank-1 host off: its agent's lease runs out and it kills its
    // rank (fencing); its node goes DOWN, the gang is stopped on the rank-0
    // host too and requeued, then runs on the two hosts left.
    hosts.Link(victim_host, false);
    CHECK(WaitUntil([&] { return node_state(victim) == v1::NODE_STATE_DOWN; }, 20));
    CHECK(WaitUntil(
        [&] {
          const v1::Job j = job(id);
          return j.attempt() == 1 && j.state() == v1::JOB_STATE_RUNNING;
        },
        30));
    const v1::Job again = job(id);
    for (const v1::NodeAllocation& part : again.allocation().nodes()) CHECK(part.node() != victim);
    CommandResult nodes = cli({"nodes"});
    CHECK(absl::StrContains(nodes.out, victim));
    CHECK(absl::StrContains(nodes.out, "DOWN"));
    // Cut off, the agent killed its rank before the daemon gave it up.
    CHECK_FALSE(Alive(victim_rank));
    CHECK(absl::StrContains(ReadFile(absl::StrCat(dir, "/agent", victim_host, ".log")), "killing this node's jobs"));
    // No two attempts ever ran at once: attempt 0's last beat, on any host,
    // came before attempt 1's first.
    REQUIRE(WaitUntil([&] { return Beats(dir, 1).files == 2 && Beats(dir, 1).last > Beats(dir, 1).first; }, 10));
    const BeatSpan first = Beats(dir, 0);
    const BeatSpan second = Beats(dir, 1);
    CHECK(first.files == 2);
    INFO("attempt 0 beat from " << first.first << " to " << first.last << " ns; attempt 1 from " << second.first);
    CHECK(first.last < second.first);

    // Healed: the agent registers again; its fenced attempt's report closes
    // what the daemon asked it to kill, and the node takes work again.
    hosts.Link(victim_host, true);
    CHECK(WaitUntil([&] { return node_state(victim) == v1::NODE_STATE_UP; }, 30));
    CHECK(WaitUntil(
        [&] {
          CommandResult shown = cli({"nodes", "show", victim, "--json"});
          return shown.exit_code == 0 && !absl::StrContains(shown.out, "unconfirmedKills");
        },
        20));
    CHECK(job(id).attempt() == 1);
    CHECK(job(id).state() == v1::JOB_STATE_RUNNING);

    CHECK(cli({"cancel", std::to_string(id)}).exit_code == 0);
    WaitUntil([&] { return job(id).state() == v1::JOB_STATE_CANCELLED; }, 20);
    for (auto& agent : agents) agent->Signal(SIGTERM);
    for (auto& agent : agents) agent->Wait();
    daemon.Signal(SIGTERM);
    daemon.Wait();
  }
  if (getenv("GPUSCHED_KEEP_TEST_DIR") == nullptr) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
}
