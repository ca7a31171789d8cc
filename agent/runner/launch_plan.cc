#include "agent/runner/launch_plan.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "agent/runner/exec_path.h"
#include "agent/runner/job_user.h"
#include "agent/runner/nccl_hints.h"
#include "agent/runner/preempt_notice.h"
#include "agent/runner/rank_environment.h"
#include "agent/runner/safe_open.h"
#include "common/topology/cpu_list.h"

namespace gpusched::agent {
namespace {

bool IsDirectory(const std::string& path) {
  struct stat st;
  return !path.empty() && stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// No workdir: the user's home, as after a login; /tmp when there is none.
// A relative workdir is taken relative to that same place.
std::string ChooseWorkdir(const std::string& requested, const UserIdentity& user) {
  std::string base = IsDirectory(user.home) ? user.home : "/tmp";
  if (requested.empty()) return base;
  if (requested.front() == '/') return requested;
  return absl::StrCat(base, "/", requested);
}

// job-N under the log root, made or reused without following a link: the
// root is the agent's alone (checked at start), and an existing job-N must be
// the agent's or the job's user's own, from an earlier attempt.
absl::Status MakeJobLogDir(const std::string& log_root, uint64_t job_id, const JobIdentity& identity) {
  const std::string name = absl::StrCat("job-", job_id);
  const std::string path = JobLogDir(log_root, job_id);
  auto failed = [&path](absl::string_view what, int error) {
    return absl::FailedPreconditionError(
        absl::StrCat("log directory \"", path, "\": ", what, ": ", std::strerror(error)));
  };
  const int root = open(log_root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (root < 0) return failed("cannot open its parent", errno);
  const bool made = mkdirat(root, name.c_str(), 0750) == 0;
  if (!made && errno != EEXIST) {
    const int error = errno;
    close(root);
    return failed("cannot create it", error);
  }
  const int fd = openat(root, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  const int open_error = errno;
  close(root);
  if (fd < 0) {
    if (open_error == ELOOP || open_error == ENOTDIR) {
      return absl::FailedPreconditionError(
          absl::StrCat("log directory \"", path, "\" is a symbolic link or not a directory: refused"));
    }
    return failed("cannot open it", open_error);
  }
  struct stat st;
  int error = fstat(fd, &st) != 0 ? errno : 0;
  if (error == 0 && !made && st.st_uid != geteuid() && st.st_uid != identity.user.uid) {
    close(fd);
    return absl::FailedPreconditionError(
        absl::StrCat("log directory \"", path, "\" exists and belongs to uid ", st.st_uid,
                     ", neither the agent nor the job's user: the agent did not make it, and will not write there"));
  }
  // The job's user must be able to read its own logs; on the descriptor, so
  // that no link swapped in since can redirect the chown.
  if (error == 0 && identity.switch_user && fchown(fd, identity.user.uid, identity.user.gid) != 0) error = errno;
  close(fd);
  if (error != 0) return failed("chown", error);
  return absl::OkStatus();
}

absl::StatusOr<std::string> WriteScript(const std::string& job_log_dir, const std::string& text,
                                        const JobIdentity& identity) {
  std::string path = absl::StrCat(job_log_dir, "/script");
  auto opened = OpenJobFile(path, O_WRONLY | O_CREAT | O_TRUNC, 0700, "script");
  if (!opened.ok()) return opened.status();
  const int fd = *opened;
  int error = WriteFully(fd, text);
  if (error == 0 && identity.switch_user && fchown(fd, identity.user.uid, identity.user.gid) != 0) error = errno;
  // O_TRUNC does not reset the mode of a script left from an earlier attempt.
  if (error == 0 && fchmod(fd, 0700) != 0) error = errno;
  if (close(fd) != 0 && error == 0) error = errno;
  if (error != 0) {
    return absl::FailedPreconditionError(absl::StrCat("script \"", path, "\": ", std::strerror(error)));
  }
  return path;
}

// Creating every rank's log before the first fork means a log that cannot be
// written fails the launch while nothing runs yet.
absl::Status CreateLog(const std::string& path, const JobIdentity& identity) {
  auto opened = OpenJobFile(path, O_WRONLY | O_CREAT | O_APPEND, 0640, "log file");
  if (!opened.ok()) return opened.status();
  const int fd = *opened;
  int error = 0;
  if (identity.switch_user && fchown(fd, identity.user.uid, identity.user.gid) != 0) error = errno;
  close(fd);
  if (error != 0) {
    return absl::FailedPreconditionError(absl::StrCat("log file \"", path, "\": chown: ", std::strerror(error)));
  }
  return absl::OkStatus();
}

// Suggestions from the node: they go under spec.env, so a job that sets one
// of these itself keeps its own value.
std::map<std::string, std::string> NodeSuggestions(const v1::LaunchJob& launch, const LaunchContext& context) {
  std::map<std::string, std::string> env;
  if (context.topology != nullptr) {
    env = NcclNetworkEnv(*context.topology, {launch.gpu_indices().begin(), launch.gpu_indices().end()});
  }
  if (!context.nccl_topo_file.empty()) env["NCCL_TOPO_FILE"] = context.nccl_topo_file;
  return env;
}

CpuBinding BindingFor(const v1::LaunchJob& launch, int local, const LaunchContext& context) {
  if (context.cpu_bind == CpuBindMode::kNone || context.topology == nullptr) return {};
  std::vector<int> gpus;
  if (launch.spec().launch_mode() == v1::LAUNCH_MODE_PER_NODE) {
    gpus.assign(launch.gpu_indices().begin(), launch.gpu_indices().end());
  } else if (local < launch.gpu_indices_size()) {
    gpus.push_back(launch.gpu_indices(local));
  }
  return ChooseCpuBinding(*context.topology, gpus, context.agent_cpus);
}

std::vector<std::string> ToEnvp(const std::map<std::string, std::string>& env) {
  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [key, value] : env) out.push_back(absl::StrCat(key, "=", value));
  return out;
}

// sbatch's filename patterns that gpusched honours (the daemon refused others).
std::string ExpandOutputPattern(const std::string& pattern, uint64_t job_id, const std::string& name,
                                const std::string& user) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 == pattern.size()) {
      out.push_back(pattern[i]);
      continue;
    }
    switch (pattern[++i]) {
      case 'j': absl::StrAppend(&out, job_id); break;
      case 'x': absl::StrAppend(&out, name); break;
      case 'u': absl::StrAppend(&out, user); break;
      default: out.push_back(pattern[i]); break;  // %%
    }
  }
  return out;
}

// The agent's own directory under its log root, made 0700 if missing; one
// that is a link, or is not the agent's, is refused.
absl::StatusOr<std::string> MakeAgentOnlyDir(const std::string& path) {
  if (mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
    return absl::FailedPreconditionError(absl::StrCat("cannot create ", path, ": ", std::strerror(errno)));
  }
  struct stat st;
  if (lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, " is not a directory of the agent's own, closed to others: refused"));
  }
  return path;
}

