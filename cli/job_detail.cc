#include "cli/job_detail.h"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cli/format.h"
#include "cli/sizes.h"
#include "cli/table.h"
#include "common/estimate_basis_text.h"
#include "common/gpu_fraction.h"
#include "common/job_states.h"
#include "common/proto_time.h"
#include "common/share_mode_name.h"
#include "common/time_limit.h"

namespace gpusched::cli {
namespace {

// What the pass expects of a pending job's run time, and from what: the
// estimate backfill reserves with when the job gives no time limit.
std::string DescribeExpectedRun(const v1::PriorityFactors& p, const v1::JobSpec& spec) {
  std::string learned;
  if (p.estimate_basis() != v1::ESTIMATE_BASIS_NONE) {
    learned = absl::StrCat("typically ", FormatTimeLimit(p.estimate_typical_s()), ", at most ",
                           FormatTimeLimit(p.estimate_high_s()), " in 9 of 10 runs, ",
                           DescribeEstimateBasis(p.estimate_basis(), p.estimate_samples(), spec.user(), spec.name()));
  }
  if (spec.time_limit_s() > 0) {
    return absl::StrCat(FormatTimeLimit(p.expected_run_s()), " (its time limit ", FormatTimeLimit(spec.time_limit_s()),
                        learned.empty() ? "" : "; jobs like it ran ", learned, ")");
  }
  if (learned.empty()) return "unknown: no time limit, and no run of a similar job has ended yet";
  return absl::StrCat(FormatTimeLimit(p.expected_run_s()), " (no time limit; ", learned, ")");
}

// "0:1,0:2": a MIG job's instances as GPU:MIG device, for the allocation table.
std::string MigGpus(const v1::NodeAllocation& node) {
  std::vector<std::string> out;
  for (const v1::MigSlice& mig : node.mig_slices()) out.push_back(absl::StrCat(mig.gpu_index(), ":", mig.mig_index()));
  return absl::StrJoin(out, ",");
}

void Field(std::ostream& out, absl::string_view label, absl::string_view value) {
  std::string padded = absl::StrCat(label, ":");
  padded.resize(std::max<size_t>(padded.size() + 1, 13), ' ');
  out << padded << value << '\n';
}

std::string Indent(const std::string& text) {
  std::string result;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    absl::StrAppend(&result, "  ", line, "\n");
  }
  return result;
}

std::string DescribeScript(const std::string& script) {
  std::vector<absl::string_view> lines = absl::StrSplit(script, '\n', absl::SkipEmpty());
  if (lines.empty()) return "(empty script)";
  return absl::StrCat(lines.size(), lines.size() == 1 ? " line: " : " lines, first: ", lines.front());
}

std::string DescribeTopologyMode(const v1::JobSpec& spec) {
  switch (spec.topology()) {
    case v1::TOPOLOGY_MODE_STRICT:
      return spec.topology_wait_s() > 0 ? absl::StrCat("strict (takes the best free placement after ",
                                                       FormatTimeLimit(spec.topology_wait_s()), ")")
                                        : "strict (waits for the ideal placement)";
    case v1::TOPOLOGY_MODE_ANY: return "any";
    default: return "prefer";
  }
}

}  // namespace

