#include "daemon/sim/report.h"

#include <algorithm>
#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gpusched::sim {
namespace {

constexpr int kLabelWidth = 44;
constexpr int kColumnWidth = 12;

class Table {
 public:
  explicit Table(const std::vector<PolicyMetrics>& policies) : policies_(policies) {}

  void Heading(const std::string& label) {
    absl::StrAppend(&out_, absl::StrFormat("%-*s", kLabelWidth, label));
    for (const PolicyMetrics& p : policies_) absl::StrAppend(&out_, absl::StrFormat("%*s", kColumnWidth, p.policy));
    absl::StrAppend(&out_, "\n");
  }
  void Section(const std::string& title) { absl::StrAppend(&out_, title, "\n"); }
  // `cell` gives a policy's value as text; "" prints as "-".
  void Row(const std::string& label, const std::function<std::string(const PolicyMetrics&)>& cell) {
    absl::StrAppend(&out_, absl::StrFormat("%-*s", kLabelWidth, label));
    for (const PolicyMetrics& p : policies_) {
      std::string v = cell(p);
      absl::StrAppend(&out_, absl::StrFormat("%*s", kColumnWidth, v.empty() ? "-" : v));
    }
    absl::StrAppend(&out_, "\n");
  }
  std::string Take() { return std::move(out_); }

 private:
  const std::vector<PolicyMetrics>& policies_;
  std::string out_;
};

std::string Fixed(double v, int digits) { return absl::StrFormat("%.*f", digits, v); }
std::string Percent(double share) { return absl::StrFormat("%.1f%%", 100 * share); }
std::string Hours(double seconds) { return Fixed(seconds / 3600, 2); }

}  // namespace

