// How a rank is turned into `podman run`: what the container sees (its
// GPUs, renumbered; its environment; its mounts), what Podman itself runs
// with (never the job's environment), and what removes the container.
#include "agent/runner/container_launch.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>

#include "agent/runner/launch_plan.h"
#include "test_util.h"

using namespace gpusched::agent;
using namespace gpusched::agent::testing;
namespace v1 = gpusched::v1;
namespace topology = gpusched::topology;

namespace {

void Touch(const std::string& path, const std::string& text = "") {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  WriteFile(path, text);
}

bool Has(const std::vector<std::string>& v, const std::string& item) {
  return std::find(v.begin(), v.end(), item) != v.end();
}

// The value after `flag` in argv, each time it appears.
std::vector<std::string> ValuesOf(const std::vector<std::string>& argv, const std::string& flag) {
  std::vector<std::string> out;
  for (size_t i = 0; i + 1 < argv.size(); ++i) {
    if (argv[i] == flag) out.push_back(argv[i + 1]);
  }
  return out;
}

topology::NodeTopology GpusWithBusIds() {
  topology::NodeTopology topo(4, 0);
  for (int i = 0; i < 4; ++i) {
    topo.gpus()[i].index = i;
    topo.gpus()[i].pci_bus_id = "00000000:0" + std::to_string(i + 7) + ":00.0";
  }
  return topo;
}

ContainerSettings Podman(const TempDir& dir) {
  ContainerSettings s;
  s.runtime = "/usr/bin/podman";
  s.oci_runtime = "runc";
  s.mount_sources = {dir.path()};
  s.run_args = {"--ulimit", "nofile=1024:4096"};
  return s;
}

LaunchContext Context(const TempDir& dir, const ContainerSettings* containers, const topology::NodeTopology* topo) {
  LaunchContext c;
  c.node_name = "node-a";
  c.log_dir = dir.path();
  c.advertise_address = "10.0.0.5";
  c.agent_env = {{"PATH", "/usr/sbin:/usr/bin:/bin"}};
  c.topology = topo;
  c.containers = containers;
  c.host_gpu_files.root = dir / "host";
  return c;
}

v1::LaunchJob ContainerLaunch(uint64_t id, std::vector<std::string> argv, std::vector<int> gpus) {
  v1::LaunchJob launch = MakeLaunch(id, std::move(argv), std::move(gpus));
  launch.mutable_spec()->mutable_container()->set_image("localhost/train:1");
  return launch;
}

}  // namespace

TEST_CASE("CUDA_VISIBLE_DEVICES is renumbered as the container sees its GPUs") {
  CHECK(RenumberVisibleDevices("5", {2, 5}) == "1");
  CHECK(RenumberVisibleDevices("2,5", {5, 2}) == "0,1");
  CHECK(RenumberVisibleDevices("6", {6}) == "0");
  CHECK(RenumberVisibleDevices("", {1}) == "");
  // MIG instances and MPS clients name devices by UUID, which the container sees alike.
  CHECK(RenumberVisibleDevices("MIG-1f2e", {0}) == "MIG-1f2e");
  CHECK(RenumberVisibleDevices("GPU-aa,GPU-bb", {0, 1}) == "GPU-aa,GPU-bb");
}

TEST_CASE("a container gets the device nodes of its GPUs only, found by the driver's minor numbers") {
  TempDir dir;
  const HostGpuFiles host{dir / "host"};
  const topology::NodeTopology topo = GpusWithBusIds();
  // No driver on the host (fake GPUs): no device nodes at all.
  CHECK(GpuDeviceNodes(host, &topo, {0, 1}, false).empty());

  for (const char* node :
       {"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia0", "/dev/nvidia1", "/dev/nvidia2", "/dev/nvidia3"}) {
    Touch(dir / ("host" + std::string(node)));
  }
  // GPU 1 (bus 08) is minor 3, as on a machine where the driver numbered them otherwise.
  Touch(dir / "host/proc/driver/nvidia/gpus/0000:08:00.0/information",
        "Model: \t\t NVIDIA H100\nIRQ:   151\nDevice Minor: \t 3\nBus Type: \t PCIe\n");
  const std::vector<std::string> nodes = GpuDeviceNodes(host, &topo, {1, 2}, false);
  CHECK(nodes == std::vector<std::string>{"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia3", "/dev/nvidia2"});

  // MIG instances are reached through the capability nodes as well.
  Touch(dir / "host/dev/nvidia-caps/nvidia-cap1");
  CHECK(Has(GpuDeviceNodes(host, &topo, {0}, true), "/dev/nvidia-caps/nvidia-cap1"));
}

