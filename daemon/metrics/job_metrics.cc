#include "daemon/metrics/job_metrics.h"

#include "absl/strings/ascii.h"
#include "common/job_states.h"
#include "common/proto_time.h"

namespace gpusched::metrics {
namespace {

// The queue every job without one is in (JobValidator fills it in; a restored
// row from before queues existed may lack it).
constexpr char kDefaultQueue[] = "default";

const std::string& QueueOf(const v1::Job& job) {
  static const std::string kDefault = kDefaultQueue;
  return job.spec().queue().empty() ? kDefault : job.spec().queue();
}

bool Placed(v1::JobState state) { return state == v1::JOB_STATE_STARTING || state == v1::JOB_STATE_RUNNING; }

// From seconds (a CPU job on an idle cluster) to a day (a big gang on a busy one).
Histogram::BucketBoundaries WaitBuckets() { return {0.1, 1, 5, 15, 30, 60, 300, 900, 1800, 3600, 7200, 21600, 86400}; }

}  // namespace

std::string StateLabel(v1::JobState state) { return absl::AsciiStrToLower(StateName(state)); }

JobMetrics::JobMetrics(Registry& registry)
    : jobs_(BuildGauge()
                .Name("gpusched_jobs")
                .Help("Jobs in the queue now, by state (pending, starting, running) and queue")
                .Register(registry)),
      submitted_(BuildCounter()
                     .Name("gpusched_jobs_submitted_total")
                     .Help("Jobs accepted by SubmitJob, by queue (an array: each of its tasks, at submit)")
                     .Register(registry)),
      started_(BuildCounter()
                   .Name("gpusched_jobs_started_total")
                   .Help("Jobs placed and sent to their nodes, by queue (a requeued job counts again)")
                   .Register(registry)),
      finished_(
          BuildCounter()
              .Name("gpusched_jobs_finished_total")
              .Help("Jobs that ended, by final state (completed, failed, cancelled, timeout, node_fail, preempted) "
                    "and queue")
              .Register(registry)),
      requeued_(BuildCounter()
                    .Name("gpusched_jobs_requeued_total")
                    .Help("Times a placed job went back to the queue (preempted, or a node of its gang failed), "
                          "by queue")
                    .Register(registry)),
      wait_(BuildHistogram()
                .Name("gpusched_job_wait_seconds")
                .Help("Time from submit until every rank of the job runs")
                .Register(registry)
                .Add({}, WaitBuckets())),
      placements_(registry) {
  // Present from the first scrape, so that dashboards and alerts read 0
  // rather than nothing on an idle daemon.
  for (v1::JobState state : {v1::JOB_STATE_PENDING, v1::JOB_STATE_STARTING, v1::JOB_STATE_RUNNING}) {
    Depth(state, kDefaultQueue);
  }
  PerQueue(submitted_, submitted_by_queue_, kDefaultQueue);
  PerQueue(started_, started_by_queue_, kDefaultQueue);
  PerQueue(requeued_, requeued_by_queue_, kDefaultQueue);
}

Gauge& JobMetrics::Depth(v1::JobState state, const std::string& queue) {
  auto key = std::make_pair(static_cast<int>(state), queue);
  auto it = depth_.find(key);
  if (it == depth_.end()) {
    Gauge* gauge = &jobs_.Add({{"state", StateLabel(state)}, {"queue", queue}});
    it = depth_.emplace(std::move(key), gauge).first;
  }
  return *it->second;
}

Counter& JobMetrics::PerQueue(Family<Counter>& family, std::map<std::string, Counter*>& cache,
                              const std::string& queue) {
  auto it = cache.find(queue);
  if (it == cache.end()) it = cache.emplace(queue, &family.Add({{"queue", queue}})).first;
  return *it->second;
}

Counter& JobMetrics::Finished(v1::JobState state, const std::string& queue) {
  auto key = std::make_pair(static_cast<int>(state), queue);
  auto it = finished_by_state_.find(key);
  if (it == finished_by_state_.end()) {
    Counter* counter = &finished_.Add({{"state", StateLabel(state)}, {"queue", queue}});
    it = finished_by_state_.emplace(std::move(key), counter).first;
  }
  return *it->second;
}

void JobMetrics::Restore(const v1::Job& job) {
  if (IsTerminal(job.state()) || active_.contains(job.id())) return;
  active_[job.id()] = Tracked{job.state(), QueueOf(job), job.attempt()};
  Depth(job.state(), QueueOf(job)).Increment();
}

void JobMetrics::UpdateArray(const JobArrayRecord& record) {
  const int64_t unmade = record.done() ? 0 : record.count() - record.materialized;
  UnmadeTasks& tracked = arrays_[record.array_id()];
  if (tracked.queue.empty()) tracked.queue = QueueOf(record.prototype);
  Gauge& pending = Depth(v1::JOB_STATE_PENDING, tracked.queue);
  if (unmade > tracked.count) pending.Increment(static_cast<double>(unmade - tracked.count));
  if (unmade < tracked.count) pending.Decrement(static_cast<double>(tracked.count - unmade));
  tracked.count = unmade;
  if (unmade == 0) arrays_.erase(record.array_id());
}

void JobMetrics::Update(const v1::Job& job) {
  const std::string& queue = QueueOf(job);
  auto it = active_.find(job.id());
  const bool known = it != active_.end();
  const v1::JobState before = known ? it->second.state : v1::JOB_STATE_UNSPECIFIED;
  // Each requeue starts a new attempt; several may pass between two versions.
  const int requeues = known ? job.attempt() - it->second.attempt : 0;
  if (known && before == job.state() && requeues == 0) return;  // a new reason, an estimate: nothing to count
  if (requeues > 0) {
    PerQueue(requeued_, requeued_by_queue_, queue).Increment(requeues);
    it->second.attempt = job.attempt();
  }

  // Unknown means new: a submit, and perhaps more in the same pass (a start,
  // even an end) that this version already shows. An array is submitted
  // whole, with its first task (which names it): its later tasks, made jobs
  // as they come up, were counted then.
  if (!known && (!job.has_array() || job.array().array_id() == job.id())) {
    PerQueue(submitted_, submitted_by_queue_, queue).Increment(job.has_array() ? job.array().count() : 1);
  }
  if (Placed(job.state()) && (!Placed(before) || requeues > 0)) {
    PerQueue(started_, started_by_queue_, queue).Increment();
    placements_.Observe(job.allocation());
  }
  // The core sets start_time when every rank runs, as Slurm's start does. A
  // job that started and ended between two versions (a batch) ran too.
  const bool ran_now =
      job.state() == v1::JOB_STATE_RUNNING || (IsTerminal(job.state()) && before == v1::JOB_STATE_STARTING);
  if (ran_now && before != v1::JOB_STATE_RUNNING && job.has_start_time() && job.has_submit_time()) {
    wait_.Observe(absl::ToDoubleSeconds(FromProtoTime(job.start_time()) - FromProtoTime(job.submit_time())));
  }
  if (known) Depth(before, it->second.queue).Decrement();

  if (IsTerminal(job.state())) {
    Finished(job.state(), queue).Increment();
    if (known) active_.erase(it);
    return;
  }
  Depth(job.state(), queue).Increment();
  if (known) {
    it->second.state = job.state();
  } else {
    active_.emplace(job.id(), Tracked{job.state(), queue, job.attempt()});
  }
}

}  // namespace gpusched::metrics
