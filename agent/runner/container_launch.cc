#include "agent/runner/container_launch.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "agent/runner/gpu_lookup.h"
#include "agent/runner/rank_environment.h"
#include "agent/runner/safe_open.h"
#include "common/container_policy.h"
#include "common/io/process/run_program.h"

namespace gpusched::agent {
namespace {

// Where the driver's pieces appear inside a container: a directory of our
// own, so that nothing of the image is hidden by the mounts.
constexpr char kDriverLibDir[] = "/usr/local/gpusched-driver/lib";
constexpr char kScriptInContainer[] = "/.gpusched/script";

// The libraries of the driver a CUDA program loads (nvidia-container-cli
// mounts the same family); by name prefix, any version suffix.
constexpr const char* kDriverLibraryPrefixes[] = {"libcuda.so",
                                                  "libcudadebugger.so",
                                                  "libnvidia-ml.so",
                                                  "libnvidia-ptxjitcompiler.so",
                                                  "libnvidia-nvvm.so",
                                                  "libnvidia-gpucomp.so",
                                                  "libnvidia-cfg.so",
                                                  "libnvidia-opencl.so",
                                                  "libnvidia-allocator.so"};

std::string Under(const HostGpuFiles& host, absl::string_view path) {
  absl::string_view root = host.root;
  while (!root.empty() && root.back() == '/') root.remove_suffix(1);
  return absl::StrCat(root, path);
}

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// "00000000:07:00.0" (NVML) -> "0000:07:00.0" (the driver's /proc names).
std::string ProcBusId(absl::string_view nvml_bus_id) {
  const size_t colon = nvml_bus_id.find(':');
  if (colon == absl::string_view::npos) return absl::AsciiStrToLower(nvml_bus_id);
  absl::string_view domain = nvml_bus_id.substr(0, colon);
  if (domain.size() > 4) domain.remove_prefix(domain.size() - 4);
  return absl::AsciiStrToLower(absl::StrCat(domain, nvml_bus_id.substr(colon)));
}

// "Device Minor: 3" from the driver's description of the GPU; -1 without one.
int DeviceMinor(const HostGpuFiles& host, const std::string& bus_id) {
  std::ifstream in(Under(host, absl::StrCat("/proc/driver/nvidia/gpus/", ProcBusId(bus_id), "/information")));
  std::string line;
  while (std::getline(in, line)) {
    absl::string_view rest = line;
    if (!absl::ConsumePrefix(&rest, "Device Minor:")) continue;
    int minor = -1;
    if (absl::SimpleAtoi(absl::StripAsciiWhitespace(rest), &minor)) return minor;
  }
  return -1;
}

absl::StatusOr<std::string> RealPath(const std::string& path) {
  char resolved[PATH_MAX];
  if (realpath(path.c_str(), resolved) == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(path, ": ", std::strerror(errno)));
  }
  return std::string(resolved);
}

// Podman's --env-file, one KEY=value per line, in an agent-only directory and
// created anew (O_EXCL), so that no one can have placed a link there.
absl::Status WriteEnvFile(const std::string& path, const std::vector<std::string>& env) {
  std::string text;
  for (const std::string& entry : env) {
    if (absl::StrContains(entry, '\n')) {
      const std::string key = entry.substr(0, entry.find('='));
      return absl::FailedPreconditionError(
          absl::StrCat("the variable ", key, " holds a line break, which a container's environment file cannot carry"));
    }
    absl::StrAppend(&text, entry, "\n");
  }
  unlink(path.c_str());
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return absl::FailedPreconditionError(absl::StrCat("cannot create ", path, ": ", std::strerror(errno)));
  int error = WriteFully(fd, text);
  if (close(fd) != 0 && error == 0) error = errno;
  if (error != 0) return absl::FailedPreconditionError(absl::StrCat("cannot write ", path, ": ", std::strerror(error)));
  return absl::OkStatus();
}

// Removes the container called `name`, running or not, and says nothing
// when there is none: a rank's cleanup and the sweep of leftovers.
std::vector<std::string> RemoveArgv(const ContainerSettings& settings, const std::string& name) {
  return {settings.runtime, "rm", "--force", "--time", "0", "--ignore", name};
}

}  // namespace

v1::ContainerSupport ContainerSettings::Support() const {
  v1::ContainerSupport support;
  if (!enabled()) return support;
  // The program's name, not its path: the daemon shows it to people.
  const size_t slash = runtime.rfind('/');
  support.set_runtime(slash == std::string::npos ? runtime : runtime.substr(slash + 1));
  for (const std::string& r : registries) support.add_registries(r);
  for (const std::string& m : mount_sources) support.add_mount_sources(m);
  return support;
}

