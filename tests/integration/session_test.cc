// Interactive sessions end to end: `gpusched run` and `gpusched alloc`
// against the real daemon and agents, the CLI on pipes and on a
// pseudo-terminal made here, with window sizes, Ctrl-C, a client that dies
// and the time limit.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tests/integration/test_cluster.h"

using gpusched::testing::TestCluster;
namespace v1 = gpusched::v1;

namespace {

using Clock = std::chrono::steady_clock;

// The CLI started against the cluster with its stdin, stdout and stderr on
// `in`, `out` and `err` (which may be one pseudo-terminal, then its
// controlling terminal).
pid_t StartCli(const TestCluster& cluster, const std::vector<std::string>& args, int in, int out, int err,
               bool controlling_tty, const std::vector<std::string>& extra_env = {}) {
  std::vector<std::string> argv = {GPUSCHED_CLI_BIN, "--addr", cluster.address()};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (std::string& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  std::vector<std::string> env = {"PATH=/usr/bin:/bin", "TERM=xterm-test"};
  env.insert(env.end(), extra_env.begin(), extra_env.end());
  std::vector<char*> cenv;
  for (std::string& e : env) cenv.push_back(e.data());
  cenv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    setsid();
    dup2(in, 0), dup2(out, 1), dup2(err, 2);
    if (controlling_tty) ioctl(0, TIOCSCTTY, 0);
    close_range(3, ~0U, 0);
    execve(cargv[0], cargv.data(), cenv.data());
    _exit(127);
  }
  return pid;
}

int WaitExit(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Reads `fd` until `text` has appeared or `seconds` pass; what it read.
std::string ReadUntil(int fd, const std::string& text, double seconds, std::string* so_far) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(static_cast<int>(seconds * 1000));
  while (!absl::StrContains(*so_far, text) && Clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    char buffer[4096];
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n <= 0) break;
    so_far->append(buffer, static_cast<size_t>(n));
  }
  return *so_far;
}

std::string ReadAll(int fd) {
  std::string out;
  char buffer[4096];
  ssize_t n;
  while ((n = read(fd, buffer, sizeof buffer)) > 0) out.append(buffer, static_cast<size_t>(n));
  return out;
}

// The only job of this cluster's, once it is terminal.
v1::Job OnlyJobEnded(const TestCluster& cluster, uint64_t id = 1) { return cluster.WaitForEnd(id, 30); }

struct Pty {
  int master = -1, slave = -1;
  Pty(int rows, int cols) {
    master = posix_openpt(O_RDWR | O_NOCTTY);
    REQUIRE(master >= 0);
    REQUIRE(grantpt(master) == 0);
    REQUIRE(unlockpt(master) == 0);
    slave = open(ptsname(master), O_RDWR | O_NOCTTY);
    REQUIRE(slave >= 0);
    Resize(rows, cols);
  }
  void Resize(int rows, int cols) const {
    winsize ws{};
    ws.ws_row = static_cast<unsigned short>(rows);
    ws.ws_col = static_cast<unsigned short>(cols);
    REQUIRE(ioctl(master, TIOCSWINSZ, &ws) == 0);
  }
  ~Pty() {
    close(master);
    if (slave >= 0) close(slave);
  }
};

}  // namespace

TEST_CASE("gpusched run on pipes: input in, output and exit code back, and the GPUs freed after", "[integration]") {
  TestCluster cluster({{"node-a", 2}});
  int in[2], out[2], err[2];
  REQUIRE(pipe(in) == 0);
  REQUIRE(pipe(out) == 0);
  REQUIRE(pipe(err) == 0);
  const pid_t cli = StartCli(cluster,
                             {"run", "--gpus", "1", "--", "/bin/sh", "-c",
                              "echo out $GPUSCHED_JOB_ID $CUDA_VISIBLE_DEVICES; echo err >&2; read line; "
                              "echo got $line; [ -t 0 ] || echo no-tty; exit 3"},
                             in[0], out[1], err[1], false);
  close(in[0]), close(out[1]), close(err[1]);
  REQUIRE(write(in[1], "hello\n", 6) == 6);
  close(in[1]);
  const std::string output = ReadAll(out[0]);
  const std::string errors = ReadAll(err[0]);
  const int code = WaitExit(cli);
  INFO(errors);
  CHECK(code == 3);
  CHECK(output == "out 1 0\ngot hello\nno-tty\n");
  CHECK_THAT(errors, Catch::Contains("err\n"));
  const v1::Job ended = OnlyJobEnded(cluster);
  CHECK(ended.spec().interactive());
  CHECK(ended.state() == v1::JOB_STATE_CANCELLED);
  CHECK_THAT(ended.reason(), Catch::Contains("its interactive session ended (exit code 3)"));
  // Its GPU went back: a plain job gets both.
  CHECK(cluster.WaitForEnd(cluster.Submit({"--gpus", "2", "--", "/bin/true"})).state() == v1::JOB_STATE_COMPLETED);
}

