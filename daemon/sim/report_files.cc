#include "daemon/sim/report_files.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/job_states.h"
#include "daemon/sim/csv_table.h"

namespace gpusched::sim {
namespace {

constexpr double kBucketS = 3600;
constexpr int kCdfPoints = 200;

std::string Num(double v) { return absl::StrFormat("%.6g", v); }

std::string SummaryCsv(const std::vector<PolicyMetrics>& metrics) {
  std::string out = "policy,metric,size_class,value\n";
  auto row = [&](const PolicyMetrics& m, absl::string_view metric, absl::string_view size, double v) {
    absl::StrAppend(&out, CsvQuoted(m.policy), ",", metric, ",", size, ",", Num(v), "\n");
  };
  for (const PolicyMetrics& m : metrics) {
    row(m, "jobs", "all", static_cast<double>(m.jobs));
    row(m, "completed", "all", static_cast<double>(m.completed));
    row(m, "refused", "all", static_cast<double>(m.refused));
    row(m, "never_started", "all", static_cast<double>(m.never_started));
    row(m, "timed_out", "all", static_cast<double>(m.timed_out));
    row(m, "makespan_s", "all", m.makespan_s);
    row(m, "utilization", "all", m.utilization);
    row(m, "waiting_time_share", "all", m.waiting_time_share);
    row(m, "free_while_waiting_gpu_h", "all", m.free_while_waiting_gpu_h);
    row(m, "free_while_waiting_share", "all", m.free_while_waiting_share);
    for (int c = 0; c < kSizeClasses; ++c) {
      // Shares of a GPU only where the trace has them.
      if (c == kShareClass && m.jct[c].count == 0 && m.wait[c].count == 0) continue;
      for (const auto& [name, d] : {std::pair{"jct", m.jct[c]}, std::pair{"wait", m.wait[c]}}) {
        row(m, absl::StrCat(name, "_count"), SizeClassName(c), static_cast<double>(d.count));
        row(m, absl::StrCat(name, "_mean_s"), SizeClassName(c), d.mean);
        row(m, absl::StrCat(name, "_p50_s"), SizeClassName(c), d.p50);
        row(m, absl::StrCat(name, "_p95_s"), SizeClassName(c), d.p95);
        row(m, absl::StrCat(name, "_p99_s"), SizeClassName(c), d.p99);
      }
    }
    row(m, "multi_gpu_jobs", "multi", static_cast<double>(m.multi_gpu_jobs));
    row(m, "in_one_node", "multi", m.in_one_node);
    row(m, "in_one_nvlink_domain", "multi", m.in_one_nvlink_domain);
    row(m, "in_one_leaf", "multi", m.in_one_leaf);
    row(m, "bw_vs_ideal", "multi", m.bw_vs_ideal);
    row(m, "mean_slowdown", "multi", m.mean_slowdown);
    row(m, "slowdown_gpu_h", "multi", m.slowdown_gpu_h);
  }
  return out;
}

std::string JobsCsv(const SimResult& r) {
  // Times to the millisecond, whatever their size: %g would round those
  // past 1e6 s to tens of seconds.
  auto time = [](double s) { return absl::StrFormat("%.3f", s); };
  std::string out =
      "trace_index,trace_job_id,job_id,gpus,gpu_milli,submit_s,start_s,end_s,wait_s,jct_s,trace_duration_s,slowdown,"
      "placed_bw_gbps,ideal_bw_gbps,nodes,placement,span,worst_link,state,reason\n";
  for (size_t i = 0; i < r.jobs.size(); ++i) {
    const JobOutcome& j = r.jobs[i];
    const bool ran = j.start_s >= 0 && j.end_s >= 0;
    absl::StrAppend(&out, i, ",", CsvQuoted(j.trace_id), ",", j.job_id, ",", j.gpus, ",", j.gpu_milli, ",",
                    time(j.submit_s), ",", ran ? time(j.start_s) : "", ",", ran ? time(j.end_s) : "", ",",
                    ran ? time(j.start_s - j.submit_s) : "", ",", ran ? time(j.end_s - j.submit_s) : "", ",",
                    time(j.trace_duration_s), ",", Num(j.slowdown), ",", Num(j.placed_bw), ",", Num(j.ideal_bw), ",",
                    j.nodes, ",", CsvQuoted(j.placement), ",", CsvQuoted(j.span), ",", CsvQuoted(j.worst_link), ",",
                    j.job_id == 0 ? "REFUSED" : std::string(StateName(j.state)), ",",
                    j.state == v1::JOB_STATE_COMPLETED ? "" : CsvQuoted(j.reason), "\n");
  }
  return out;
}

std::string Header(const std::vector<PolicyMetrics>& metrics, absl::string_view first) {
  std::string out(first);
  for (const PolicyMetrics& m : metrics) absl::StrAppend(&out, ",", CsvQuoted(m.policy));
  return out + "\n";
}

// One column per policy over time; shorter series are padded with empty cells.
std::string UsageCsv(const std::vector<SimResult>& results, const std::vector<PolicyMetrics>& metrics, bool waiting) {
  std::vector<std::vector<UsageBucket>> series;
  size_t rows = 0;
  for (const SimResult& r : results) {
    series.push_back(UsageOverTime(r, kBucketS));
    rows = std::max(rows, series.back().size());
  }
  std::string out = Header(metrics, "hour");
  for (size_t b = 0; b < rows; ++b) {
    absl::StrAppend(&out, b);
    for (const auto& s : series) {
      absl::StrAppend(&out, ",");
      if (b < s.size()) absl::StrAppend(&out, Num(waiting ? s[b].waiting_jobs : 100 * s[b].utilization));
    }
    absl::StrAppend(&out, "\n");
  }
  return out;
}

std::string CdfCsv(const std::vector<SimResult>& results, const std::vector<PolicyMetrics>& metrics) {
  std::vector<std::vector<double>> jcts;
  for (const SimResult& r : results) {
    std::vector<double>& v = jcts.emplace_back();
    for (const JobOutcome& j : r.jobs) {
      if (j.state == v1::JOB_STATE_COMPLETED) v.push_back((j.end_s - j.submit_s) / 3600);
    }
    std::sort(v.begin(), v.end());
  }
  std::string out = Header(metrics, "fraction");
  for (int i = 1; i <= kCdfPoints; ++i) {
    const double f = static_cast<double>(i) / kCdfPoints;
    absl::StrAppend(&out, Num(f));
    for (const auto& v : jcts) {
      absl::StrAppend(&out, ",");
      if (v.empty()) continue;
      size_t k = static_cast<size_t>(std::ceil(f * static_cast<double>(v.size()))) - 1;
      absl::StrAppend(&out, Num(v[std::min(k, v.size() - 1)]));
    }
    absl::StrAppend(&out, "\n");
  }
  return out;
}

std::string GnuplotScript(size_t policies) {
  const std::string last = absl::StrCat(policies + 1);
  return absl::StrCat(
      "# gnuplot plots.gp (in this folder) renders the PNGs of a gpuschedd simulate run.\n"
      "set datafile separator ','\n"
      "set key autotitle columnhead\n"
      "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) { set terminal pngcairo size 1000,600 } "
      "else { set terminal png size 1000,600 }\n"
      "set grid\n"
      "set output 'jct_cdf.png'\n"
      "set title 'Job completion time, CDF'\n"
      "set xlabel 'job completion time (hours, log scale)'\nset ylabel 'fraction of jobs'\n"
      "set logscale x\nset key bottom right\n"
      "plot for [i=2:",
      last,
      "] 'jct_cdf.csv' using i:1 with lines lw 2 title columnheader(i)\n"
      "unset logscale x\n"
      "set output 'utilization.png'\n"
      "set title 'GPU utilization (hourly mean)'\n"
      "set xlabel 'hours since the first submission'\nset ylabel 'GPUs allocated (%)'\n"
      "set yrange [0:105]\nset key bottom left box opaque\n"
      "plot for [i=2:",
      last,
      "] 'utilization.csv' using 1:i with lines\n"
      "set output 'waiting.png'\n"
      "set title 'Jobs waiting (hourly mean)'\n"
      "set ylabel 'jobs waiting'\nset autoscale y\nset key top left box opaque\n"
      "plot for [i=2:",
      last, "] 'waiting.csv' using 1:i with lines\n");
}

bool OnPath(const std::string& program) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return false;
  for (absl::string_view dir : absl::StrSplit(path, ':', absl::SkipEmpty())) {
    if (access(absl::StrCat(dir, "/", program).c_str(), X_OK) == 0) return true;
  }
  return false;
}

}  // namespace

