#include "daemon/sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/clock.h"
#include "common/job_states.h"
#include "common/proto_time.h"
#include "daemon/core/gang_request.h"
#include "daemon/core/scheduler_core.h"

namespace gpusched::sim {
namespace {

// The virtual clock's zero: any fixed instant after the epoch does (a
// Timestamp of exactly the epoch reads as unset); 2021-01-01T00:00:00Z.
const absl::Time kZero = absl::FromUnixSeconds(1'609'459'200);

// The core's own bound on time limits (SpecLimits::max_time_limit_s).
constexpr int64_t kMaxTimeLimitS = 366LL * 24 * 3600;

double SecondsSince(const google::protobuf::Timestamp& ts) {
  return IsSet(ts) ? absl::ToDoubleSeconds(FromProtoTime(ts) - kZero) : -1;
}

// What a simulated agent reports, and when.
struct AgentEvent {
  int64_t time_ns;
  uint64_t seq;  // creation order: breaks ties deterministically
  std::string node;
  uint64_t job_id;
  v1::JobUpdate::Kind kind;  // UNSPECIFIED: a wake-up for a time limit, no report
  int exit_code;

  bool operator>(const AgentEvent& o) const { return std::tie(time_ns, seq) > std::tie(o.time_ns, o.seq); }
};

class Replay {
 public:
  Replay(const Trace& trace, const SimCluster& cluster, const SimOptions& options)
      : trace_(trace), options_(options), core_(clock_, CoreOptionsFor(options)), ideal_(cluster.nodes) {
    result_.policy = options.policy;
    result_.total_gpus = cluster.total_gpus;
    result_.jobs.resize(trace.jobs.size());
    clock_.Set(kZero);
    core::Effects fx;
    for (const v1::NodeInfo& node : cluster.nodes) {
      v1::RegisterNode registration;
      *registration.mutable_node() = node;
      v1::RegisterAck ack;
      core_.AgentRegistered(registration, fx, ack);
    }
  }

  SimResult Run() {
    size_t next_submit = 0;
    while (next_submit < trace_.jobs.size() || !events_.empty()) {
      int64_t now = std::numeric_limits<int64_t>::max();
      if (!events_.empty()) now = events_.top().time_ns;
      if (next_submit < trace_.jobs.size()) now = std::min(now, SubmitNs(next_submit));
      clock_.Set(kZero + absl::Nanoseconds(now));

      core::Effects fx;
      // One batch: every agent report due now, then every submission due now.
      while (!events_.empty() && events_.top().time_ns == now) {
        AgentEvent e = events_.top();
        events_.pop();
        Report(e, now, fx);
      }
      while (next_submit < trace_.jobs.size() && SubmitNs(next_submit) == now) Submit(next_submit++, fx);
      core_.Tick(fx);
      core_.Schedule(fx);
      ++result_.passes;
      Apply(fx, now);
      Sample(now);
    }
    // Whatever is still pending could never be placed (ever-fits said yes,
    // the policy said no on the drained cluster).
    for (size_t i = 0; i < job_of_trace_.size(); ++i) {
      if (job_of_trace_[i] == 0) continue;
      const v1::Job* job = core_.FindActive(job_of_trace_[i]);
      if (job == nullptr) continue;
      result_.jobs[i].state = job->state();
      result_.jobs[i].reason = job->reason();
    }
    return std::move(result_);
  }

 private:
  static core::CoreOptions CoreOptionsFor(const SimOptions& options) {
    core::CoreOptions o;
    o.placement_policy = options.policy;
    if (!options.multifactor) {
      o.queues.weights = core::PriorityWeights::None();
    }
    o.queue_depth = options.queue_depth;
    if (options.head_blocks_after >= absl::ZeroDuration()) o.head_blocks_after = options.head_blocks_after;
    // The core weighs wait-or-spread with the model the replay runs by.
    o.spread_comm_share = options.model.slowdown ? options.model.comm_share : 0;
    // Simulated agents never fall silent; heartbeats every few seconds of
    // virtual time would only cost passes.
    o.node_not_responding_after = absl::InfiniteDuration();
    o.node_down_after = absl::InfiniteDuration();
    return o;
  }

  int64_t SubmitNs(size_t i) const { return trace_.jobs[i].submit_s * int64_t{1'000'000'000}; }

  void Submit(size_t i, core::Effects& fx) {
    const TraceJob& t = trace_.jobs[i];
    JobOutcome& out = result_.jobs[i];
    out.trace_id = t.id;
    out.gpus = t.gpus;
    out.submit_s = static_cast<double>(t.submit_s);
    out.trace_duration_s = static_cast<double>(t.duration_s);
    v1::JobSpec spec;
    spec.set_name(t.id);
    spec.add_argv("simulated");
    spec.set_user(t.user);
    // The trace's queue names the cluster it came from, not a scheduler
    // queue: every job goes to the core's default queue.
    spec.mutable_resources()->set_gpus(t.gpus);
    spec.set_topology(options_.topology_mode);
    spec.set_topology_wait_s(options_.topology_wait_s);
    if (options_.time_limit_factor > 0) {
      const double limit = std::ceil(static_cast<double>(t.duration_s) * options_.time_limit_factor);
      spec.set_time_limit_s(std::clamp<int64_t>(static_cast<int64_t>(limit), 1, kMaxTimeLimitS));
    }
    auto submitted = core_.Submit(std::move(spec), "", fx);
    job_of_trace_.push_back(0);
    if (!submitted.ok()) {
      out.state = v1::JOB_STATE_CANCELLED;
      out.reason = std::string(submitted.status().message());
      return;
    }
    out.job_id = submitted->job_id;
    job_of_trace_.back() = submitted->job_id;
    // Ids are handed out densely from 1, in submission order.
    trace_of_job_.push_back(i);
    ++pending_;
  }

  void Report(const AgentEvent& e, int64_t now, core::Effects& fx) {
    // A wake-up only makes a batch: its Tick checks the time limit.
    if (e.kind == v1::JobUpdate::KIND_UNSPECIFIED) return;
    v1::JobUpdate update;
    update.set_job_id(e.job_id);
    update.set_kind(e.kind);
    update.set_exit_code(e.exit_code);
    if (e.kind == v1::JobUpdate::KIND_STARTED) {
      update.set_log_dir("/sim/logs");
      // The job runs from now on, for as long as its placement makes it.
      const JobOutcome& out = Outcome(e.job_id);
      const int64_t run_ns = std::llround(out.trace_duration_s * out.slowdown * 1e3) * int64_t{1'000'000};
      events_.push({now + run_ns, seq_++, e.node, e.job_id, v1::JobUpdate::KIND_EXITED, 0});
      if (const v1::Job* job = core_.FindActive(e.job_id); job != nullptr && job->spec().time_limit_s() > 0) {
        events_.push({now + job->spec().time_limit_s() * int64_t{1'000'000'000}, seq_++, "", e.job_id,
                      v1::JobUpdate::KIND_UNSPECIFIED, 0});
      }
    }
    core_.JobUpdate(e.node, update, fx);
  }

  JobOutcome& Outcome(uint64_t job_id) { return result_.jobs[trace_of_job_[job_id - 1]]; }

  // Plays the agents' side of what the core asked for, and notes what ended.
  void Apply(core::Effects& fx, int64_t now) {
    for (const core::AgentCommand& command : fx.agent_commands) {
      if (command.message.has_launch()) {
        const uint64_t id = command.message.launch().job_id();
        JobOutcome& out = Outcome(id);
        if (out.nodes == 0) Placed(id, out);
        events_.push({now, seq_++, command.node, id, v1::JobUpdate::KIND_STARTED, 0});
      } else if (command.message.has_kill()) {
        events_.push({now, seq_++, command.node, command.message.kill().job_id(), v1::JobUpdate::KIND_EXITED,
                      128 + 15});
      }
    }
    for (const auto& [id, job] : fx.jobs) {
      if (!IsTerminal(job.state())) continue;
      JobOutcome& out = Outcome(id);
      out.state = job.state();
      out.reason = job.reason();
      out.submit_s = SecondsSince(job.submit_time());
      out.start_s = SecondsSince(job.start_time());
      out.end_s = SecondsSince(job.end_time());
      if (out.nodes > 0) busy_gpus_ -= out.gpus;
    }
  }

  void Placed(uint64_t id, JobOutcome& out) {
    const v1::Job* job = core_.FindActive(id);
    const v1::Allocation& a = job->allocation();
    out.nodes = a.nodes_size();
    std::vector<std::string> parts;
    for (const v1::NodeAllocation& part : a.nodes()) {
      parts.push_back(absl::StrCat(part.node(), ":", absl::StrJoin(part.gpu_indices(), "+")));
    }
    out.placement = absl::StrJoin(parts, " ");
    out.span = a.span();
    out.worst_link = a.worst_link();
    out.placed_bw = a.est_bus_bandwidth_gbps();
    out.ideal_bw = out.gpus >= 2 ? ideal_.For(core::ToGangRequest(job->spec())) : 0;
    out.slowdown = options_.model.Factor(out.gpus, out.ideal_bw, out.placed_bw);
    busy_gpus_ += out.gpus;
    --pending_;
  }

  void Sample(int64_t now) {
    const double t = static_cast<double>(now) / 1e9;
    auto& usage = result_.usage;
    if (!usage.empty() && usage.back().busy_gpus == busy_gpus_ && usage.back().pending_jobs == pending_) return;
    if (!usage.empty() && usage.back().t_s == t) {
      usage.back().busy_gpus = busy_gpus_;
      usage.back().pending_jobs = pending_;
    } else {
      usage.push_back({t, busy_gpus_, pending_});
    }
  }

  const Trace& trace_;
  const SimOptions& options_;
  ManualClock clock_;
  core::SchedulerCore core_;
  IdealBandwidth ideal_;
  SimResult result_;
  std::priority_queue<AgentEvent, std::vector<AgentEvent>, std::greater<>> events_;
  uint64_t seq_ = 0;
  std::vector<uint64_t> job_of_trace_;  // 0: refused
  std::vector<size_t> trace_of_job_;    // by job id - 1
  int64_t busy_gpus_ = 0;
  int64_t pending_ = 0;
};

}  // namespace

absl::StatusOr<SimResult> Simulate(const Trace& trace, const SimCluster& cluster, const SimOptions& options) {
  if (!core::MakePlacementPolicy(options.policy).ok()) {
    return core::MakePlacementPolicy(options.policy).status();
  }
  if (cluster.nodes.empty()) return absl::InvalidArgumentError("the cluster has no nodes");
  for (const TraceJob& job : trace.jobs) {
    // One virtual nanosecond clock: ~292 years fit in int64 nanoseconds.
    if (job.submit_s > int64_t{1} << 32 || job.duration_s > int64_t{1} << 32) {
      return absl::InvalidArgumentError(absl::StrCat("trace line ", job.line, ": times beyond 136 years"));
    }
  }
  Replay replay(trace, cluster, options);
  return replay.Run();
}

}  // namespace gpusched::sim