TEST_CASE("gpusched run on a terminal: a pseudo-terminal there, its size and resizes, and Ctrl-C", "[integration]") {
  TestCluster cluster({{"node-a", 1}});
  Pty pty(33, 101);
  const pid_t cli = StartCli(cluster,
                             {"run", "--gpus", "1", "--", "/bin/sh", "-c",
                              "trap 'echo resized $(stty size)' WINCH; echo size $(stty size) term $TERM; "
                              "tty | sed 's/[0-9]*$//'; while true; do sleep 0.1; done"},
                             pty.slave, pty.slave, pty.slave, true);
  close(pty.slave);
  pty.slave = -1;
  std::string seen;
  ReadUntil(pty.master, "/dev/pts/", 30, &seen);
  INFO(seen);
  CHECK_THAT(seen, Catch::Contains("size 33 101 term xterm-test"));
  CHECK_THAT(seen, Catch::Contains("/dev/pts/"));

  pty.Resize(50, 120);  // the CLI hears SIGWINCH and passes the size on
  ReadUntil(pty.master, "resized 50 120", 20, &seen);
  CHECK_THAT(seen, Catch::Contains("resized 50 120"));

  REQUIRE(write(pty.master, "\x03", 1) == 1);  // Ctrl-C, interpreted by the remote terminal
  const int code = WaitExit(cli);
  CHECK(code == 130);
  CHECK(OnlyJobEnded(cluster).state() == v1::JOB_STATE_CANCELLED);
}

TEST_CASE("a session whose client dies ends, and its job with it", "[integration]") {
  TestCluster cluster({{"node-a", 1}});
  int out[2];
  REQUIRE(pipe(out) == 0);
  const int devnull = open("/dev/null", O_RDWR);
  const pid_t cli = StartCli(cluster, {"run", "--gpus", "1", "--", "/bin/sh", "-c", "echo started $$; exec sleep 307"},
                             devnull, out[1], devnull, false);
  close(out[1]);
  std::string seen;
  ReadUntil(out[0], "started", 30, &seen);
  REQUIRE_THAT(seen, Catch::Contains("started"));
  const pid_t remote = std::stoi(seen.substr(seen.find("started ") + 8));
  REQUIRE(kill(remote, 0) == 0);
  kill(cli, SIGKILL);  // a lost terminal, a closed laptop
  WaitExit(cli);
  const v1::Job ended = OnlyJobEnded(cluster);
  CHECK(ended.state() == v1::JOB_STATE_CANCELLED);
  CHECK_THAT(ended.reason(), Catch::Contains("client went away"));
  // The command went with it.
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = kill(remote, 0) != 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK(gone);
  close(out[0]), close(devnull);
}

TEST_CASE("the time limit ends a session, saying so", "[integration]") {
  TestCluster cluster({{"node-a", 1}});
  int err[2];
  REQUIRE(pipe(err) == 0);
  const int devnull = open("/dev/null", O_RDWR);
  const pid_t cli = StartCli(cluster, {"run", "--gpus", "1", "--time", "0:02", "--", "/bin/sleep", "300"}, devnull,
                             devnull, err[1], false);
  close(err[1]);
  const std::string errors = ReadAll(err[0]);
  const int code = WaitExit(cli);
  INFO(errors);
  CHECK(code != 0);
  CHECK_THAT(errors, Catch::Contains("session ended: the job ended"));
  CHECK(OnlyJobEnded(cluster).state() == v1::JOB_STATE_TIMEOUT);
  close(err[0]), close(devnull);
}