// What the container runtime runs with: the agent's environment, since it
// runs as the agent.
std::vector<std::string> RuntimeEnvironment(const LaunchContext& context) {
  std::vector<std::string> env;
  auto path = context.agent_env.find("PATH");
  env.push_back(absl::StrCat("PATH=", path == context.agent_env.end() ? kFallbackPath : path->second));
  for (const char* name : {"HOME", "XDG_RUNTIME_DIR", "LANG", "TZ"}) {
    if (const char* value = std::getenv(name)) env.push_back(absl::StrCat(name, "=", value));
  }
  return env;
}

}  // namespace

std::string JobLogDir(const std::string& log_dir, uint64_t job_id) { return absl::StrCat(log_dir, "/job-", job_id); }

absl::StatusOr<LaunchPlan> PrepareLaunch(const v1::LaunchJob& launch, const LaunchContext& context) {
  const v1::JobSpec& spec = launch.spec();
  if (spec.argv().empty() && spec.script().empty()) {
    return absl::InvalidArgumentError("the job has no command: neither argv nor script is set");
  }
  if (!spec.argv().empty() && !spec.script().empty()) {
    return absl::InvalidArgumentError("the job has both argv and script; it must have exactly one");
  }
  // The daemon shares only GPUs the node said it shares, the way it said; a
  // launch that asks otherwise (another daemon's idea of this node) would run
  // unaccounted, or without the limits it was promised.
  static const GpuSharing kNoSharing;
  auto share_env =
      GpuShareEnvironment(launch, context.sharing ? *context.sharing : kNoSharing, context.topology, context.node_name);
  if (!share_env.ok()) return share_env.status();
  auto identity = ResolveJobUser(spec.user());
  if (!identity.ok()) return identity.status();
  // By uid, not by name: an alias of root (toor, a directory entry) is root.
  if (identity->user.uid == 0 && !launch.root_allowed()) {
    return absl::PermissionDeniedError(absl::StrCat("the job would run as uid 0 (user \"", identity->user.name,
                                                    "\") on ", context.node_name,
                                                    ", and the daemon does not allow jobs as root (allow_root_jobs)"));
  }

  const bool in_container = spec.has_container();
  if (in_container) {
    if (context.containers == nullptr || !context.containers->enabled()) {
      return absl::FailedPreconditionError(
          absl::StrCat("the job runs in a container, but ", context.node_name, " runs no containers"));
    }
    if (absl::Status s = CheckContainerLaunch(spec.container(), *context.containers, context.node_name); !s.ok()) {
      return s;
    }
  }

  LaunchPlan plan;
  plan.job_log_dir = JobLogDir(context.log_dir, launch.job_id());
  if (absl::Status s = MakeJobLogDir(context.log_dir, launch.job_id(), *identity); !s.ok()) return s;
  ClearPreemptNotice(plan.job_log_dir);

  RankEnvContext env_context{
      context.agent_env,    identity->user.name,       identity->user.home, identity->user.shell,
      context.node_name,    context.advertise_address, plan.job_log_dir,    NodeSuggestions(launch, context),
      *std::move(share_env)};

  std::vector<std::string> argv;
  std::string executable;
  if (!spec.script().empty()) {
    auto path = WriteScript(plan.job_log_dir, spec.script(), *identity);
    if (!path.ok()) return path.status();
    argv = absl::StartsWith(spec.script(), "#!") ? std::vector<std::string>{*path}
                                                 : std::vector<std::string>{"/bin/sh", *path};
    executable = argv[0];
  } else if (in_container) {
    // Looked up inside the image, by the runtime.
    argv.assign(spec.argv().begin(), spec.argv().end());
    executable = argv[0];
  } else {
    argv.assign(spec.argv().begin(), spec.argv().end());
    // The job's PATH (spec.env may change it) decides which command runs.
    auto env = RankEnvironment(launch, 0, env_context);
    auto resolved = ResolveExecutable(argv[0], env["PATH"]);
    if (!resolved.ok()) return resolved.status();
    executable = *resolved;
  }

  std::optional<Credentials> credentials;
  if (identity->switch_user) {
    credentials = Credentials{identity->user.name, identity->user.uid, identity->user.gid, identity->user.groups};
  }
  const std::string workdir = ChooseWorkdir(spec.workdir(), identity->user);
  const bool per_node = spec.launch_mode() == v1::LAUNCH_MODE_PER_NODE;
  std::optional<ContainerRankContext> container_context;
  if (in_container) {
    auto env_dir = MakeAgentOnlyDir(ContainerEnvDir(context.log_dir));
    if (!env_dir.ok()) return env_dir.status();
    container_context = ContainerRankContext{context.containers,
                                             context.host_gpu_files,
                                             context.topology,
                                             context.node_name,
                                             ContainerScope(context.log_dir, context.node_name),
                                             *env_dir,
                                             RuntimeEnvironment(context),
                                             spec.script().empty() ? "" : argv.back()};
  }
  const int count = LocalProcessCount(launch);
  for (int local = 0; local < count; ++local) {
    ProcessSpec process;
    process.rank = launch.rank_offset() + (per_node ? 0 : local);
    process.executable = executable;
    process.argv = argv;
    CpuBinding binding = BindingFor(launch, local, context);
    if (plan.cpu_bind_note.empty()) plan.cpu_bind_note = binding.not_bound_reason;
    std::map<std::string, std::string> env = RankEnvironment(launch, local, env_context);
    env["GPUSCHED_CPU_BIND"] = topology::FormatCpuList(binding.cpus);
    process.env = ToEnvp(env);
    process.cpus = std::move(binding.cpus);
    process.workdir = workdir;
    process.log_path = absl::StrCat(plan.job_log_dir, "/rank-", process.rank, ".log");
    process.credentials = credentials;
    if (process.rank == 0 && !spec.output().empty()) {
      process.output_path = ExpandOutputPattern(spec.output(), launch.job_id(), spec.name(), identity->user.name);
    }
    if (process.rank == 0 && !spec.error().empty()) {
      process.error_path = ExpandOutputPattern(spec.error(), launch.job_id(), spec.name(), identity->user.name);
    }
    if (absl::Status s = CreateLog(process.log_path, *identity); !s.ok()) return s;
    if (container_context) {
      // Its output stays in its rank logs (the daemon refuses such files
      // for it): never a file the runtime, not the user, would open.
      process.output_path.clear();
      process.error_path.clear();
      if (absl::Status s = WrapInContainer(launch, *container_context, process); !s.ok()) return s;
    }
    plan.processes.push_back(std::move(process));
  }
  return plan;
}

}  // namespace gpusched::agent