absl::Status MakeReportDir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot create ", dir, ": ", ec.message()));
  return absl::OkStatus();
}

absl::Status WriteReportFile(const std::string& dir, const std::string& name, const std::string& text,
                             std::vector<std::string>& written) {
  const std::string path = absl::StrCat(dir, "/", name);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
  written.push_back(name);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> WriteReportFiles(const std::string& dir, const std::vector<SimResult>& results,
                                                          const std::vector<PolicyMetrics>& metrics) {
  if (absl::Status s = MakeReportDir(dir); !s.ok()) return s;
  std::vector<std::string> written;
  for (const auto& [name, text] : {std::pair{std::string("summary.csv"), SummaryCsv(metrics)},
                                   std::pair{std::string("utilization.csv"), UsageCsv(results, metrics, false)},
                                   std::pair{std::string("waiting.csv"), UsageCsv(results, metrics, true)},
                                   std::pair{std::string("jct_cdf.csv"), CdfCsv(results, metrics)},
                                   std::pair{std::string("plots.gp"), GnuplotScript(metrics.size())}}) {
    if (absl::Status s = WriteReportFile(dir, name, text, written); !s.ok()) return s;
  }
  for (const SimResult& r : results) {
    if (absl::Status s = WriteReportFile(dir, absl::StrCat("jobs-", r.policy, ".csv"), JobsCsv(r), written); !s.ok()) {
      return s;
    }
  }
  return written;
}

absl::StatusOr<bool> RenderPlots(const std::string& dir) {
  if (!OnPath("gnuplot")) return false;
  // The folder name goes through the shell: quote it for sh.
  std::string quoted = "'";
  for (char c : dir) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  quoted += "'";
  const int rc = std::system(absl::StrCat("cd ", quoted, " && gnuplot plots.gp").c_str());
  if (rc != 0) return absl::InternalError(absl::StrCat("gnuplot plots.gp in ", dir, " failed (status ", rc, ")"));
  return true;
}

}  // namespace gpusched::sim