std::string DescribeResources(const v1::Resources& r) {
  std::vector<std::string> parts;
  const int64_t gpus = RequestedGpus(r);
  if (gpus > 0) {
    std::string part = absl::StrCat(gpus, gpus == 1 ? " GPU" : " GPUs");
    if (r.nodes() > 0)
      absl::StrAppend(&part, " (", r.nodes(), r.nodes() == 1 ? " node" : " nodes", " x ", r.gpus_per_node(), ")");
    parts.push_back(part);
  } else if (r.nodes() > 0) {
    parts.push_back(absl::StrCat(r.nodes(), r.nodes() == 1 ? " node" : " nodes"));
  }
  if (r.cpus_per_gpu() > 0) parts.push_back(absl::StrCat(r.cpus_per_gpu(), " CPUs/GPU"));
  if (r.mem_per_gpu_mb() > 0) parts.push_back(absl::StrCat(FormatSizeMb(r.mem_per_gpu_mb()), "/GPU"));
  if (r.cpus() > 0) parts.push_back(absl::StrCat(r.cpus(), r.cpus() == 1 ? " CPU" : " CPUs"));
  if (r.mem_mb() > 0) parts.push_back(absl::StrCat(FormatSizeMb(r.mem_mb()), " memory"));
  if (!r.gpu_model().empty()) parts.push_back(absl::StrCat("model ~ \"", r.gpu_model(), "\""));
  if (r.gpu_memory_mb() > 0) parts.push_back(absl::StrCat(">= ", FormatSizeMb(r.gpu_memory_mb()), " per GPU"));
  if (!r.mig_profile().empty()) parts.push_back(absl::StrCat("MIG instances of ", r.mig_profile()));
  if (r.gpu_share_milli() > 0) {
    parts.push_back(absl::StrCat(r.gpu_share_milli() / 10.0, "% of each GPU",
                                 r.gpu_mem_limit_mb() > 0
                                     ? absl::StrCat(" with ", FormatSizeMb(r.gpu_mem_limit_mb()), " of its memory")
                                     : " and of its memory",
                                 r.gpu_sharing() == v1::GPU_SHARE_MODE_UNSPECIFIED
                                     ? ""
                                     : absl::StrCat(", shared by ", ShareModeName(r.gpu_sharing()))));
  }
  if (parts.empty()) return "daemon defaults";
  return absl::StrJoin(parts, ", ");
}