TEST_CASE("gpusched alloc holds GPUs for a shell here, in which gpusched run starts on them without queueing",
          "[integration]") {
  TestCluster cluster({{"node-a", 2}});
  int out[2];
  REQUIRE(pipe(out) == 0);
  const int devnull = open("/dev/null", O_RDWR);
  const std::string cli = absl::StrCat(GPUSCHED_CLI_BIN, " --addr ", cluster.address());
  const pid_t alloc = StartCli(
      cluster,
      {"alloc", "--gpus", "2", "--", "/bin/sh", "-c",
       absl::StrCat("echo ALLOC=$GPUSCHED_ALLOCATION NODES=$GPUSCHED_NODES; ", cli,
                    " run -- /bin/sh -c 'echo inside $GPUSCHED_JOB_ID $CUDA_VISIBLE_DEVICES'; echo run-exit $?; ", cli,
                    " status 1 | grep State")},
      devnull, out[1], devnull, false);
  close(out[1]);
  const std::string output = ReadAll(out[0]);
  const int code = WaitExit(alloc);
  INFO(output);
  CHECK(code == 0);
  CHECK_THAT(output, Catch::Contains("ALLOC=1 NODES=node-a"));
  CHECK_THAT(output, Catch::Contains("inside 1 0,1"));
  CHECK_THAT(output, Catch::Contains("run-exit 0"));
  CHECK_THAT(output, Catch::Contains("RUNNING"));  // the inner run did not end the allocation
  // Leaving the shell gave the GPUs back.
  const v1::Job ended = OnlyJobEnded(cluster);
  CHECK(ended.state() == v1::JOB_STATE_CANCELLED);
  CHECK(cluster.GetJob(1).spec().argv(0) == "/bin/sh");
  close(out[0]), close(devnull);
}

TEST_CASE("a session is only for the job's owner and a running job; a plain job's session cannot end it",
          "[integration]") {
  TestCluster cluster({{"node-a", 1}});
  const uint64_t pending = cluster.Submit({"--gpus", "1", "--hold", "--", "/bin/true"});
  auto run_in = [&](uint64_t job) {
    return gpusched::testing::RunCommand({GPUSCHED_CLI_BIN, "--addr", cluster.address(), "run", "--", "/bin/true"},
                                         {{"GPUSCHED_ALLOCATION", std::to_string(job)}});
  };
  auto held = run_in(pending);
  CHECK(held.exit_code != 0);
  CHECK_THAT(held.err, Catch::Contains("is PENDING; a session needs it RUNNING"));
  auto missing = run_in(999);
  CHECK_THAT(missing.err, Catch::Contains("job 999 not found"));
  // A session in a running plain job runs there and leaves the job be.
  const uint64_t plain = cluster.Submit({"--gpus", "1", "--", "/bin/sleep", "30"});
  cluster.WaitForState(plain, v1::JOB_STATE_RUNNING);
  auto inside = gpusched::testing::RunCommand(
      {GPUSCHED_CLI_BIN, "--addr", cluster.address(), "run", "--", "/bin/sh", "-c", "echo in $GPUSCHED_JOB_ID"},
      {{"GPUSCHED_ALLOCATION", std::to_string(plain)}});
  CHECK(inside.exit_code == 0);
  CHECK(inside.out == absl::StrCat("in ", plain, "\n"));
  CHECK(cluster.GetJob(plain).state() == v1::JOB_STATE_RUNNING);
}

TEST_CASE("gpusched run on pipes starts its command on every node of the job, and waits for them all",
          "[integration]") {
  TestCluster cluster({{"node-a", 1}, {"node-b", 1}});
  int out[2];
  REQUIRE(pipe(out) == 0);
  const int devnull = open("/dev/null", O_RDWR);
  // The first node's command ends first; the job must outlive it.
  const pid_t cli = StartCli(cluster,
                             {"run", "--nodes", "2", "--gpus-per-node", "1", "--", "/bin/sh", "-c",
                              "if [ $RANK = 1 ]; then sleep 1; echo late $GPUSCHED_NODE; exit 5; fi; "
                              "echo early $GPUSCHED_NODE"},
                             devnull, out[1], devnull, false);
  close(out[1]);
  const std::string output = ReadAll(out[0]);
  const int code = WaitExit(cli);
  INFO(output);
  CHECK(code == 5);  // the highest of the nodes' exit codes, as srun
  CHECK_THAT(output, Catch::Contains("early node-a"));
  CHECK_THAT(output, Catch::Contains("late node-b"));
  const v1::Job ended = OnlyJobEnded(cluster);
  CHECK(ended.state() == v1::JOB_STATE_CANCELLED);
  CHECK_THAT(ended.reason(), Catch::Contains("its interactive session ended (exit code 5)"));
  close(out[0]), close(devnull);
}

