// Jobs in container images, end to end: the real daemon, agents and CLI
// driving Podman from Debian, with an image made here from Debian's
// busybox-static (no registry is reachable). Fake GPUs, so the containers
// have no devices; tests/gpu/container.sh checks a real GPU.
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tests/integration/socket_cli.h"
#include "tests/integration/test_cluster.h"
#include "tests/skip.h"
#include "tests/support/temp_dir.h"

using gpusched::testing::AgentSpec;
using gpusched::testing::CommandResult;
using gpusched::testing::RunCommand;
using gpusched::testing::TestCluster;
namespace v1 = gpusched::v1;

namespace {

constexpr char kPodman[] = "/usr/bin/podman";
// Bump the tag when the applets change: an image already there is reused.
constexpr char kImage[] = "localhost/gpusched-test-busybox:2";

// What every job container of these tests gets: runc (this machine kind's
// cgroups are hybrid v1/v2, which crun refuses) and limits inside the
// machine's hard ones (Podman's defaults exceed them).
std::vector<std::string> RunArgs() {
  rlimit files{};
  getrlimit(RLIMIT_NOFILE, &files);
  const std::string hard = files.rlim_max == RLIM_INFINITY ? "1048576" : std::to_string(files.rlim_max);
  return {"--ulimit", absl::StrCat("nofile=1024:", hard), "--ulimit", "nproc=1024:1024"};
}

std::vector<std::string> AgentArgs(const std::vector<std::string>& mounts) {
  std::vector<std::string> args = {"--container-runtime",  "podman",   "--container-oci-runtime", "runc",
                                   "--container-registry", "localhost"};
  for (const std::string& m : mounts) args.insert(args.end(), {"--container-mount", m});
  for (const std::string& a : RunArgs()) args.push_back(absl::StrCat("--container-run-arg=", a));
  return args;
}

// The test image, imported once per test process; "" when Podman cannot run
// a container here (why goes to `why`).
std::string TestImage(std::string* why) {
  static std::string image;
  static std::string reason;
  static bool tried = false;
  if (tried) {
    *why = reason;
    return image;
  }
  tried = true;
  if (geteuid() != 0) {
    reason = "not root: the agent drives rootful Podman as root";
  } else if (access(kPodman, X_OK) != 0 || access("/bin/busybox", X_OK) != 0) {
    reason = "podman or busybox-static is not installed (packaging/install-deps.sh installs both)";
  } else if (RunCommand({kPodman, "image", "exists", kImage}).exit_code != 0) {
    gpusched::testing::TempDir root;
    const std::string r = root.path().string();
    std::filesystem::create_directories(r + "/rootfs/bin");
    std::filesystem::create_directories(r + "/rootfs/tmp");
    std::filesystem::copy_file("/bin/busybox", r + "/rootfs/bin/busybox");
    for (const char* applet : {"sh", "echo", "id", "ls", "cat", "sleep", "env", "touch", "test", "true", "pwd"}) {
      std::filesystem::create_symlink("busybox", r + "/rootfs/bin/" + applet);
    }
    CommandResult tar = RunCommand({"/bin/tar", "-C", r + "/rootfs", "-cf", r + "/rootfs.tar", "."});
    CommandResult imported = RunCommand({kPodman, "import", r + "/rootfs.tar", kImage});
    if (tar.exit_code != 0 || imported.exit_code != 0) reason = "podman import failed: " + tar.err + imported.err;
  }
  if (reason.empty()) {
    std::vector<std::string> probe = {kPodman, "run", "--rm", "--runtime", "runc", "--network", "host"};
    for (const std::string& a : RunArgs()) probe.push_back(a);
    probe.insert(probe.end(), {kImage, "/bin/true"});
    CommandResult ran = RunCommand(probe);
    if (ran.exit_code != 0) reason = "podman cannot run a container on this machine: " + ran.err;
  }
  if (reason.empty()) image = kImage;
  *why = reason;
  return image;
}

#define REQUIRE_PODMAN()                               \
  std::string why_no_podman;                           \
  const std::string image = TestImage(&why_no_podman); \
  if (image.empty()) {                                 \
    GPUSCHED_SKIP(why_no_podman);                      \
  }

// The containers Podman has for a job of this cluster's node, running or
// not (other tests' clusters on this host have jobs of the same ids).
std::string ContainersOf(const TestCluster& cluster, const std::string& node, uint64_t job) {
  return RunCommand({kPodman, "ps", "--all", "--filter", absl::StrCat("label=gpusched.job=", job), "--filter",
                     absl::StrCat("label=gpusched.agent=", cluster.dir(), "/logs/", node, "#", node), "--format",
                     "{{.Names}}"})
      .out;
}

// Whether a container of the job is there, waiting up to `seconds`.
bool WaitForContainer(const TestCluster& cluster, const std::string& node, uint64_t job, double seconds = 20) {
  for (int i = 0; i < seconds * 10; ++i) {
    if (!ContainersOf(cluster, node, job).empty()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

}  // namespace

TEST_CASE("a 2-node gang runs in a container image, with its ranks, GPUs, mounts and logs", "[integration]") {
  REQUIRE_PODMAN();
  gpusched::testing::TempDir data;
  const std::string data_dir = data.path().string();
  { std::ofstream(data_dir + "/input.txt") << "from the host\n"; }
  TestCluster cluster({{"ctr-a", 2, AgentArgs({data_dir})}, {"ctr-b", 2, AgentArgs({data_dir})}});
  const uint64_t job = cluster.Submit(
      {"--nodes", "2", "--gpus-per-node", "2", "--image", image, "--mount", data_dir + ":/data:ro", "--image-workdir",
       "/tmp", "--", "/bin/sh", "-c",
       "echo RANK=$RANK LOCAL=$LOCAL_RANK WORLD=$WORLD_SIZE CVD=$CUDA_VISIBLE_DEVICES MASTER=$MASTER_ADDR "
       "UID=$(id -u) PWD=$(pwd) IMG=$GPUSCHED_CONTAINER_IMAGE PATH=$PATH; cat /data/input.txt; "
       "test -e /bin/busybox && echo INSIDE; touch /data/x 2>/dev/null || echo READONLY"});
  const v1::Job done = cluster.WaitForEnd(job, 60);
  INFO(cluster.AgentLog("ctr-a"));
  REQUIRE(done.state() == v1::JOB_STATE_COMPLETED);
  std::string log;
  for (int rank = 0; rank < 4; ++rank) {
    const std::string rank_log = cluster.Cli({"logs", std::to_string(job), "--rank", std::to_string(rank)}).out;
    CHECK_THAT(rank_log, Catch::Contains(absl::StrCat("RANK=", rank, " LOCAL=", rank % 2, " WORLD=4 CVD=0,1",
                                                      " MASTER=127.0.0.1 UID=0 PWD=/tmp IMG=", image)));
    log += rank_log;
  }
  INFO(log);
  // The image's PATH, not the host's; the host file through the read-only mount.
  CHECK_THAT(log, Catch::Contains("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"));
  CHECK_THAT(log, Catch::Contains("from the host"));
  CHECK_THAT(log, Catch::Contains("INSIDE"));
  CHECK_THAT(log, Catch::Contains("READONLY"));
  CHECK_FALSE(std::filesystem::exists(data_dir + "/x"));
  CHECK(ContainersOf(cluster, "ctr-a", job).empty());
  CHECK(ContainersOf(cluster, "ctr-b", job).empty());
  // The ranks' environment files went with the job.
  for (const char* node : {"ctr-a", "ctr-b"}) {
    const std::string env_dir = cluster.dir() + "/logs/" + node + "/container-env";
    REQUIRE(std::filesystem::is_directory(env_dir));
    CHECK(std::filesystem::is_empty(env_dir));
  }

  CommandResult status = cluster.Cli({"status", std::to_string(job)});
  CHECK_THAT(status.out, Catch::Contains("Image:") && Catch::Contains(image));
  CHECK_THAT(status.out, Catch::Contains(data_dir + " -> /data (read-only)"));
  CommandResult node = cluster.Cli({"nodes", "show", "ctr-a"});
  CHECK_THAT(node.out, Catch::Contains("podman; registries: localhost; mounts: " + data_dir));
}

TEST_CASE("cancel and the time limit stop a container job and leave no container behind", "[integration]") {
  REQUIRE_PODMAN();
  TestCluster cluster({{"ctr-a", 2, AgentArgs({})}});
  const uint64_t cancelled = cluster.Submit({"--gpus", "1", "--image", image, "--", "/bin/sleep", "600"});
  cluster.WaitForState(cancelled, v1::JOB_STATE_RUNNING, 60);
  REQUIRE(WaitForContainer(cluster, "ctr-a", cancelled));
  REQUIRE(cluster.Cli({"cancel", std::to_string(cancelled)}).exit_code == 0);
  CHECK(cluster.WaitForEnd(cancelled, 60).state() == v1::JOB_STATE_CANCELLED);
  CHECK(ContainersOf(cluster, "ctr-a", cancelled).empty());

  // A rank that ignores SIGTERM is killed after the grace; its container still goes.
  const uint64_t timed = cluster.Submit({"--gpus", "1", "--time", "0:03", "--image", image, "--", "/bin/sh", "-c",
                                         "trap '' TERM; while true; do sleep 1; done"});
  const v1::Job timed_out = cluster.WaitForEnd(timed, 60);
  INFO(timed_out.reason() << "\n" << cluster.Cli({"logs", std::to_string(timed)}).out << cluster.AgentLog("ctr-a"));
  CHECK(timed_out.state() == v1::JOB_STATE_TIMEOUT);
  CHECK(ContainersOf(cluster, "ctr-a", timed).empty());
}

TEST_CASE("an image that is not there fails the launch with the runtime's words", "[integration]") {
  REQUIRE_PODMAN();
  TestCluster cluster({{"ctr-a", 1, AgentArgs({})}});
  const uint64_t job =
      cluster.Submit({"--gpus", "1", "--requeue", "no", "--image", "localhost/gpusched-no-such-image:1", "--", "true"});
  const v1::Job ended = cluster.WaitForEnd(job, 60);
  CHECK(ended.state() == v1::JOB_STATE_FAILED);
  CHECK_THAT(ended.reason(), Catch::Contains("image localhost/gpusched-no-such-image:1 is not on this node and could "
                                             "not be pulled") &&
                                 Catch::Contains("localhost"));
}

TEST_CASE("a container job is refused at submit where no node would run it as asked, and goes to those that would",
          "[integration]") {
  REQUIRE_PODMAN();
  TestCluster cluster({{"plain", 4}, {"ctr", 1, AgentArgs({"/srv"})}});
  CommandResult mount =
      cluster.Cli({"submit", "--gpus", "1", "--image", image, "--mount", "/etc:/etc-host", "--", "true"});
  CHECK(mount.exit_code != 0);
  CHECK_THAT(mount.err, Catch::Contains("mount source /etc is outside what node ctr allows to mount (/srv)"));
  CommandResult registry =
      cluster.Cli({"submit", "--gpus", "1", "--image", "nvcr.io/nvidia/pytorch:24.05-py3", "--", "true"});
  CHECK(registry.exit_code != 0);
  CHECK_THAT(registry.err, Catch::Contains("registry nvcr.io, which node ctr does not allow"));
  CommandResult too_big = cluster.Cli({"submit", "--gpus", "2", "--image", image, "--", "true"});
  CHECK(too_big.exit_code != 0);
  CommandResult no_image = cluster.Cli({"submit", "--gpus", "1", "--mount", "/srv:/srv", "--", "true"});
  CHECK_THAT(no_image.err, Catch::Contains("--mount needs --image"));

  const uint64_t job = cluster.Submit({"--gpus", "1", "--image", image, "--", "true"});
  const v1::Job done = cluster.WaitForEnd(job, 60);
  CHECK(done.state() == v1::JOB_STATE_COMPLETED);
  CHECK(done.allocation().nodes(0).node() == "ctr");
}

TEST_CASE("a container job runs with its user's uid inside and out", "[integration]") {
  REQUIRE_PODMAN();
  const gpusched::testing::SocketDir socket_dir;
  const std::string socket = socket_dir.socket();
  gpusched::testing::TempDir data;
  const std::string data_dir = data.path().string();
  REQUIRE(chmod(data_dir.c_str(), 0777) == 0);
  TestCluster cluster({{"ctr-a", 1, AgentArgs({data_dir})}}, {"--socket", socket});
  REQUIRE(chmod(cluster.dir().c_str(), 0755) == 0);
  const uint64_t job = gpusched::testing::SubmittedJobId(gpusched::testing::SocketCli(
      socket, "65534",
      {"submit", "--gpus", "1", "--workdir", "/tmp", "--image", image, "--mount", data_dir + ":/data", "--", "/bin/sh",
       "-c", "echo UID=$(id -u) GID=$(id -g); touch /data/made-inside"}));
  const v1::Job done = cluster.WaitForEnd(job, 60);
  INFO(cluster.AgentLog("ctr-a"));
  REQUIRE(done.state() == v1::JOB_STATE_COMPLETED);
  CHECK(done.spec().user() == "nobody");
  CHECK_THAT(cluster.Cli({"logs", std::to_string(job)}).out, Catch::Contains("UID=65534 GID=65534"));
  struct stat st {};
  REQUIRE(stat((data_dir + "/made-inside").c_str(), &st) == 0);
  CHECK(st.st_uid == 65534);
}