std::string ContainerScope(const std::string& log_dir, const std::string& node_name) {
  return absl::StrCat(log_dir, "#", node_name);
}

std::string ContainerEnvDir(const std::string& log_dir) { return absl::StrCat(log_dir, "/container-env"); }

std::string ContainerEnvFile(const std::string& env_dir, uint64_t job_id, int rank) {
  return absl::StrCat(env_dir, "/job-", job_id, "-rank-", rank, ".env");
}

int RemoveContainerEnvFiles(const std::string& env_dir, uint64_t job_id) {
  const std::string prefix = absl::StrCat("job-", job_id, "-rank-");
  int removed = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(env_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (absl::StartsWith(name, prefix) && absl::EndsWith(name, ".env") && unlink(entry.path().c_str()) == 0) {
      ++removed;
    }
  }
  return removed;
}

std::string ContainerName(const std::string& scope, uint64_t job_id, int rank) {
  // FNV-1a: the same on every build, so that the next agent finds the names.
  uint32_t hash = 2166136261u;
  for (unsigned char c : scope) hash = (hash ^ c) * 16777619u;
  return absl::StrCat("gpusched-", absl::Hex(hash, absl::kZeroPad8), "-", job_id, "-", rank);
}

std::string RenumberVisibleDevices(const std::string& value, std::vector<int32_t> allocated) {
  std::sort(allocated.begin(), allocated.end());
  std::vector<std::string> out;
  for (absl::string_view item : absl::StrSplit(value, ',', absl::SkipEmpty())) {
    int32_t index = 0;
    auto at = absl::SimpleAtoi(item, &index) ? std::find(allocated.begin(), allocated.end(), index) : allocated.end();
    out.push_back(at == allocated.end() ? std::string(item) : std::to_string(at - allocated.begin()));
  }
  return absl::StrJoin(out, ",");
}

std::vector<std::string> GpuDeviceNodes(const HostGpuFiles& host, const topology::NodeTopology* topology,
                                        const std::vector<int32_t>& indices, bool mig) {
  std::vector<std::string> nodes;
  if (!Exists(Under(host, "/dev/nvidiactl"))) return nodes;
  for (const char* control : {"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia-modeset"}) {
    if (Exists(Under(host, control))) nodes.push_back(control);
  }
  for (int32_t index : indices) {
    std::optional<int> position = topology != nullptr ? GpuPosition(*topology, index) : std::nullopt;
    const int minor = position ? DeviceMinor(host, topology->gpus()[*position].pci_bus_id) : -1;
    const std::string node = absl::StrCat("/dev/nvidia", minor >= 0 ? minor : index);
    if (Exists(Under(host, node))) nodes.push_back(node);
  }
  // A MIG instance is reached through the driver's capability nodes.
  if (mig) {
    if (DIR* dir = opendir(Under(host, "/dev/nvidia-caps").c_str())) {
      while (const dirent* entry = readdir(dir)) {
        if (entry->d_name[0] != '.') nodes.push_back(absl::StrCat("/dev/nvidia-caps/", entry->d_name));
      }
      closedir(dir);
    }
  }
  return nodes;
}

std::vector<std::string> DriverLibraries(const HostGpuFiles& host) {
  for (const char* dir : {"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib"}) {
    const std::string host_dir = Under(host, dir);
    if (!Exists(absl::StrCat(host_dir, "/libnvidia-ml.so.1"))) continue;
    std::vector<std::string> libraries;
    if (DIR* d = opendir(host_dir.c_str())) {
      while (const dirent* entry = readdir(d)) {
        const absl::string_view name = entry->d_name;
        for (const char* prefix : kDriverLibraryPrefixes) {
          if (absl::StartsWith(name, prefix)) libraries.push_back(absl::StrCat(dir, "/", name));
        }
      }
      closedir(d);
    }
    std::sort(libraries.begin(), libraries.end());
    return libraries;
  }
  return {};
}