TEST_CASE("the driver's libraries are those next to libnvidia-ml.so.1") {
  TempDir dir;
  const HostGpuFiles host{dir / "host"};
  CHECK(DriverLibraries(host).empty());
  const std::string lib = dir / "host/usr/lib/x86_64-linux-gnu";
  for (const char* name : {"libnvidia-ml.so.1", "libnvidia-ml.so.550.54", "libcuda.so.1", "libcuda.so.550.54",
                           "libz.so.1", "libnvidia-ptxjitcompiler.so.1"}) {
    Touch(lib + "/" + name);
  }
  const std::vector<std::string> libraries = DriverLibraries(host);
  CHECK(libraries == std::vector<std::string>{"/usr/lib/x86_64-linux-gnu/libcuda.so.1",
                                              "/usr/lib/x86_64-linux-gnu/libcuda.so.550.54",
                                              "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
                                              "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.54",
                                              "/usr/lib/x86_64-linux-gnu/libnvidia-ptxjitcompiler.so.1"});
}

TEST_CASE("a container rank never gets an output or error file, which the runtime would open, not the user") {
  TempDir dir;
  const ContainerSettings settings = Podman(dir);
  const topology::NodeTopology topo = GpusWithBusIds();
  v1::LaunchJob launch = ContainerLaunch(22, {"true"}, {0});
  // The daemon refuses these for a container job; one from an older daemon
  // must not reach the runtime either.
  launch.mutable_spec()->set_output(dir / "out.log");
  launch.mutable_spec()->set_error(dir / "err.log");
  auto plan = PrepareLaunch(launch, Context(dir, &settings, &topo));
  REQUIRE(plan.ok());
  REQUIRE(plan->processes.size() == 1);
  CHECK(plan->processes[0].output_path.empty());
  CHECK(plan->processes[0].error_path.empty());
}

