// The gpusched-agent binary itself: flags, exit codes, signals.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "fake_daemon.h"
#include "test_util.h"

using namespace gpusched::agent::testing;

extern char** environ;

namespace {

// Starts the binary with stdout and stderr to `output`.
pid_t Spawn(const std::vector<std::string>& args, const std::string& output) {
  std::vector<std::string> all = {GPUSCHED_AGENT_BINARY};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  REQUIRE(rc == 0);
  return pid;
}

// The exit code, or -1 when it did not exit in time (then it is killed).
int WaitExit(pid_t pid, absl::Duration timeout = absl::Seconds(5)) {
  const absl::Time deadline = absl::Now() + timeout;
  int status = 0;
  while (absl::Now() < deadline) {
    if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -1;
}

int Run(const std::vector<std::string>& args, std::string* output) {
  TempDir dir;
  pid_t pid = Spawn(args, dir / "out");
  int code = WaitExit(pid);
  *output = ReadFile(dir / "out");
  return code;
}

}  // namespace

TEST_CASE("gpusched-agent: bad flags are a one-line usage error with exit code 2") {
  std::string out;
  CHECK(Run({"--label", "no-equals-sign"}, &out) == 2);
  CHECK(out == "gpusched-agent: --label \"no-equals-sign\": expected key=value (see --help)\n");
  CHECK(Run({"--label", "=value"}, &out) == 2);
  CHECK(Run({"--fake-gpus", "-1"}, &out) == 2);
  CHECK_THAT(out, Catch::StartsWith("gpusched-agent: --fake-gpus"));
  CHECK(Run({"--heartbeat-interval-ms", "0"}, &out) == 2);
  CHECK(Run({"--log-level", "chatty"}, &out) == 2);
  CHECK(Run({"--cpu-bind", "sideways"}, &out) == 2);
  CHECK_THAT(out, Catch::StartsWith("gpusched-agent: --cpu-bind"));
  CHECK(Run({"--no-such-flag"}, &out) == 2);
  CHECK(std::count(out.begin(), out.end(), '\n') == 1);
  CHECK(Run({"--gpu-share-modes", "mps"}, &out) == 2);
  CHECK(out == "gpusched-agent: --gpu-share-modes \"mps\": expected GPUS=MODE, e.g. 0-3=mps (see --help)\n");
  CHECK(Run({"--gpu-share-modes", "0-3=mps", "--gpu-share-modes", "3=timeslice"}, &out) == 2);
  CHECK(out == "gpusched-agent: gpu_share_modes: GPU 3 is given twice (see --help)\n");
  CHECK(Run({"--gpu-share-mode", "vgpu"}, &out) == 2);
  CHECK_THAT(out, Catch::StartsWith("gpusched-agent: --gpu-share-mode"));
}

TEST_CASE("gpusched-agent: MPS GPUs a node does not have stop it with the reason") {
  TempDir dir;
  FakeDaemon daemon;
  std::string out;
  CHECK(Run({"--daemon", daemon.address(), "--node-name", "n", "--fake-gpus", "2", "--gpu-share-modes", "5=mps",
             "--log-dir", dir / "logs"},
            &out) == 1);
  CHECK_THAT(out, Catch::Contains("gpu_share_modes names GPU 5, but n has GPUs 0,1"));
}

TEST_CASE("gpusched-agent: --version and --help exit 0") {
  std::string out;
  CHECK(Run({"--version"}, &out) == 0);
  CHECK(out == "0.1.0\n");
  CHECK(Run({"--help"}, &out) == 0);
  CHECK_THAT(out, Catch::Contains("--daemon"));
}

TEST_CASE("gpusched-agent: a log dir it cannot create is an error before it runs") {
  std::string out;
  CHECK(Run({"--log-dir", "/proc/gpusched-test/logs"}, &out) == 1);
  CHECK_THAT(out, Catch::Contains("/proc/gpusched-test/logs"));
}

TEST_CASE("gpusched-agent: registers what its flags say and exits 0 on SIGTERM and SIGINT") {
  TempDir dir;
  FakeDaemon daemon;
  for (int sig : {SIGTERM, SIGINT}) {
    const size_t before = daemon.WaitForRegistrations(0).size();
    pid_t pid = Spawn({"--daemon",    daemon.address(), "--node-name",     "cli-node", "--fake-gpus", "3",
                       "--gpu-model", "Test GPU",       "--gpu-memory-mb", "1000",     "--cpus",      "4",
                       "--memory-mb", "2048",           "--label",         "rack=r7",  "--label",     "leaf=l1",
                       "--log-dir",   dir / "logs",     "--log-level",     "warn"},
                      dir / "out");
    auto registrations = daemon.WaitForRegistrations(before + 1);
    REQUIRE(registrations.size() == before + 1);
    const auto& node = registrations.back().node();
    CHECK(node.name() == "cli-node");
    CHECK(node.cpus() == 4);
    CHECK(node.memory_mb() == 2048);
    REQUIRE(node.gpus_size() == 3);
    CHECK(node.gpus(2).model() == "Test GPU");
    CHECK(node.gpus(2).memory_mb() == 1000);
    CHECK(node.labels().at("rack") == "r7");
    CHECK(node.labels().at("leaf") == "l1");
    kill(pid, sig);
    CHECK(WaitExit(pid) == 0);
  }
}

TEST_CASE("gpusched-agent: --nccl-topo-file writes the topology next to the job logs; --cpu-bind is accepted") {
  TempDir dir;
  FakeDaemon daemon;
  pid_t pid = Spawn({"--daemon", daemon.address(), "--node-name", "topo-node", "--topology-file",
                     FixturePath("hgx-h200-8gpu-12nic.txt"), "--nccl-topo-file", "--cpu-bind", "none", "--log-dir",
                     dir / "logs", "--log-level", "warn"},
                    dir / "out");
  REQUIRE(daemon.WaitForRegistrations(1).size() == 1);
  CHECK_THAT(ReadFile(dir / "logs/nccl-topo.xml"), Catch::StartsWith("<system"));
  // Not NVML: the agent warns that NCCL will not match the file's GPUs.
  CHECK_THAT(ReadFile(dir / "out"), Catch::Contains("placeholder PCI bus ids"));
  kill(pid, SIGTERM);
  CHECK(WaitExit(pid) == 0);
}

TEST_CASE("gpusched-agent: agent.toml under the flags, key by key, and $GPUSCHED_ADDR between --daemon and the file") {
  TempDir dir;
  FakeDaemon daemon;
  // The file names a daemon nobody runs; the environment names the real one.
  WriteFile(dir / "agent.toml",
            "daemon = \"127.0.0.1:1\"\nnode_name = \"from-file\"\nfake_gpus = 2\ncpus = 3\n"
            "heartbeat_interval_ms = 100\n[labels]\nrack = \"r1\"\nleaf = \"l1\"\n");
  setenv("GPUSCHED_ADDR", daemon.address().c_str(), 1);
  pid_t pid = Spawn({"--config", dir / "agent.toml", "--cpus", "4", "--label", "rack=r9", "--log-dir", dir / "logs"},
                    dir / "out");
  unsetenv("GPUSCHED_ADDR");
  auto registrations = daemon.WaitForRegistrations(1);
  REQUIRE(registrations.size() == 1);
  const auto& node = registrations.back().node();
  CHECK(node.name() == "from-file");  // the file, where no flag was given
  CHECK(node.gpus_size() == 2);
  CHECK(node.cpus() == 4);                  // the flag wins
  CHECK(node.labels().at("rack") == "r9");  // a --label wins for its key only
  CHECK(node.labels().at("leaf") == "l1");
  kill(pid, SIGTERM);
  CHECK(WaitExit(pid) == 0);
}