absl::Status CheckContainerLaunch(const v1::ContainerSpec& container, const ContainerSettings& settings,
                                  const std::string& node_name) {
  if (absl::Status s = ContainerAllowed(container, settings.Support(), node_name); !s.ok()) return s;
  // As the daemon checked, but with links resolved.
  for (const v1::ContainerMount& m : container.mounts()) {
    auto source = RealPath(m.source());
    if (!source.ok()) return absl::FailedPreconditionError(absl::StrCat("mount source ", source.status().message()));
    bool allowed = false;
    for (const std::string& root : settings.mount_sources) {
      auto real_root = RealPath(root);
      allowed = allowed || (real_root.ok() && PathWithin(*source, *real_root));
    }
    if (!allowed) {
      return absl::FailedPreconditionError(absl::StrCat("mount source ", m.source(), " leads to ", *source,
                                                        ", outside what node ", node_name, " allows to mount"));
    }
  }
  return absl::OkStatus();
}

absl::Status WrapInContainer(const v1::LaunchJob& launch, const ContainerRankContext& context, ProcessSpec& process) {
  const ContainerSettings& settings = *context.settings;
  const v1::ContainerSpec& container = launch.spec().container();
  const std::string name = ContainerName(context.scope, launch.job_id(), process.rank);
  std::vector<std::string> argv = {settings.runtime,
                                   "run",
                                   "--rm",
                                   "--name",
                                   name,
                                   "--label",
                                   absl::StrCat("gpusched.job=", launch.job_id()),
                                   "--label",
                                   absl::StrCat("gpusched.node=", context.node_name),
                                   "--label",
                                   absl::StrCat("gpusched.agent=", context.scope)};
  if (!settings.oci_runtime.empty()) argv.insert(argv.end(), {"--runtime", settings.oci_runtime});
  // The image was made present before the launch (EnsureImage); the rank's
  // output is its log, not also the runtime's.
  argv.insert(argv.end(), {"--pull", "never", "--log-driver", "none", "--network", "host", "--ipc", "host", "--pid",
                           "host", "--security-opt", "no-new-privileges", "--cap-drop", "all"});
  if (process.credentials) {
    argv.insert(argv.end(), {"--user", absl::StrCat(process.credentials->uid, ":", process.credentials->gid)});
    for (gid_t group : process.credentials->groups) {
      if (group != process.credentials->gid) argv.insert(argv.end(), {"--group-add", std::to_string(group)});
    }
  } else if (geteuid() != 0) {
    argv.insert(argv.end(), {"--userns", "keep-id"});  // rootless: the agent's uid inside too
  }
  if (!container.workdir().empty()) argv.insert(argv.end(), {"--workdir", container.workdir()});

  std::vector<int32_t> gpus(launch.gpu_indices().begin(), launch.gpu_indices().end());
  for (const v1::MigSlice& slice : launch.mig_slices()) {
    if (std::find(gpus.begin(), gpus.end(), slice.gpu_index()) == gpus.end()) gpus.push_back(slice.gpu_index());
  }
  for (const std::string& node : GpuDeviceNodes(context.host, context.topology, gpus, launch.mig_slices_size() > 0)) {
    argv.insert(argv.end(), {"--device", node});
  }
  auto volume = [&argv](const std::string& source, const std::string& target, bool read_only) {
    argv.insert(argv.end(), {"--volume", absl::StrCat(source, ":", target, read_only ? ":ro" : "")});
  };
  const std::vector<std::string> libraries = gpus.empty() ? std::vector<std::string>{} : DriverLibraries(context.host);
  for (const std::string& library : libraries) {
    volume(library, absl::StrCat(kDriverLibDir, "/", library.substr(library.rfind('/') + 1)), true);
  }
  if (!libraries.empty() && Exists(Under(context.host, "/usr/bin/nvidia-smi"))) {
    volume("/usr/bin/nvidia-smi", "/usr/bin/nvidia-smi", true);
  }
  // The agent's MPS pipes, for an MPS share only: elsewhere the variable is
  // the job's own (spec.env), and a mount of it would pass the node's list
  // of mount sources by.
  if (launch.gpu_share_mode() == v1::GPU_SHARE_MODE_MPS) {
    const std::string mps_pipes = EnvpValue(process.env, "CUDA_MPS_PIPE_DIRECTORY");
    if (!mps_pipes.empty()) volume(mps_pipes, mps_pipes, false);
  }
  for (const v1::ContainerMount& m : container.mounts()) volume(m.source(), m.target(), m.read_only());

  // The environment inside: the rank's, but for the host's PATH (the image
  // has its own) unless the job set one, with the GPUs renumbered.
  std::vector<std::string> env;
  const bool job_sets_path = launch.spec().env().contains("PATH");
  std::string library_path = EnvpValue(process.env, "LD_LIBRARY_PATH");
  for (const std::string& entry : process.env) {
    if (absl::StartsWith(entry, "PATH=") && !job_sets_path) continue;
    if (absl::StartsWith(entry, "LD_LIBRARY_PATH=")) continue;
    if (absl::StartsWith(entry, "CUDA_VISIBLE_DEVICES=")) {
      env.push_back(absl::StrCat("CUDA_VISIBLE_DEVICES=", RenumberVisibleDevices(entry.substr(21), gpus)));
      continue;
    }
    env.push_back(entry);
  }
  if (!libraries.empty())
    library_path = library_path.empty() ? kDriverLibDir : absl::StrCat(kDriverLibDir, ":", library_path);
  if (!library_path.empty()) env.push_back(absl::StrCat("LD_LIBRARY_PATH=", library_path));
  env.push_back(absl::StrCat("GPUSCHED_CONTAINER_IMAGE=", container.image()));
  const std::string env_file = ContainerEnvFile(context.env_dir, launch.job_id(), process.rank);
  if (absl::Status s = WriteEnvFile(env_file, env); !s.ok()) return s;
  argv.insert(argv.end(), {"--env-file", env_file});

  // The command: looked up in the image, not on the host; a script is
  // mounted where the image cannot have anything.
  std::vector<std::string> command = process.argv;
  if (!context.script_path.empty()) {
    volume(context.script_path, kScriptInContainer, true);
    for (std::string& arg : command) {
      if (arg == context.script_path) arg = kScriptInContainer;
    }
  } else if (!launch.spec().argv().empty()) {
    command.assign(launch.spec().argv().begin(), launch.spec().argv().end());
  }
  argv.insert(argv.end(), settings.run_args.begin(), settings.run_args.end());
  argv.push_back(container.image());
  argv.insert(argv.end(), command.begin(), command.end());

  process.executable = settings.runtime;
  process.argv = std::move(argv);
  process.env = context.runtime_env;
  // Podman runs as the agent and switches to the job's uid in the container.
  process.credentials.reset();
  process.workdir = "/";
  process.cleanup_argv = RemoveArgv(settings, name);
  return absl::OkStatus();
}