std::string FormatComparison(const RunDescription& run, const Trace& trace,
                             const std::vector<PolicyMetrics>& policies) {
  std::string out;
  absl::StrAppend(
      &out, "trace    ", run.trace_name, run.queue.empty() ? " (all queues)" : absl::StrCat(" queue ", run.queue), ": ",
      trace.jobs.size(), " jobs replayed of ", trace.rows, " rows; skipped: ", trace.skipped_unknown_duration,
      " unknown duration, ", trace.skipped_no_gpus, " without GPUs, ", trace.skipped_other_queue, " other queues");
  if (trace.skipped_steps > 0) absl::StrAppend(&out, ", ", trace.skipped_steps, " job steps");
  absl::StrAppend(&out, "\ncluster  ", run.cluster_name.empty() ? "" : absl::StrCat(run.cluster_name, ": "),
                  run.cluster_summary, "\n");
  if (run.arrival_speedup != 1) {
    absl::StrAppend(&out, "arrivals ", run.arrival_speedup, "x as fast as in the trace (run times as they are)\n");
  }
  if (!run.job_topology.empty()) absl::StrAppend(&out, "jobs     --topology ", run.job_topology, "\n");
  if (!run.preemption.empty()) absl::StrAppend(&out, "preempt  ", run.preemption, "\n");
  if (!run.share_packing.empty()) absl::StrAppend(&out, "shares   of a GPU packed by ", run.share_packing, "\n");
  absl::StrAppend(&out, "order    ",
                  run.multifactor ? "multifactor (the daemon's default: short work first, fair share, age, size)"
                                  : "fifo (submission order)",
                  "\n");
  absl::StrAppend(&out, "limits   ",
                  run.time_limit_factor > 0
                      ? absl::StrCat("time limit = ", Fixed(run.time_limit_factor, 2),
                                     " x trace duration (backfill plans with it; a job slowed past it ends TIMEOUT)")
                  : run.head_blocks_after == absl::ZeroDuration()
                      ? std::string("no time limits (backfill has nothing to plan with: strict queue order)")
                      : absl::StrCat("no time limits (reservations from the run times of jobs that ended; "
                                     "starvation bound ",
                                     absl::FormatDuration(run.head_blocks_after), ")"),
                  "\n");
  if (!run.pools.empty()) absl::StrAppend(&out, "pools    ", run.pools, "\n");
  if (run.model.slowdown) {
    absl::StrAppend(&out, "runtime  duration x (1 + ", Fixed(run.model.comm_share, 2),
                    " x (ideal_bw / placed_bw - 1)) for multi-GPU jobs\n\n");
  } else {
    absl::StrAppend(&out, "runtime  trace duration (no slowdown)\n\n");
  }

  Table t(policies);
  t.Heading("policy");
  t.Row("jobs completed", [](const PolicyMetrics& p) { return absl::StrCat(p.completed); });
  t.Row("jobs refused (never fit this cluster)", [](const PolicyMetrics& p) { return absl::StrCat(p.refused); });
  t.Row("jobs timed out (slowed past their limit)", [](const PolicyMetrics& p) { return absl::StrCat(p.timed_out); });
  t.Row("jobs never started", [](const PolicyMetrics& p) { return absl::StrCat(p.never_started); });
  t.Row("makespan (days)", [](const PolicyMetrics& p) { return Fixed(p.makespan_s / 86400, 2); });
  t.Row("GPU utilization (mean over makespan)", [](const PolicyMetrics& p) { return Percent(p.utilization); });
  t.Row("time with jobs waiting", [](const PolicyMetrics& p) { return Percent(p.waiting_time_share); });
  t.Row("free GPU-hours while jobs waited",
        [](const PolicyMetrics& p) { return Fixed(p.free_while_waiting_gpu_h, 0); });
  t.Row("  share of GPU-time while jobs waited",
        [](const PolicyMetrics& p) { return Percent(p.free_while_waiting_share); });

  struct Stat {
    const char* name;
    double Distribution::*field;
  };
  const Stat stats[] = {{"mean", &Distribution::mean},
                        {"p50", &Distribution::p50},
                        {"p95", &Distribution::p95},
                        {"p99", &Distribution::p99}};
  for (const auto& section : {std::pair{"job completion time (h)", &PolicyMetrics::jct},
                              std::pair{"queueing delay (h)", &PolicyMetrics::wait}}) {
    // A variable, not a structured binding: clang before 16 (Debian 12's is
    // 14, which builds the fuzz targets) cannot capture a binding in a lambda.
    const auto which = section.second;
    t.Section(section.first);
    // All, then shares of a GPU where the trace has them, then by GPU count.
    static_assert(kSizeClasses == 6 && kShareClass == 5);
    for (int c : {0, kShareClass, 1, 2, 3, 4}) {
      if (c == kShareClass && std::none_of(policies.begin(), policies.end(),
                                           [&](const PolicyMetrics& p) { return (p.*which)[c].count > 0; })) {
        continue;
      }
      const std::string group = c == 0 ? "all" : absl::StrCat(SizeClassName(c), " GPU");
      t.Row(absl::StrCat("  ", group, " jobs: count"),
            [&](const PolicyMetrics& p) { return absl::StrCat((p.*which)[c].count); });
      for (const Stat& s : stats) {
        t.Row(absl::StrCat("  ", group, " jobs: ", s.name), [&](const PolicyMetrics& p) {
          const Distribution& d = (p.*which)[c];
          return d.count == 0 ? std::string() : Hours(d.*(s.field));
        });
      }
    }
  }
  t.Section("placement of multi-GPU jobs");
  t.Row("  jobs", [](const PolicyMetrics& p) { return absl::StrCat(p.multi_gpu_jobs); });
  t.Row("  in one node", [](const PolicyMetrics& p) { return Percent(p.in_one_node); });
  t.Row("  in one NVLink domain", [](const PolicyMetrics& p) { return Percent(p.in_one_nvlink_domain); });
  t.Row("  in one leaf switch (or node)", [](const PolicyMetrics& p) { return Percent(p.in_one_leaf); });
  t.Row("  est. bus bandwidth / ideal (mean)", [](const PolicyMetrics& p) { return Fixed(p.bw_vs_ideal, 3); });
  t.Row("  runtime factor (mean)", [](const PolicyMetrics& p) { return Fixed(p.mean_slowdown, 3); });
  t.Row("  GPU-hours added by slowdown", [](const PolicyMetrics& p) { return Fixed(p.slowdown_gpu_h, 0); });
  if (!run.pools.empty()) {
    t.Section("cost over the makespan");
    t.Row("  GPU-hours paid (nodes on)", [](const PolicyMetrics& p) { return Fixed(p.paid_gpu_h, 0); });
    t.Row("  GPU-hours used (held by jobs)", [](const PolicyMetrics& p) { return Fixed(p.used_gpu_h, 0); });
    t.Row("  waste (idle share of paid)", [](const PolicyMetrics& p) { return Percent(p.waste); });
    t.Row("  cost", [](const PolicyMetrics& p) { return Fixed(p.cost, 0); });
    t.Row("  spot interruptions", [](const PolicyMetrics& p) { return absl::StrCat(p.spot_interruptions); });
    t.Row("  job runs requeued", [](const PolicyMetrics& p) { return absl::StrCat(p.requeues); });
  } else if (!run.preemption.empty()) {
    t.Section("preemption");
    t.Row("  job runs requeued", [](const PolicyMetrics& p) { return absl::StrCat(p.requeues); });
  }
  absl::StrAppend(&out, t.Take());
  return out;
}

}  // namespace gpusched::sim