TEST_CASE("a second agent refused under a node's name does not end that node's sessions", "[integration]") {
  TestCluster cluster({{"node-a", 2}});
  int in[2], out[2], err[2];
  REQUIRE(pipe(in) == 0);
  REQUIRE(pipe(out) == 0);
  REQUIRE(pipe(err) == 0);
  const pid_t cli =
      StartCli(cluster, {"run", "--gpus", "1", "--", "/bin/sh", "-c", "echo started; read line; echo got $line"}, in[0],
               out[1], err[1], false);
  close(in[0]), close(out[1]), close(err[1]);
  std::string output;
  REQUIRE_THAT(ReadUntil(out[0], "started\n", 20, &output), Catch::Contains("started\n"));

  // Another host under node-a's name: each of its streams is refused, and
  // ends. Ending, a stream that never held the node is not the node's agent
  // going away.
  const std::string logs = cluster.dir() + "/second-host";
  gpusched::testing::Subprocess second_host({GPUSCHED_AGENT_BIN, "--daemon", cluster.address(), "--node-name", "node-a",
                                             "--log-dir", logs, "--heartbeat-interval-ms", "500", "--fake-gpus", "8"},
                                            logs + ".log");
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  while (Clock::now() < deadline && !absl::StrContains(second_host.Log(), "is refused")) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  REQUIRE_THAT(second_host.Log(), Catch::Contains("is refused"));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // its stream's end reaches the daemon

  REQUIRE(write(in[1], "hello\n", 6) == 6);
  close(in[1]);
  ReadUntil(out[0], "got hello\n", 20, &output);
  const std::string errors = ReadAll(err[0]);
  INFO("output: " << output << "\nerrors: " << errors);
  CHECK_THAT(output, Catch::Contains("got hello\n"));
  CHECK(WaitExit(cli) == 0);
  close(out[0]), close(err[0]);
}

TEST_CASE("a session's output for a client that does not read it is dropped past a bound, and the client told",
          "[integration]") {
  TestCluster cluster({{"node-a", 2}});
  int out[2], err[2];
  REQUIRE(pipe(out) == 0);
  REQUIRE(pipe(err) == 0);
  const int devnull = open("/dev/null", O_RDONLY);
  REQUIRE(devnull >= 0);
  // 40 MB while the client is stopped: more than the daemon keeps for it.
  const pid_t cli = StartCli(cluster,
                             {"run", "--gpus", "1", "--", "/bin/sh", "-c",
                              "echo started; sleep 1; head -c 40000000 /dev/zero | tr '\\0' x; echo; echo end"},
                             devnull, out[1], err[1], false);
  close(devnull), close(out[1]), close(err[1]);
  std::string output;
  REQUIRE_THAT(ReadUntil(out[0], "started\n", 20, &output), Catch::Contains("started\n"));
  REQUIRE(kill(cli, SIGSTOP) == 0);
  std::this_thread::sleep_for(std::chrono::seconds(6));
  REQUIRE(kill(cli, SIGCONT) == 0);
  output += ReadAll(out[0]);
  const std::string errors = ReadAll(err[0]);
  INFO("stderr: " << errors);
  CHECK(WaitExit(cli) == 0);
  CHECK(output.size() < 40'000'000);
  // What came and what was said to be dropped add up to all it printed.
  const size_t at = errors.find("[gpuschedd: ");
  REQUIRE(at != std::string::npos);
  unsigned long long dropped = 0;
  REQUIRE(std::sscanf(errors.c_str() + at, "[gpuschedd: %llu bytes of this session's output were dropped", &dropped) ==
          1);
  CHECK(output.size() + dropped == std::string("started\n").size() + 40'000'000 + std::string("\nend\n").size());
}
