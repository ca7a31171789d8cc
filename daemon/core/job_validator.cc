#include "daemon/core/job_validator.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/container_policy.h"
#include "common/display_text.h"

namespace gpusched::core {
namespace {

absl::Status Invalid(absl::string_view field, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", message));
}

absl::Status CheckRange(absl::string_view field, int64_t value, int64_t lo, int64_t hi) {
  if (value < lo) return Invalid(field, absl::StrCat("must be >= ", lo, ", got ", value));
  if (value > hi) return Invalid(field, absl::StrCat("must be <= ", hi, ", got ", value));
  return absl::OkStatus();
}

absl::Status ValidateCommand(const v1::JobSpec& spec, const SpecLimits& limits) {
  if (spec.argv().empty() && spec.script().empty()) {
    return Invalid("spec.argv", "the job has no command (give a command or a script)");
  }
  if (!spec.argv().empty() && !spec.script().empty()) {
    return Invalid("spec.script", "give either a command or a script, not both");
  }
  if (!spec.argv().empty() && spec.argv(0).empty()) return Invalid("spec.argv[0]", "the program name is empty");
  size_t bytes = 0;
  for (const std::string& arg : spec.argv()) {
    if (arg.find('\0') != std::string::npos) return Invalid("spec.argv", "an argument contains a NUL byte");
    bytes += arg.size() + 1;
  }
  if (bytes > limits.max_command_bytes) {
    return Invalid("spec.argv",
                   absl::StrCat("the command is ", bytes, " bytes; the limit is ", limits.max_command_bytes));
  }
  if (spec.script().size() > limits.max_script_bytes) {
    return Invalid("spec.script", absl::StrCat("the script is ", spec.script().size(), " bytes; the limit is ",
                                               limits.max_script_bytes));
  }
  return absl::OkStatus();
}

absl::Status ValidateEnvironment(const v1::JobSpec& spec, const SpecLimits& limits) {
  if (static_cast<size_t>(spec.env_size()) > limits.max_env_entries) {
    return Invalid("spec.env", absl::StrCat(spec.env_size(), " variables; the limit is ", limits.max_env_entries));
  }
  size_t bytes = 0;
  for (const auto& [key, value] : spec.env()) {
    if (key.empty()) return Invalid("spec.env", "a variable has an empty name");
    for (char c : key) {
      if (!(absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_')) {
        return Invalid("spec.env", absl::StrCat("variable name \"", absl::CEscape(key),
                                                "\" may hold only letters, digits and '_'"));
      }
    }
    if (absl::ascii_isdigit(static_cast<unsigned char>(key[0]))) {
      return Invalid("spec.env", absl::StrCat("variable name \"", key, "\" starts with a digit"));
    }
    if (value.find('\0') != std::string::npos) return Invalid("spec.env", absl::StrCat(key, " contains a NUL byte"));
    bytes += key.size() + value.size() + 2;
  }
  if (bytes > limits.max_env_bytes) {
    return Invalid("spec.env",
                   absl::StrCat("the environment is ", bytes, " bytes; the limit is ", limits.max_env_bytes));
  }
  return absl::OkStatus();
}

// A share of each GPU (and the memory held with it) asks for GPUs on one
// node. Whether any node shares GPUs at all is the core's check at submit
// (EverFits), since it needs the cluster.
absl::Status ValidateGpuShare(const v1::Resources& r, const SpecLimits& limits) {
  if (r.gpu_sharing() != v1::GPU_SHARE_MODE_UNSPECIFIED) {
    if (r.gpu_share_milli() == 0) {
      return Invalid("resources.gpu_sharing", "says how a GPU share is enforced: ask for gpu_share_milli too");
    }
    if (r.gpu_sharing() != v1::GPU_SHARE_MODE_MPS && r.gpu_sharing() != v1::GPU_SHARE_MODE_TIMESLICE) {
      return Invalid("resources.gpu_sharing", absl::StrCat("must be MPS or TIMESLICE, got ", r.gpu_sharing()));
    }
  }
  if (r.gpu_share_milli() == 0) {
    if (r.gpu_mem_limit_mb() != 0) {
      return Invalid("resources.gpu_mem_limit_mb",
                     "a GPU memory limit goes with a GPU share: ask for gpu_share_milli too");
    }
    return absl::OkStatus();
  }
  if (absl::Status s = CheckRange("resources.gpu_share_milli", r.gpu_share_milli(), 1, 1000); !s.ok()) return s;
  if (absl::Status s = CheckRange("resources.gpu_mem_limit_mb", r.gpu_mem_limit_mb(), 0, limits.max_mem_mb); !s.ok()) {
    return s;
  }
  if (r.gpus() == 0) return Invalid("resources.gpu_share_milli", "a GPU share needs GPUs: ask for gpus too");
  if (r.nodes() > 1) {
    return Invalid("resources.nodes", absl::StrCat("a job with a GPU share runs on one node, got ", r.nodes()));
  }
  return absl::OkStatus();
}

// MIG instances by profile name ("3g.40gb"), `gpus` of them on one node.
// Whether any node has the profile is the core's check at submit.
absl::Status ValidateMig(const v1::Resources& r) {
  if (r.mig_profile().empty()) return absl::OkStatus();
  if (r.mig_profile().size() > 32 || !std::all_of(r.mig_profile().begin(), r.mig_profile().end(), [](char c) {
        return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '+';
      })) {
    return Invalid("resources.mig_profile", absl::StrCat("\"", absl::CHexEscape(r.mig_profile().substr(0, 40)),
                                                         "\" is not a MIG profile name such as 3g.40gb"));
  }
  if (r.gpu_share_milli() > 0) {
    return Invalid("resources.mig_profile",
                   "a MIG instance is not shared: ask for a MIG profile or a GPU share, not both");
  }
  if (r.gpus() == 0) return Invalid("resources.mig_profile", "ask for gpus too: the number of MIG instances");
  if (r.nodes() > 1) {
    return Invalid("resources.nodes", absl::StrCat("a job with MIG instances runs on one node, got ", r.nodes()));
  }
  return absl::OkStatus();
}

absl::Status ValidateResources(v1::Resources& r, const SpecLimits& limits) {
  for (auto [field, value, hi] : {std::tuple{"resources.gpus", r.gpus(), limits.max_gpus},
                                  std::tuple{"resources.nodes", r.nodes(), limits.max_nodes},
                                  std::tuple{"resources.gpus_per_node", r.gpus_per_node(), limits.max_gpus},
                                  std::tuple{"resources.cpus_per_gpu", r.cpus_per_gpu(), limits.max_cpus},
                                  std::tuple{"resources.mem_per_gpu_mb", r.mem_per_gpu_mb(), limits.max_mem_mb},
                                  std::tuple{"resources.cpus", r.cpus(), limits.max_cpus},
                                  std::tuple{"resources.mem_mb", r.mem_mb(), limits.max_mem_mb}}) {
    if (absl::Status s = CheckRange(field, value, 0, hi); !s.ok()) return s;
  }
  if (r.gpus_per_node() > 0 && r.nodes() == 0) {
    return Invalid("resources.nodes", "must be >= 1 when gpus_per_node is given");
  }
  if (r.nodes() > 0) {
    if (r.gpus_per_node() == 0 && r.gpus() > 0) {
      if (r.gpus() % r.nodes() != 0) {
        return Invalid("resources.gpus", absl::StrCat(r.gpus(), " GPUs do not split evenly over ", r.nodes(),
                                                      " nodes; give gpus_per_node instead"));
      }
      r.set_gpus_per_node(r.gpus() / r.nodes());
    }
    // nodes <= 100k and gpus_per_node <= 1M: the product fits easily.
    const int64_t total = r.nodes() * r.gpus_per_node();
    if (r.gpus() != 0 && r.gpus() != total) {
      return Invalid("resources.gpus", absl::StrCat(r.gpus(), " GPUs disagree with ", r.nodes(), " nodes x ",
                                                    r.gpus_per_node(), " GPUs per node"));
    }
    if (total > limits.max_gpus) {
      return Invalid("resources.gpus", absl::StrCat("must be <= ", limits.max_gpus, ", got ", total));
    }
    if (total == 0 && r.nodes() > 1) {
      return Invalid("resources.nodes", "a CPU-only job runs on one node; ask for GPUs to span nodes");
    }
    r.set_gpus(total);
  }
  if (r.gpus() > 0 && (r.cpus() > 0 || r.mem_mb() > 0)) {
    return Invalid("resources.cpus", "GPU jobs size CPUs and memory per GPU: use cpus_per_gpu and mem_per_gpu_mb");
  }
  if (absl::Status s = CheckRange("resources.gpu_memory_mb", r.gpu_memory_mb(), 0, limits.max_mem_mb); !s.ok()) {
    return s;
  }
  if (r.gpu_model().size() > limits.max_name_bytes) {
    return Invalid("resources.gpu_model", absl::StrCat("longer than ", limits.max_name_bytes, " bytes"));
  }
  if (r.gpus() == 0 && (!r.gpu_model().empty() || r.gpu_memory_mb() > 0)) {
    return Invalid("resources.gpu_model", "GPU constraints need GPUs: ask for gpus too");
  }
  if (absl::Status s = ValidateMig(r); !s.ok()) return s;
  return ValidateGpuShare(r, limits);
}

// Where rank 0's stdout or stderr goes (spec.output, spec.error): an
// absolute path with sbatch's filename patterns; "" = its rank log.
absl::Status ValidateOutputFile(absl::string_view field, const std::string& path, bool in_container) {
  if (path.empty()) return absl::OkStatus();
  if (absl::Status s = CheckDisplayText(field, path, 4096); !s.ok()) return s;
  if (path.front() != '/') return Invalid(field, absl::StrCat("\"", path, "\" is not absolute"));
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] != '%') continue;
    const char next = i + 1 < path.size() ? path[i + 1] : '\0';
    if (next != 'j' && next != 'x' && next != 'u' && next != '%') {
      return Invalid(field, absl::StrCat("\"", path,
                                         "\": of the filename patterns only %j (job id), "
                                         "%x (name), %u (user) and %% are honoured"));
    }
    ++i;
  }
  if (in_container) {
    return Invalid(field, "a job in a container keeps its output in its rank logs (gpusched logs JOB)");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateAndNormalize(v1::JobSpec& spec, const SpecLimits& limits, const SpecDefaults& defaults) {
  if (absl::Status s = ValidateCommand(spec, limits); !s.ok()) return s;
  if (absl::Status s = ValidateEnvironment(spec, limits); !s.ok()) return s;
  if (spec.has_container()) {
    if (absl::Status s = ValidateContainerSpec(spec.container()); !s.ok()) return s;
  }
  if (absl::Status s = ValidateOutputFile("spec.output", spec.output(), spec.has_container()); !s.ok()) return s;
  if (absl::Status s = ValidateOutputFile("spec.error", spec.error(), spec.has_container()); !s.ok()) return s;
  // An interactive job's session does not survive its node: it never
  // goes back to the queue on its own.
  if (spec.interactive() && !spec.has_requeue()) spec.set_requeue(false);
  if (absl::Status s = ValidateResources(*spec.mutable_resources(), limits); !s.ok()) return s;
  if (absl::Status s = CheckRange("spec.time_limit_s", spec.time_limit_s(), 0, limits.max_time_limit_s); !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckRange("spec.priority", spec.priority(), -limits.max_priority, limits.max_priority);
      !s.ok()) {
    return s;
  }
  if (spec.name().size() > limits.max_name_bytes) {
    return Invalid("spec.name", absl::StrCat("longer than ", limits.max_name_bytes, " bytes"));
  }
  if (!spec.workdir().empty() && !absl::StartsWith(spec.workdir(), "/")) {
    return Invalid("spec.workdir", absl::StrCat("\"", spec.workdir(), "\" is not an absolute path"));
  }
  if (!v1::LaunchMode_IsValid(spec.launch_mode())) {
    return Invalid("spec.launch_mode", absl::StrCat("unknown value ", spec.launch_mode()));
  }
  if (spec.launch_mode() == v1::LAUNCH_MODE_UNSPECIFIED) spec.set_launch_mode(v1::LAUNCH_MODE_PER_GPU);
  if (!v1::TopologyMode_IsValid(spec.topology())) {
    return Invalid("spec.topology", absl::StrCat("unknown value ", spec.topology()));
  }
  if (spec.topology() == v1::TOPOLOGY_MODE_UNSPECIFIED) spec.set_topology(defaults.topology);
  if (absl::Status s = CheckRange("spec.topology_wait_s", spec.topology_wait_s(), 0, limits.max_time_limit_s);
      !s.ok()) {
    return s;
  }
  if (spec.topology_wait_s() > 0 && spec.topology() != v1::TOPOLOGY_MODE_STRICT) {
    return Invalid("spec.topology_wait_s", "only a strict topology request waits; set topology to STRICT");
  }
  if (spec.account().size() > limits.max_name_bytes) {
    return Invalid("spec.account", absl::StrCat("longer than ", limits.max_name_bytes, " bytes"));
  }
  if (spec.queue().size() > limits.max_name_bytes) {
    return Invalid("spec.queue", absl::StrCat("longer than ", limits.max_name_bytes, " bytes"));
  }
  for (const auto& [field, text] : {std::pair<const char*, const std::string*>{"spec.name", &spec.name()},
                                    {"spec.user", &spec.user()},
                                    {"spec.account", &spec.account()},
                                    {"spec.queue", &spec.queue()},
                                    {"resources.gpu_model", &spec.resources().gpu_model()}}) {
    if (absl::Status s = CheckDisplayText(field, *text, limits.max_name_bytes); !s.ok()) return s;
  }
  // Shown by `status JOB` only, but kept with the job: bounded like its names.
  constexpr int kMaxOptionSources = 64;
  if (spec.option_sources_size() > kMaxOptionSources) {
    return Invalid("spec.option_sources", absl::StrCat("more than ", kMaxOptionSources, " options"));
  }
  for (const v1::OptionSource& source : spec.option_sources()) {
    for (const auto& [field, text] :
         {std::pair<const char*, const std::string*>{"option_sources.option", &source.option()},
          {"option_sources.value", &source.value()},
          {"option_sources.origin", &source.origin()}}) {
      if (absl::Status s = CheckDisplayText(field, *text, limits.max_name_bytes); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

absl::Status CheckClientRequestId(absl::string_view id) {
  if (id.size() > kMaxClientRequestIdBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("client_request_id: ", id.size(), " bytes, at most ", kMaxClientRequestIdBytes, " allowed"));
  }
  for (size_t i = 0; i < id.size(); ++i) {
    const auto c = static_cast<unsigned char>(id[i]);
    if (c <= ' ' || c > '~') {
      return absl::InvalidArgumentError(absl::StrCat("client_request_id: byte ", i, " (0x",
                                                     absl::Hex(c, absl::kZeroPad2),
                                                     ") is not printable ASCII; use letters, digits and punctuation"));
    }
  }
  return absl::OkStatus();
}

}  // namespace gpusched::core
