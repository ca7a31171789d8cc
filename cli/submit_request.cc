#include "cli/submit_request.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "cli/errors.h"
#include "cli/sizes.h"
#include "common/job_states.h"
#include "common/share_mode_name.h"
#include "common/time_limit.h"

namespace gpusched::cli {
namespace {

absl::Status FlagError(absl::string_view flag, absl::string_view value, absl::string_view why) {
  return UsageError(absl::StrCat("invalid ", flag, " \"", value, "\": ", why));
}

// Slurm's --dependency list: KIND:ID[:ID...][,KIND:ID...].
absl::Status ParseDependencies(absl::string_view text, v1::JobSpec* spec) {
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    std::vector<absl::string_view> parts = absl::StrSplit(item, ':');
    v1::DependencyKind kind = v1::DEPENDENCY_KIND_UNSPECIFIED;
    if (!ParseDependencyKind(parts[0], &kind) || parts.size() < 2) {
      return FlagError("--dependency", item, "expected after, afterok, afternotok or afterany, then :JOB ids");
    }
    for (size_t i = 1; i < parts.size(); ++i) {
      uint64_t id = 0;
      if (!absl::SimpleAtoi(parts[i], &id) || id == 0) return FlagError("--dependency", parts[i], "not a job id");
      v1::Dependency* d = spec->add_dependencies();
      d->set_kind(kind);
      d->set_job_id(id);
    }
  }
  return absl::OkStatus();
}

// Counts: whole numbers, never negative. `allow_negative` is for priority.
absl::Status ParseInt(absl::string_view flag, const std::optional<std::string>& text, int64_t* out,
                      bool allow_negative = false) {
  if (!text.has_value()) return absl::OkStatus();
  int64_t value = 0;
  if (!absl::SimpleAtoi(*text, &value)) return FlagError(flag, *text, "expected a whole number");
  if (value < 0 && !allow_negative) return FlagError(flag, *text, "must not be negative");
  *out = value;
  return absl::OkStatus();
}

absl::Status ParseSize(absl::string_view flag, const std::optional<std::string>& text, int64_t* out) {
  if (!text.has_value()) return absl::OkStatus();
  auto mb = ParseSizeMb(*text);
  if (!mb.ok()) return UsageError(absl::StrCat("invalid ", flag, ": ", mb.status().message()));
  *out = *mb;
  return absl::OkStatus();
}

bool IsEnvName(absl::string_view name) {
  if (name.empty() || absl::ascii_isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

absl::Status AddEnv(const std::string& item, const LocalContext& ctx, v1::JobSpec* spec) {
  const size_t eq = item.find('=');
  const std::string name = item.substr(0, eq);
  if (!IsEnvName(name)) {
    return FlagError("--env", item, "expected NAME=VALUE or NAME, with NAME made of letters, digits and _");
  }
  if (eq != std::string::npos) {
    (*spec->mutable_env())[name] = item.substr(eq + 1);
    return absl::OkStatus();
  }
  std::optional<std::string> value = ctx.getenv ? ctx.getenv(name) : std::nullopt;
  if (!value.has_value()) return FlagError("--env", item, absl::StrCat(name, " is not set here to copy"));
  (*spec->mutable_env())[name] = *value;
  return absl::OkStatus();
}

// --image, its --mount SRC:DST[:ro] and --image-workdir. A relative SRC is
// from here, as for --workdir; what the nodes allow is the daemon's check.
absl::Status SetContainer(const SubmitOptions& options, const LocalContext& ctx, v1::JobSpec* spec) {
  if (!options.image.has_value()) {
    if (!options.mounts.empty()) return UsageError("--mount needs --image: only a container has mounts");
    if (options.image_workdir.has_value()) return UsageError("--image-workdir needs --image");
    return absl::OkStatus();
  }
  if (options.image->empty()) return FlagError("--image", "", "must not be empty");
  v1::ContainerSpec* container = spec->mutable_container();
  container->set_image(*options.image);
  for (const std::string& item : options.mounts) {
    std::vector<std::string> parts = absl::StrSplit(item, ':');
    if (parts.size() < 2 || parts.size() > 3 || parts[0].empty() || parts[1].empty() ||
        (parts.size() == 3 && parts[2] != "ro" && parts[2] != "rw")) {
      return FlagError("--mount", item, "expected SRC:DST, SRC:DST:ro or SRC:DST:rw");
    }
    if (parts[1].front() != '/') return FlagError("--mount", item, "DST must be an absolute path in the container");
    v1::ContainerMount* mount = container->add_mounts();
    mount->set_source(AbsolutePath(ctx, parts[0]));
    mount->set_target(parts[1]);
    mount->set_read_only(parts.size() == 3 && parts[2] == "ro");
  }
  if (options.image_workdir.has_value()) {
    if (options.image_workdir->empty() || options.image_workdir->front() != '/') {
      return FlagError("--image-workdir", *options.image_workdir, "must be an absolute path in the container");
    }
    container->set_workdir(*options.image_workdir);
  }
  return absl::OkStatus();
}

absl::Status SetCommand(const SubmitOptions& options, const LocalContext& ctx, v1::JobSpec* spec) {
  const bool has_command = !options.command.empty();
  if (has_command && options.script_path.has_value()) {
    return UsageError("give either a command after -- or --script FILE, not both");
  }
  if (options.script_path.has_value()) {
    const std::string path = AbsolutePath(ctx, *options.script_path);
    std::string text;
    if (options.script_text.has_value()) {
      text = *options.script_text;
    } else {
      auto read = ReadScript(path);
      if (!read.ok()) return read.status();
      text = *std::move(read);
    }
    if (text.empty()) return UsageError(absl::StrCat("--script ", path, " is empty"));
    spec->set_script(std::move(text));
    return absl::OkStatus();
  }
  if (!has_command) return UsageError("nothing to run: give a command after -- or --script FILE");
  if (options.command.front().empty()) return UsageError("the command after -- is an empty string");
  for (const std::string& arg : options.command) spec->add_argv(arg);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<int32_t> ParseGpuShare(absl::string_view text) {
  absl::string_view number = absl::StripSuffix(absl::StripAsciiWhitespace(text), "%");
  double percent = 0;
  if (!absl::SimpleAtod(number, &percent) || !(percent > 0) || percent > 100) {
    return UsageError(
        absl::StrCat("invalid --gpu-share \"", text, "\": expected a percentage above 0 and at most 100, like 30%"));
  }
  const int32_t milli = static_cast<int32_t>(std::lround(percent * 10));
  if (milli < 1) return UsageError(absl::StrCat("invalid --gpu-share \"", text, "\": the smallest share is 0.1%"));
  return milli;
}

absl::StatusOr<std::string> ReadScript(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return UsageError(absl::StrCat("cannot read --script ", path, ": ", std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string NewRequestId() {
  std::random_device device;
  std::uniform_int_distribution<uint64_t> bits;
  return absl::StrFormat("%016x%016x", bits(device), bits(device));
}

absl::StatusOr<v1::SubmitJobRequest> BuildSubmitRequest(const SubmitOptions& options, const LocalContext& ctx) {
  v1::SubmitJobRequest request;
  v1::JobSpec& spec = *request.mutable_spec();
  v1::Resources& res = *spec.mutable_resources();

  if (auto s = SetCommand(options, ctx, &spec); !s.ok()) return s;

  int64_t value = 0;
  struct CountFlag {
    const char* flag;
    const std::optional<std::string>& text;
    void (v1::Resources::*set)(int64_t);
  };
  for (const CountFlag& f : {CountFlag{"--gpus", options.gpus, &v1::Resources::set_gpus},
                             CountFlag{"--nodes", options.nodes, &v1::Resources::set_nodes},
                             CountFlag{"--gpus-per-node", options.gpus_per_node, &v1::Resources::set_gpus_per_node},
                             CountFlag{"--cpus-per-gpu", options.cpus_per_gpu, &v1::Resources::set_cpus_per_gpu},
                             CountFlag{"--cpus", options.cpus, &v1::Resources::set_cpus}}) {
    if (!f.text.has_value()) continue;
    if (auto s = ParseInt(f.flag, f.text, &value); !s.ok()) return s;
    (res.*f.set)(value);
  }
  if (options.mem_per_gpu.has_value()) {
    if (auto s = ParseSize("--mem-per-gpu", options.mem_per_gpu, &value); !s.ok()) return s;
    res.set_mem_per_gpu_mb(value);
  }
  if (options.mem.has_value()) {
    if (auto s = ParseSize("--mem", options.mem, &value); !s.ok()) return s;
    res.set_mem_mb(value);
  }
  if (options.gpu_mem.has_value()) {
    if (auto s = ParseSize("--gpu-mem", options.gpu_mem, &value); !s.ok()) return s;
    res.set_gpu_memory_mb(value);
  }
  if (options.gpu_model.has_value()) res.set_gpu_model(*options.gpu_model);
  if (options.gpu_share.has_value()) {
    auto milli = ParseGpuShare(*options.gpu_share);
    if (!milli.ok()) return milli.status();
    res.set_gpu_share_milli(*milli);
    if (!options.gpus.has_value() && !options.nodes.has_value()) res.set_gpus(1);
  }
  if (options.mig.has_value()) {
    if (options.gpu_share.has_value())
      return UsageError("--mig and --gpu-share: a MIG instance is not shared; give one");
    res.set_mig_profile(*options.mig);
    if (!options.gpus.has_value() && !options.nodes.has_value()) res.set_gpus(1);
  }
  if (options.gpu_sharing.has_value()) {
    v1::GpuShareMode how = v1::GPU_SHARE_MODE_UNSPECIFIED;
    if (!ParseShareModeName(*options.gpu_sharing, &how) || how == v1::GPU_SHARE_MODE_EXCLUSIVE) {
      return UsageError(
          absl::StrCat("invalid --gpu-sharing \"", *options.gpu_sharing, "\": expected mps or timeslice"));
    }
    if (!options.gpu_share.has_value()) return UsageError("--gpu-sharing goes with --gpu-share");
    res.set_gpu_sharing(how);
  }
  if (options.gpu_mem_limit.has_value()) {
    if (auto s = ParseSize("--gpu-mem-limit", options.gpu_mem_limit, &value); !s.ok()) return s;
    res.set_gpu_mem_limit_mb(value);
  }
  if (options.priority.has_value()) {
    if (auto s = ParseInt("--priority", options.priority, &value, /*allow_negative=*/true); !s.ok()) {
      return s;
    }
    spec.set_priority(value);
  }
  if (options.time.has_value()) {
    auto seconds = ParseTimeLimit(*options.time);
    if (!seconds.ok()) return UsageError(absl::StrCat("invalid --time: ", seconds.status().message()));
    spec.set_time_limit_s(*seconds);
  }
  if (options.launch.has_value()) {
    if (*options.launch == "per-gpu") {
      spec.set_launch_mode(v1::LAUNCH_MODE_PER_GPU);
    } else if (*options.launch == "per-node") {
      spec.set_launch_mode(v1::LAUNCH_MODE_PER_NODE);
    } else {
      return FlagError("--launch", *options.launch, "expected per-gpu or per-node");
    }
  }
  if (options.topology.has_value()) {
    if (*options.topology == "prefer") {
      spec.set_topology(v1::TOPOLOGY_MODE_PREFER);
    } else if (*options.topology == "strict") {
      spec.set_topology(v1::TOPOLOGY_MODE_STRICT);
    } else if (*options.topology == "any") {
      spec.set_topology(v1::TOPOLOGY_MODE_ANY);
    } else {
      return FlagError("--topology", *options.topology, "expected prefer, strict or any");
    }
  }
  if (options.topology_wait.has_value()) {
    auto seconds = ParseTimeLimit(*options.topology_wait);
    if (!seconds.ok()) return UsageError(absl::StrCat("invalid --topology-wait: ", seconds.status().message()));
    spec.set_topology_wait_s(*seconds);
    // Waiting only means something for a strict request.
    if (!options.topology.has_value()) spec.set_topology(v1::TOPOLOGY_MODE_STRICT);
  }
  for (const std::string& item : options.env) {
    if (auto s = AddEnv(item, ctx, &spec); !s.ok()) return s;
  }

  if (options.name.has_value()) spec.set_name(*options.name);
  if (options.queue.has_value()) spec.set_queue(*options.queue);
  if (options.account.has_value()) spec.set_account(*options.account);
  if (options.requeue.has_value()) {
    if (*options.requeue != "yes" && *options.requeue != "no") {
      return FlagError("--requeue", *options.requeue, "expected yes or no");
    }
    spec.set_requeue(*options.requeue == "yes");
  }
  if (options.dependency.has_value()) {
    if (absl::Status s = ParseDependencies(*options.dependency, &spec); !s.ok()) return s;
  }
  spec.set_hold(options.hold);
  spec.set_preflight(options.preflight);
  spec.set_no_spot(options.no_spot);
  // The daemon parses it, so that every client gets the same syntax and errors.
  if (options.array.has_value()) {
    if (options.array->empty()) return FlagError("--array", "", "must not be empty");
    request.set_array(*options.array);
  }
  spec.set_workdir(AbsolutePath(ctx, options.workdir.value_or(ctx.cwd)));
  if (absl::Status s = SetContainer(options, ctx, &spec); !s.ok()) return s;
  // Relative to where the job runs, as sbatch has them.
  auto in_workdir = [&](const std::string& path) {
    return path.front() == '/' ? path : absl::StrCat(spec.workdir(), "/", path);
  };
  if (options.output.has_value()) {
    if (options.output->empty()) return FlagError("--output", "", "must not be empty");
    spec.set_output(in_workdir(*options.output));
  }
  if (options.error.has_value()) {
    if (options.error->empty()) return FlagError("--error", "", "must not be empty");
    spec.set_error(in_workdir(*options.error));
  }
  // No user: the job runs as whoever the daemon finds the caller to be (the
  // socket's uid, the certificate's name), which need not be this login.

  if (options.request_id.has_value()) {
    if (options.request_id->empty()) return FlagError("--request-id", "", "must not be empty");
    request.set_client_request_id(*options.request_id);
  } else {
    request.set_client_request_id(NewRequestId());
  }
  for (const SubmitOptions::Source& source : options.sources) {
    v1::OptionSource* s = spec.add_option_sources();
    s->set_option(source.option);
    s->set_value(source.value);
    s->set_origin(source.origin);
  }
  return request;
}

}  // namespace gpusched::cli