int RemoveLeftoverContainers(const ContainerSettings& settings, const std::string& scope,
                             const std::set<uint64_t>& running) {
  auto listed = RunProgram({settings.runtime, "ps", "--all", "--filter", absl::StrCat("label=gpusched.agent=", scope),
                            "--format", "{{.Names}}"},
                           absl::Minutes(1));
  if (!listed.ok() || listed->exit_code != 0) return 0;
  int removed = 0;
  for (absl::string_view name : absl::StrSplit(listed->out, '\n', absl::SkipWhitespace())) {
    name = absl::StripAsciiWhitespace(name);
    // gpusched-<scope hash>-<job>-<rank>, as ContainerName makes them.
    std::vector<absl::string_view> parts = absl::StrSplit(name, '-');
    uint64_t job = 0;
    if (parts.size() != 4 || parts[0] != "gpusched" || !absl::SimpleAtoi(parts[2], &job)) continue;
    if (running.contains(job)) continue;
    auto rm = RunProgram(RemoveArgv(settings, std::string(name)), absl::Minutes(1));
    if (rm.ok() && rm->exit_code == 0) ++removed;
  }
  return removed;
}

absl::Status EnsureImage(const ContainerSettings& settings, const std::string& image) {
  auto exists = RunProgram({settings.runtime, "image", "exists", image}, absl::Minutes(1));
  if (exists.ok() && exists->exit_code == 0) return absl::OkStatus();
  auto pulled = RunProgram({settings.runtime, "pull", "--quiet", image}, settings.pull_timeout);
  if (!pulled.ok()) {
    return absl::FailedPreconditionError(absl::StrCat("image ", image, ": ", pulled.status().message()));
  }
  if (pulled->exit_code != 0) {
    std::string said(absl::StripAsciiWhitespace(pulled->err.empty() ? pulled->out : pulled->err));
    // Podman logs its retries before the error itself: the error is the news.
    if (const size_t error = said.rfind("Error: "); error != std::string::npos) said = said.substr(error + 7);
    if (said.size() > 2000) said = absl::StrCat("...", said.substr(said.size() - 2000));
    return absl::FailedPreconditionError(absl::StrCat("image ", image, " is not on this node and could not be pulled: ",
                                                      said.empty() ? "the runtime said nothing" : said));
  }
  return absl::OkStatus();
}

}  // namespace gpusched::agent