std::string RenderJobDetail(const v1::Job& job, absl::Time now, absl::TimeZone zone) {
  const v1::JobSpec& spec = job.spec();
  std::ostringstream out;
  out << "Job " << job.id() << (spec.name().empty() ? "" : absl::StrCat(" (", spec.name(), ")")) << '\n';
  Field(out, "State", StateName(job.state()));
  if (job.has_array()) {
    const v1::ArrayTask& task = job.array();
    Field(out, "Array",
          absl::StrCat(ArrayTaskLabel(job), ": index ", task.index(), " of job array ", task.array_id(), " (",
                       task.count(), " tasks",
                       task.max_running() > 0 ? absl::StrCat(", at most ", task.max_running(), " at once") : "", ")"));
  }
  if (job.stopping_as() != v1::JOB_STATE_UNSPECIFIED) {
    Field(out, "Stopping", absl::StrCat("its processes are being stopped; it will end ", StateName(job.stopping_as())));
  }
  if (!job.reason().empty()) Field(out, "Reason", job.reason());
  if (job.wait_cause() != v1::WAIT_CAUSE_UNSPECIFIED) {
    // The kind README "Why is my job waiting" lists.
    std::string kind = v1::WaitCause_Name(job.wait_cause()).substr(std::string("WAIT_CAUSE_").size());
    std::transform(kind.begin(), kind.end(), kind.begin(), [](char c) { return c == '_' ? '-' : std::tolower(c); });
    Field(out, "Wait kind", kind);
  }
  Field(out, "User", spec.user());
  if (!spec.account().empty()) Field(out, "Account", spec.account());
  Field(out, "Queue", spec.queue().empty() ? "(default)" : spec.queue());
  if (job.has_priority()) {
    const v1::PriorityFactors& p = job.priority();
    Field(out, "Priority",
          absl::StrFormat("%.0f = tier %.2f, fair share %.2f, age %.2f, size %.3f, short work %.2f (weighted) + job %d",
                          p.total(), p.tier(), p.fair_share(), p.age(), p.size(), p.short_work(), spec.priority()));
  } else {
    Field(out, "Priority", absl::StrCat(spec.priority()));
  }
  if (job.has_priority()) Field(out, "Expected run", DescribeExpectedRun(job.priority(), spec));
  if (job.attempt() > 0) {
    // What the earlier attempts ran is the service a demoting queue ranks by.
    Field(out, "Attempt",
          absl::StrCat(job.attempt() + 1, " (requeued ", job.attempt(), job.attempt() == 1 ? " time" : " times",
                       job.earlier_run_s() > 0
                           ? absl::StrCat(", ran ", absl::FormatDuration(absl::Seconds(job.earlier_run_s())), " before")
                           : "",
                       ")"));
  }
  if (job.held()) Field(out, "Held", "yes: it waits until `gpusched release " + std::to_string(job.id()) + "`");
  if (spec.dependencies_size() > 0) {
    std::vector<std::string> deps;
    // As --dependency takes it: afterok:12.
    for (const v1::Dependency& d : spec.dependencies()) {
      deps.push_back(absl::StrCat(DependencyKindName(d.kind()), ":", d.job_id()));
    }
    Field(out, "Depends on", absl::StrJoin(deps, ", "));
  }
  if (spec.has_requeue()) Field(out, "Requeue", spec.requeue() ? "on node failure" : "never (ends NODE_FAIL)");
  if (spec.no_spot()) Field(out, "Spot nodes", "never (--no-spot)");
  if (job.details_hidden()) {
    Field(out, "Command", absl::StrCat("(hidden: a job of ", spec.user(), "; only its owner and admins see it)"));
  } else if (spec.argv_size() > 0) {
    Field(out, "Command", ShellJoin(spec.argv()));
  } else {
    Field(out, "Script", DescribeScript(spec.script()));
  }
  if (spec.has_container()) {
    const v1::ContainerSpec& c = spec.container();
    Field(out, "Image", c.image());
    if (!job.details_hidden()) {
      std::vector<std::string> mounts;
      for (const v1::ContainerMount& m : c.mounts()) {
        mounts.push_back(absl::StrCat(m.source(), " -> ", m.target(), m.read_only() ? " (read-only)" : ""));
      }
      if (!mounts.empty()) Field(out, "Mounts", absl::StrJoin(mounts, "\n             "));
      Field(out, "Workdir", c.workdir().empty() ? "the image's own" : c.workdir());
    }
  } else if (!job.details_hidden()) {
    Field(out, "Workdir", spec.workdir());
  }
  if (!spec.output().empty() && !job.details_hidden()) {
    Field(out, "Output",
          absl::StrCat(spec.output(), spec.error().empty() ? " (rank 0's stdout and stderr)" : " (rank 0's stdout)"));
  }
  if (!spec.error().empty() && !job.details_hidden()) {
    Field(out, "Error", absl::StrCat(spec.error(), " (rank 0's stderr)"));
  }
  if (!spec.option_sources().empty()) {
    // One option a line, each with where it came from (a script's directive or the command line).
    std::vector<std::string> lines;
    for (const v1::OptionSource& s : spec.option_sources()) {
      lines.push_back(absl::StrCat(s.option(), s.value().empty() ? "" : " ", s.value(), "  (", s.origin(), ")"));
    }
    Field(out, "Options", absl::StrJoin(lines, "\n             "));
  }
  if (!spec.env().empty()) {
    // Names only: values may hold tokens, and anyone may run `status`.
    std::vector<std::string> names;
    for (const auto& [name, value] : spec.env()) names.push_back(name);
    std::sort(names.begin(), names.end());
    Field(out, "Env", absl::StrJoin(names, " "));
  }
  Field(out, "Resources", DescribeResources(spec.resources()));
  Field(out, "Launch", LaunchModeName(spec.launch_mode()));
  Field(out, "Topology", DescribeTopologyMode(spec));
  Field(out, "Time limit", FormatTimeLimit(spec.time_limit_s()));
  Field(out, "Submitted", FormatTimestamp(job.submit_time(), zone));
  if (job.has_estimated_start_time()) {
    Field(out, "Starts by",
          absl::StrCat(FormatTimestamp(job.estimated_start_time(), zone),
                       " (reserved by backfill from when running jobs are expected to end)"));
  }
  Field(out, "Started", FormatTimestamp(job.start_time(), zone));
  Field(out, "Ended", FormatTimestamp(job.end_time(), zone));
  Field(out, IsSet(job.start_time()) ? "Run time" : "Waited", FormatElapsed(JobElapsed(job, now)));
  if (IsTerminal(job.state())) Field(out, "Exit code", absl::StrCat(job.exit_code()));
  if (!job.client_request_id().empty()) Field(out, "Request id", job.client_request_id());

  const v1::Allocation& alloc = job.allocation();
  if (alloc.nodes_size() > 0) {
    Field(out, "Placement", FormatPlacement(alloc));
    if (!alloc.master_addr().empty()) {
      Field(out, "Master", absl::StrCat(alloc.master_addr(), ":", alloc.master_port()));
    }
    if (!alloc.worst_link().empty()) {
      Field(out, "Estimated",
            absl::StrCat(absl::StrFormat("%.0f", alloc.est_bus_bandwidth_gbps()),
                         " GB/s ring bus bandwidth; worst link ", alloc.worst_link(), "; spans ", alloc.span(),
                         alloc.policy().empty() ? "" : absl::StrCat(" (", alloc.policy(), " policy)")));
    }
    if (job.spec().preflight()) {
      std::vector<std::string> measured;
      for (const auto& node : alloc.nodes()) {
        if (node.preflight_busbw_gbps() > 0) {
          measured.push_back(absl::StrFormat("%s %.0f GB/s", node.node(), node.preflight_busbw_gbps()));
        }
      }
      Field(out, "Preflight",
            measured.empty() ? "asked for; no figures yet (or fewer than two GPUs per node)"
                             : absl::StrCat("NCCL all-reduce bus bandwidth ", absl::StrJoin(measured, ", ")));
    }
    for (const auto& node : alloc.nodes()) {
      if (node.gpu_share_milli() == 0) continue;
      const bool mps = node.gpu_share_mode() == v1::GPU_SHARE_MODE_MPS;
      Field(out, "GPU share",
            absl::StrCat(
                node.gpu_share_milli() / 10.0, "% and ", FormatSizeMb(node.gpu_mem_limit_mb()), " of each GPU, ",
                mps ? absl::StrCat("through MPS as ", node.mps_user(), ": enforced (compute threads and pinned memory)")
                    : "time-sliced: accounted by the scheduler, not enforced on the GPU"));
      break;
    }
    for (const auto& node : alloc.nodes()) {
      if (node.mig_slices().empty()) continue;
      std::vector<std::string> slices;
      for (const v1::MigSlice& mig : node.mig_slices()) {
        slices.push_back(absl::StrCat(mig.profile(), " on GPU ", mig.gpu_index(), " (", mig.uuid(), ")"));
      }
      Field(out, "MIG", absl::StrCat(node.node(), ": ", absl::StrJoin(slices, ", "), "; isolated by the GPU"));
    }
    std::vector<const v1::NodeAllocation*> nodes;
    for (const auto& node : alloc.nodes()) nodes.push_back(&node);
    std::stable_sort(nodes.begin(), nodes.end(), [](auto* a, auto* b) { return a->node_rank() < b->node_rank(); });
    // GPUs in the order the ranks get them: the ring the placement chose.
    Table table({"NODE", "RANK", "ADDRESS", "GPUS", "CPUS", "MEMORY", "LOG DIR"});
    for (const v1::NodeAllocation* node : nodes) {
      table.AddRow({node->node(), absl::StrCat(node->node_rank()), node->address(),
                    node->mig_slices().empty() ? absl::StrJoin(node->gpu_indices(), ",") : MigGpus(*node),
                    node->cpus() > 0 ? absl::StrCat(node->cpus()) : "",
                    node->mem_mb() > 0 ? FormatSizeMb(node->mem_mb()) : "", node->log_dir()});
    }
    out << "Allocation:\n" << Indent(table.ToString());
  }

  if (job.events_size() > 0) {
    Table table({"TIME", "STATE", "REASON"});
    for (const v1::JobEvent& event : job.events()) {
      table.AddRow({FormatTimestamp(event.time(), zone), std::string(StateName(event.state())), event.reason()});
    }
    out << "Events:\n" << Indent(table.ToString());
  }
  return out.str();
}

}  // namespace gpusched::cli
