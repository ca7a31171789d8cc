#include "daemon/sim/metrics.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/match.h"

namespace gpusched::sim {
namespace {

// Calls f(from, to, sample) for each stretch of [0, end) the usage step
// function holds one value over.
template <typename F>
void ForEachStretch(const std::vector<UsageSample>& usage, double end, F f) {
  for (size_t i = 0; i < usage.size(); ++i) {
    const double from = usage[i].t_s;
    const double to = std::min(end, i + 1 < usage.size() ? usage[i + 1].t_s : end);
    if (to > from) f(from, to, usage[i]);
  }
}

}  // namespace

Distribution Summarize(std::vector<double> values) {
  Distribution d;
  d.count = static_cast<int64_t>(values.size());
  if (values.empty()) return d;
  std::sort(values.begin(), values.end());
  double sum = 0;
  for (double v : values) sum += v;
  d.mean = sum / static_cast<double>(values.size());
  auto rank = [&](double p) {
    const auto n = static_cast<double>(values.size());
    size_t i = static_cast<size_t>(std::max(1.0, std::ceil(p / 100.0 * n))) - 1;
    return values[std::min(i, values.size() - 1)];
  };
  d.p50 = rank(50);
  d.p95 = rank(95);
  d.p99 = rank(99);
  return d;
}

absl::string_view SizeClassName(int size_class) {
  static constexpr absl::string_view kNames[kSizeClasses] = {"all", "1", "2-4", "5-8", ">8", "<1"};
  return kNames[size_class];
}

int SizeClassOf(int64_t gpus, int gpu_milli) {
  if (gpu_milli < 1000) return kShareClass;
  if (gpus <= 1) return 1;
  if (gpus <= 4) return 2;
  if (gpus <= 8) return 3;
  return 4;
}

PolicyMetrics ComputeMetrics(const SimResult& result) {
  PolicyMetrics m;
  m.policy = result.policy;
  m.jobs = static_cast<int64_t>(result.jobs.size());
  std::array<std::vector<double>, kSizeClasses> jct, wait;
  double first_submit = 0, last_end = 0;
  double bw_sum = 0, slowdown_sum = 0;
  int64_t one_node = 0, one_domain = 0, one_leaf = 0;
  bool any = false;
  for (const JobOutcome& job : result.jobs) {
    if (!any || job.submit_s < first_submit) first_submit = job.submit_s;
    any = true;
    if (job.job_id == 0) {
      ++m.refused;
      continue;
    }
    if (job.start_s < 0) {
      ++m.never_started;
      continue;
    }
    last_end = std::max(last_end, job.end_s);
    if (job.state == v1::JOB_STATE_TIMEOUT) ++m.timed_out;
    if (job.state == v1::JOB_STATE_COMPLETED) {
      ++m.completed;
      for (int c : {0, SizeClassOf(job.gpus, job.gpu_milli)}) {
        jct[c].push_back(job.end_s - job.submit_s);
        wait[c].push_back(job.start_s - job.submit_s);
      }
    }
    if (job.gpus < 2) continue;
    ++m.multi_gpu_jobs;
    const bool domain_span = absl::StartsWith(job.span, "nvlink-domain");
    one_node += job.nodes == 1 ? 1 : 0;
    one_domain += (job.nodes == 1 && absl::StartsWith(job.worst_link, "NV")) || domain_span ? 1 : 0;
    one_leaf += job.nodes == 1 || domain_span || absl::StartsWith(job.span, "leaf") ? 1 : 0;
    bw_sum += job.ideal_bw > 0 ? job.placed_bw / job.ideal_bw : 1.0;
    slowdown_sum += job.slowdown;
    m.slowdown_gpu_h += static_cast<double>(job.gpus) * job.trace_duration_s * (job.slowdown - 1) / 3600;
  }
  for (int c = 0; c < kSizeClasses; ++c) {
    m.jct[c] = Summarize(std::move(jct[c]));
    m.wait[c] = Summarize(std::move(wait[c]));
  }
  if (m.multi_gpu_jobs > 0) {
    const auto n = static_cast<double>(m.multi_gpu_jobs);
    m.in_one_node = static_cast<double>(one_node) / n;
    m.in_one_nvlink_domain = static_cast<double>(one_domain) / n;
    m.in_one_leaf = static_cast<double>(one_leaf) / n;
    m.bw_vs_ideal = bw_sum / n;
    m.mean_slowdown = slowdown_sum / n;
  }
  m.makespan_s = std::max(0.0, last_end - first_submit);
  const double total = static_cast<double>(result.total_gpus);
  double busy = 0, waiting = 0, free_waiting = 0, paid = 0, cost = 0;
  ForEachStretch(result.usage, last_end, [&](double from, double to, const UsageSample& s) {
    busy += s.busy_gpus * (to - from);
    paid += static_cast<double>(s.paid_gpus) * (to - from);
    cost += s.cost_per_hour * (to - from) / 3600;
    if (s.pending_jobs > 0) {
      waiting += to - from;
      free_waiting += (total - s.busy_gpus) * (to - from);
    }
  });
  if (m.makespan_s > 0 && total > 0) {
    m.utilization = busy / (total * m.makespan_s);
    m.waiting_time_share = waiting / m.makespan_s;
  }
  m.free_while_waiting_gpu_h = free_waiting / 3600;
  m.paid_gpu_h = paid / 3600;
  m.used_gpu_h = busy / 3600;
  m.waste = paid > 0 ? 1 - busy / paid : 0;
  m.cost = cost;
  m.spot_interruptions = result.spot_interruptions;
  m.requeues = result.requeues;
  if (waiting > 0 && total > 0) m.free_while_waiting_share = free_waiting / (total * waiting);
  return m;
}

std::vector<UsageBucket> UsageOverTime(const SimResult& result, double bucket_s) {
  double end = 0;
  for (const JobOutcome& job : result.jobs) end = std::max(end, job.end_s);
  std::vector<UsageBucket> buckets(static_cast<size_t>(std::ceil(end / bucket_s)));
  for (size_t b = 0; b < buckets.size(); ++b) buckets[b].start_s = static_cast<double>(b) * bucket_s;
  const double total = static_cast<double>(std::max<int64_t>(1, result.total_gpus));
  ForEachStretch(result.usage, end, [&](double from, double to, const UsageSample& s) {
    // A stretch may cover several buckets: split it at their edges.
    for (double t = from; t < to;) {
      auto b = static_cast<size_t>(t / bucket_s);
      if (static_cast<double>(b + 1) * bucket_s <= t) ++b;  // t on an edge, rounded down
      if (b >= buckets.size()) break;
      const double edge = std::min(to, static_cast<double>(b + 1) * bucket_s);
      buckets[b].utilization += s.busy_gpus / total * (edge - t) / bucket_s;
      buckets[b].waiting_jobs += static_cast<double>(s.pending_jobs) * (edge - t) / bucket_s;
      t = edge;
    }
  });
  return buckets;
}

}  // namespace gpusched::sim