TEST_CASE("a rank in a container runs under podman run, with the job's environment in a file only the agent reads") {
  TempDir dir;
  const ContainerSettings settings = Podman(dir);
  const topology::NodeTopology topo = GpusWithBusIds();
  std::filesystem::create_directories(dir / "data");
  v1::LaunchJob launch = ContainerLaunch(21, {"python3", "train.py"}, {2, 3});
  launch.set_rank_offset(4);
  launch.set_world_size(8);
  (*launch.mutable_spec()->mutable_env())["LD_PRELOAD"] = "/tmp/evil.so";
  v1::ContainerMount* mount = launch.mutable_spec()->mutable_container()->add_mounts();
  mount->set_source(dir / "data");
  mount->set_target("/data");
  mount->set_read_only(true);
  launch.mutable_spec()->mutable_container()->set_workdir("/workspace");

  auto plan = PrepareLaunch(launch, Context(dir, &settings, &topo));
  REQUIRE(plan.ok());
  REQUIRE(plan->processes.size() == 2);
  const ProcessSpec& rank5 = plan->processes[1];
  CHECK(rank5.rank == 5);
  CHECK(rank5.executable == "/usr/bin/podman");
  const std::vector<std::string>& argv = rank5.argv;
  REQUIRE(argv.size() > 4);
  CHECK(argv[1] == "run");
  const std::string name = ContainerName(ContainerScope(dir.path(), "node-a"), 21, 5);
  CHECK(ValuesOf(argv, "--name") == std::vector<std::string>{name});
  CHECK(Has(ValuesOf(argv, "--label"), "gpusched.agent=" + ContainerScope(dir.path(), "node-a")));
  CHECK(ValuesOf(argv, "--runtime") == std::vector<std::string>{"runc"});
  CHECK(ValuesOf(argv, "--network") == std::vector<std::string>{"host"});
  CHECK(ValuesOf(argv, "--ipc") == std::vector<std::string>{"host"});
  CHECK(ValuesOf(argv, "--cap-drop") == std::vector<std::string>{"all"});
  CHECK(ValuesOf(argv, "--security-opt") == std::vector<std::string>{"no-new-privileges"});
  CHECK(ValuesOf(argv, "--workdir") == std::vector<std::string>{"/workspace"});
  CHECK(Has(ValuesOf(argv, "--volume"), dir / "data" + ":/data:ro"));
  CHECK(ValuesOf(argv, "--ulimit") == std::vector<std::string>{"nofile=1024:4096"});
  // The image, then the command as the job gave it: looked up in the image.
  const std::vector<std::string> tail(argv.end() - 3, argv.end());
  CHECK(tail == std::vector<std::string>{"localhost/train:1", "python3", "train.py"});
  // Fake GPUs on a host without a driver: no devices, no driver mounts.
  CHECK(ValuesOf(argv, "--device").empty());

  // Podman runs as the agent, with the agent's environment: nothing of the
  // job's reaches a root process.
  CHECK_FALSE(rank5.credentials.has_value());
  CHECK(rank5.workdir == "/");
  CHECK(Has(rank5.env, "PATH=/usr/sbin:/usr/bin:/bin"));
  for (const std::string& entry : rank5.env) {
    CHECK_FALSE(entry.rfind("LD_PRELOAD=", 0) == 0);
    CHECK_FALSE(entry.rfind("RANK=", 0) == 0);
  }
  CHECK(rank5.cleanup_argv ==
        std::vector<std::string>{"/usr/bin/podman", "rm", "--force", "--time", "0", "--ignore", name});

  // The container's environment, from a file the agent alone can read.
  const std::vector<std::string> env_files = ValuesOf(argv, "--env-file");
  REQUIRE(env_files.size() == 1);
  struct stat st;
  REQUIRE(stat(env_files[0].c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  REQUIRE(stat((dir / "container-env").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  const std::string env = ReadFile(env_files[0]);
  CHECK_THAT(env, Catch::Contains("\nRANK=5\n") && Catch::Contains("\nLOCAL_RANK=1\n"));
  // Every rank sees the node's GPUs {2, 3}, which the container numbers 0 and 1.
  CHECK_THAT(env, Catch::Contains("CUDA_VISIBLE_DEVICES=0,1\n"));
  CHECK_THAT(env, Catch::Contains("MASTER_ADDR=127.0.0.1\n"));
  CHECK_THAT(env, Catch::Contains("LD_PRELOAD=/tmp/evil.so\n"));  // the job's own business, inside
  CHECK_THAT(env, Catch::Contains("GPUSCHED_CONTAINER_IMAGE=localhost/train:1\n"));
  CHECK_THAT(env, !Catch::Contains("PATH=/usr/sbin:/usr/bin:/bin"));  // the image keeps its own PATH
}

TEST_CASE(
    "on a node with the NVIDIA driver a container gets its GPUs' devices, the driver's libraries and nvidia-smi") {
  TempDir dir;
  const ContainerSettings settings = Podman(dir);
  const topology::NodeTopology topo = GpusWithBusIds();
  for (const char* file : {"dev/nvidiactl", "dev/nvidia0", "dev/nvidia1", "usr/bin/nvidia-smi",
                           "usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1", "usr/lib/x86_64-linux-gnu/libcuda.so.1"}) {
    Touch(dir / ("host/" + std::string(file)));
  }
  auto plan = PrepareLaunch(ContainerLaunch(22, {"nvidia-smi", "-L"}, {1}), Context(dir, &settings, &topo));
  REQUIRE(plan.ok());
  const std::vector<std::string>& argv = plan->processes[0].argv;
  CHECK(ValuesOf(argv, "--device") == std::vector<std::string>{"/dev/nvidiactl", "/dev/nvidia1"});
  const std::vector<std::string> volumes = ValuesOf(argv, "--volume");
  CHECK(Has(volumes, "/usr/lib/x86_64-linux-gnu/libcuda.so.1:/usr/local/gpusched-driver/lib/libcuda.so.1:ro"));
  CHECK(Has(volumes, "/usr/bin/nvidia-smi:/usr/bin/nvidia-smi:ro"));
  const std::string env = ReadFile(ValuesOf(argv, "--env-file").at(0));
  CHECK_THAT(env, Catch::Contains("LD_LIBRARY_PATH=/usr/local/gpusched-driver/lib\n"));
  CHECK_THAT(env, Catch::Contains("CUDA_VISIBLE_DEVICES=0\n"));
}

TEST_CASE("a script job's script is mounted read-only where the image cannot have anything") {
  TempDir dir;
  const ContainerSettings settings = Podman(dir);
  v1::LaunchJob launch = ContainerLaunch(23, {}, {});
  launch.mutable_spec()->set_script("echo in the image\n");
  auto plan = PrepareLaunch(launch, Context(dir, &settings, nullptr));
  REQUIRE(plan.ok());
  const std::vector<std::string>& argv = plan->processes[0].argv;
  CHECK(Has(ValuesOf(argv, "--volume"), dir / "job-23/script" + ":/.gpusched/script:ro"));
  const std::vector<std::string> tail(argv.end() - 3, argv.end());
  CHECK(tail == std::vector<std::string>{"localhost/train:1", "/bin/sh", "/.gpusched/script"});
}

TEST_CASE("a job's own CUDA_MPS_PIPE_DIRECTORY is not mounted: only an MPS share gets the agent's pipes") {
  TempDir dir;
  const ContainerSettings settings = Podman(dir);
  v1::LaunchJob launch = ContainerLaunch(24, {"true"}, {});
  (*launch.mutable_spec()->mutable_env())["CUDA_MPS_PIPE_DIRECTORY"] = "/etc";
  auto plan = PrepareLaunch(launch, Context(dir, &settings, nullptr));
  REQUIRE(plan.ok());
  for (const std::string& volume : ValuesOf(plan->processes[0].argv, "--volume")) {
    CHECK(volume.rfind("/etc:", 0) != 0);
  }

  // An MPS share of GPU 1 gets the agent's pipe directory, read-write.
  GpuSharing sharing;
  sharing.modes = {{1, v1::GPU_SHARE_MODE_MPS}};
  sharing.mps_pipe_dir = dir / "mps-pipe";
  sharing.mps_log_dir = dir / "mps-log";
  sharing.mps_ready = [] { return absl::OkStatus(); };
  v1::LaunchJob share = ContainerLaunch(25, {"true"}, {1});
  share.set_gpu_share_milli(500);
  share.set_gpu_mem_limit_mb(1000);
  share.set_gpu_share_mode(v1::GPU_SHARE_MODE_MPS);
  (*share.mutable_spec()->mutable_env())["CUDA_MPS_PIPE_DIRECTORY"] = "/etc";
  LaunchContext context = Context(dir, &settings, nullptr);
  context.sharing = &sharing;
  auto shared = PrepareLaunch(share, context);
  REQUIRE(shared.ok());
  const std::vector<std::string> volumes = ValuesOf(shared->processes[0].argv, "--volume");
  CHECK(Has(volumes, dir / "mps-pipe" + ":" + dir / "mps-pipe"));
  for (const std::string& volume : volumes) CHECK(volume.rfind("/etc:", 0) != 0);
}

TEST_CASE("a job's environment files, secrets and all, are removed with the job's, and no other job's") {
  TempDir dir;
  const ContainerSettings settings = Podman(dir);
  for (uint64_t job : {31, 3}) {
    v1::LaunchJob launch = ContainerLaunch(job, {"true"}, {0, 1});
    launch.set_world_size(2);
    (*launch.mutable_spec()->mutable_env())["TOKEN"] = "s3cr3t";
    REQUIRE(PrepareLaunch(launch, Context(dir, &settings, nullptr)).ok());
  }
  const std::string env_dir = ContainerEnvDir(dir.path());
  REQUIRE(std::filesystem::exists(ContainerEnvFile(env_dir, 31, 1)));
  CHECK(RemoveContainerEnvFiles(env_dir, 31) == 2);
  CHECK_FALSE(std::filesystem::exists(ContainerEnvFile(env_dir, 31, 0)));
  CHECK(std::filesystem::exists(ContainerEnvFile(env_dir, 3, 0)));
  CHECK(RemoveContainerEnvFiles(env_dir, 31) == 0);
}

TEST_CASE("a container launch the node does not allow is refused before anything runs") {
  TempDir dir;
  ContainerSettings settings = Podman(dir);
  v1::LaunchJob launch = ContainerLaunch(24, {"true"}, {});

  auto no_runtime = PrepareLaunch(launch, Context(dir, nullptr, nullptr));
  CHECK(no_runtime.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(std::string(no_runtime.status().message()), Catch::Contains("node-a runs no containers"));

  settings.registries = {"nvcr.io"};
  auto registry = PrepareLaunch(launch, Context(dir, &settings, nullptr));
  CHECK_THAT(std::string(registry.status().message()), Catch::Contains("registry localhost"));
  settings.registries.clear();

  // A link inside an allowed directory that leads out of it.
  std::filesystem::create_directories(dir / "allowed");
  settings.mount_sources = {dir / "allowed"};
  REQUIRE(symlink("/etc", (dir / "allowed/etc").c_str()) == 0);
  v1::ContainerMount* mount = launch.mutable_spec()->mutable_container()->add_mounts();
  mount->set_source(dir / "allowed/etc");
  mount->set_target("/etc-host");
  auto escaped = PrepareLaunch(launch, Context(dir, &settings, nullptr));
  CHECK(escaped.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(std::string(escaped.status().message()), Catch::Contains("leads to /etc"));

  mount->set_source(dir / "allowed/missing");
  CHECK_THAT(std::string(PrepareLaunch(launch, Context(dir, &settings, nullptr)).status().message()),
             Catch::Contains("No such file or directory"));
  // Nothing was left to run: no job directory's env files.
  CHECK_FALSE(std::filesystem::exists(dir / "container-env/job-24-rank-0.env"));
}

TEST_CASE("a value with a line break cannot go into a container's environment file, and says so") {
  TempDir dir;
  const ContainerSettings settings = Podman(dir);
  v1::LaunchJob launch = ContainerLaunch(25, {"true"}, {});
  (*launch.mutable_spec()->mutable_env())["MULTI"] = "a\nb";
  auto plan = PrepareLaunch(launch, Context(dir, &settings, nullptr));
  CHECK(plan.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(std::string(plan.status().message()), Catch::Contains("MULTI holds a line break"));
}

TEST_CASE("an image not on the node is pulled, and a pull that fails says what the runtime said") {
  TempDir dir;
  ContainerSettings settings;
  settings.runtime = GPUSCHED_FAKE_PODMAN;
  setenv("PODMAN_CALLS", (dir / "calls").c_str(), 1);
  setenv("PODMAN_IMAGES", "localhost/here:1", 1);
  CHECK(EnsureImage(settings, "localhost/here:1").ok());
  CHECK(ReadFile(dir / "calls") == "image exists localhost/here:1\n");

  const absl::Status missing = EnsureImage(settings, "localhost/gone:1");
  CHECK(missing.code() == absl::StatusCode::kFailedPrecondition);
  CHECK(std::string(missing.message()) ==
        "image localhost/gone:1 is not on this node and could not be pulled: initializing source "
        "docker://localhost/gone:1: pinging container registry: connection refused");
  unsetenv("PODMAN_IMAGES");
  unsetenv("PODMAN_CALLS");
}

TEST_CASE("at start the agent removes the containers of jobs that no longer run on its node") {
  TempDir dir;
  ContainerSettings settings;
  settings.runtime = GPUSCHED_FAKE_PODMAN;
  setenv("PODMAN_CALLS", (dir / "calls").c_str(), 1);
  const std::string scope = ContainerScope("/var/lib/gpusched/logs", "node-a");
  const std::string seven = ContainerName(scope, 7, 0), eight = ContainerName(scope, 8, 1);
  setenv("PODMAN_PS", (seven + " " + eight + " someone-elses gpusched-x-1").c_str(), 1);
  CHECK(RemoveLeftoverContainers(settings, scope, {7}) == 1);
  const std::string calls = ReadFile(dir / "calls");
  CHECK_THAT(calls, Catch::Contains("ps --all --filter label=gpusched.agent=/var/lib/gpusched/logs#node-a --format "
                                    "{{.Names}}\n"));
  CHECK_THAT(calls, Catch::Contains("rm --force --time 0 --ignore " + eight + "\n"));
  CHECK_THAT(calls, !Catch::Contains("--ignore " + seven) && !Catch::Contains("someone-elses\n"));
  // Names are per agent: another log directory or node makes other names.
  CHECK(ContainerName(ContainerScope("/other", "node-a"), 7, 0) != seven);
  CHECK(ContainerName(ContainerScope("/var/lib/gpusched/logs", "node-b"), 7, 0) != seven);
  unsetenv("PODMAN_PS");
  unsetenv("PODMAN_CALLS");
}
