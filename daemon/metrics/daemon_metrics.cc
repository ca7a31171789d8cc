#include "daemon/metrics/daemon_metrics.h"

namespace gpusched::metrics {
namespace {

// A submit waits for one group commit (an fsync, a few ms on SSD); a pass
// over a few jobs takes microseconds, over thousands of pending jobs on
// thousands of nodes tens of milliseconds.
Histogram::BucketBoundaries SubmitBuckets() {
  return {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5};
}
Histogram::BucketBoundaries PassBuckets() {
  return {0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
          0.01,    0.025,    0.05,    0.1,    0.25,    0.5,    1,     2.5};
}

Histogram& MakeHistogram(Registry& registry, const char* name, const char* help, Histogram::BucketBoundaries buckets) {
  return BuildHistogram().Name(name).Help(help).Register(registry).Add({}, std::move(buckets));
}

}  // namespace

DaemonMetrics::DaemonMetrics()
    : registry_(std::make_shared<Registry>()),
      submit_(MakeHistogram(*registry_, "gpusched_submit_duration_seconds",
                            "SubmitJob calls from arrival to the reply, which waits until the job is durable",
                            SubmitBuckets())),
      pass_(MakeHistogram(*registry_, "gpusched_scheduling_pass_duration_seconds",
                          "Scheduling passes: deciding which pending jobs start where", PassBuckets())),
      jobs_(*registry_),
      nodes_(*registry_),
      pools_(*registry_) {}

void DaemonMetrics::RestoreJobs(const std::vector<v1::Job>& jobs, const std::vector<JobArrayRecord>& arrays) {
  for (const v1::Job& job : jobs) jobs_.Restore(job);
  for (const JobArrayRecord& record : arrays) jobs_.UpdateArray(record);
}

void DaemonMetrics::RestoreNodes(const std::vector<v1::Node>& nodes) {
  for (const v1::Node& node : nodes) {
    nodes_.Update(node);
    pools_.Update(node);
  }
}

void DaemonMetrics::Apply(const core::Effects& fx) {
  for (const auto& [id, job] : fx.jobs) jobs_.Update(job);
  for (const auto& [id, record] : fx.arrays) jobs_.UpdateArray(record);
  for (const core::PowerTransition& t : fx.power_transitions) pools_.Transition(t);
  for (const auto& [name, node] : fx.nodes) {
    nodes_.Update(node);
    pools_.Update(node);
  }
  for (const auto& [name, usage] : fx.node_usage) {
    nodes_.Update(name, usage);
    pools_.UpdateUsage(name, usage.gpus_total, usage.gpus_free);
  }
}

}  // namespace gpusched::metrics
