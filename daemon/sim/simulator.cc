#include "daemon/sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <queue>
#include <set>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/clock.h"
#include "common/job_states.h"
#include "common/proto_time.h"
#include "daemon/core/gang_request.h"
#include "daemon/core/scheduler_core.h"
#include "daemon/core/sharing/share_request.h"

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
  // Pool programs: the node's agent registers (a boot done), or a program
  // ends (ok or failed) for power request `request`.
  // Or a spot node is taken back (kInterrupt; `request`: the node's life it
  // was drawn for).
  enum Power { kNoPower = 0, kRegister, kProgramOk, kProgramFailed, kInterrupt };
  Power power = kNoPower;
  uint64_t request = 0;
  int32_t attempt = 0;  // of the job a report is about (a requeued job runs again)

  bool operator>(const AgentEvent& o) const { return std::tie(time_ns, seq) > std::tie(o.time_ns, o.seq); }
};

class Replay {
 public:
  Replay(const Trace& trace, const SimCluster& cluster, const SimOptions& options)
      : trace_(trace), options_(options), core_(clock_, CoreOptionsFor(options, cluster)), ideal_(cluster.nodes) {
    result_.policy = options.policy;
    result_.total_gpus = cluster.total_gpus;
    result_.jobs.resize(trace.jobs.size());
    progress_.resize(trace.jobs.size());
    clock_.Set(kZero);
    core::Effects fx;
    for (const core::PoolSpec& pool : options.pools) {
      for (const std::string& name : pool.nodes) cost_of_[name] = pool.cost_per_gpu_hour;
      if (pool.pool_class == core::PoolClass::kSpot) spot_.insert(pool.nodes.begin(), pool.nodes.end());
      if (!pool.elastic()) continue;
      idle_wake_ = std::max(idle_wake_, pool.idle_before_suspend + absl::Seconds(1));
      for (const std::string& name : pool.nodes) elastic_.insert(name);
    }
    for (const v1::NodeInfo& node : cluster.nodes) {
      info_of_[node.name()] = &node;
      // Elastic nodes register when a resume boots them.
      if (elastic_.contains(node.name())) continue;
      v1::RegisterNode registration;
      *registration.mutable_node() = node;
      v1::RegisterAck ack;
      core_.AgentRegistered(registration, fx, ack);
      DrawInterruption(node.name(), 0);
    }
    for (const auto& [name, slot] : core_.cluster().nodes()) Price(name, slot.state, slot.gpu_count);
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
  static core::CoreOptions CoreOptionsFor(const SimOptions& options, const SimCluster& cluster) {
    core::CoreOptions o;
    o.pools = options.pools;
    for (core::PoolSpec& pool : o.pools) {
      // What its nodes are before they first boot: the cluster's first node of it.
      for (const v1::NodeInfo& node : cluster.nodes) {
        if (!pool.nodes.empty() && node.name() == pool.nodes.front()) pool.shape = node;
      }
    }
    o.placement_policy = options.policy;
    o.share_packing = options.share_packing;
    if (!options.multifactor) {
      o.queues.weights = core::PriorityWeights::None();
    }
    o.queue_depth = options.queue_depth;
    if (options.head_blocks_after >= absl::ZeroDuration()) o.head_blocks_after = options.head_blocks_after;
    o.queues.queues.front().demote_after_s = absl::ToInt64Seconds(options.demote_after);
    o.queues.queues.front().demote_after_per_gpu = options.demote_after_per_gpu;
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
    out.gpu_milli = t.gpu_milli;
    out.submit_s = static_cast<double>(t.submit_s);
    out.trace_duration_s = static_cast<double>(t.duration_s);
    v1::JobSpec spec;
    spec.set_name(t.id);
    spec.add_argv("simulated");
    spec.set_user(t.user);
    // The trace's queue names the cluster it came from, not a scheduler
    // queue: every job goes to the core's default queue.
    v1::Resources& r = *spec.mutable_resources();
    r.set_gpus(t.gpus);
    if (t.one_node) r.set_nodes(1);
    if (t.gpu_milli < core::sharing::kWholeGpuMilli) r.set_gpu_share_milli(t.gpu_milli);
    // Whole cores per GPU, rounded up: the core counts CPUs in cores.
    if (t.cpu_milli > 0 && t.gpus > 0) r.set_cpus_per_gpu((t.cpu_milli + t.gpus * 1000 - 1) / (t.gpus * 1000));
    if (t.memory_mib > 0 && t.gpus > 0) r.set_mem_per_gpu_mb((t.memory_mib + t.gpus - 1) / t.gpus);
    r.set_gpu_model(t.gpu_model);
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
    if (e.power != AgentEvent::kNoPower) return PlayPower(e, now, fx);
    // A wake-up only makes a batch: its Tick checks the time limit.
    if (e.kind == v1::JobUpdate::KIND_UNSPECIFIED) return;
    v1::JobUpdate update;
    update.set_job_id(e.job_id);
    update.set_kind(e.kind);
    update.set_exit_code(e.exit_code);
    update.set_attempt(e.attempt);
    if (e.kind == v1::JobUpdate::KIND_STARTED) {
      update.set_log_dir("/sim/logs");
      // The job runs from now on, for as long as its placement makes it.
      const JobOutcome& out = Outcome(e.job_id);
      Progress& progress = ProgressOf(e.job_id);
      progress.started_s = static_cast<double>(now) / 1e9;
      progress.restoring_s = progress.saved_s > 0 ? absl::ToDoubleSeconds(options_.checkpoint_restore) : 0;
      const double run_s = (out.trace_duration_s - progress.saved_s) * out.slowdown + progress.restoring_s;
      const int64_t run_ns = std::llround(run_s * 1e3) * int64_t{1'000'000};
      events_.push(
          {now + run_ns, seq_++, e.node, e.job_id, v1::JobUpdate::KIND_EXITED, 0, AgentEvent::kNoPower, 0, e.attempt});
      if (const v1::Job* job = core_.FindActive(e.job_id); job != nullptr && job->spec().time_limit_s() > 0) {
        events_.push({now + job->spec().time_limit_s() * int64_t{1'000'000'000}, seq_++, "", e.job_id,
                      v1::JobUpdate::KIND_UNSPECIFIED, 0});
      }
    }
    core_.JobUpdate(e.node, update, fx);
  }

  void PlayPower(const AgentEvent& e, int64_t now, core::Effects& fx) {
    if (e.power == AgentEvent::kRegister) {
      v1::RegisterNode registration;
      *registration.mutable_node() = *info_of_.at(e.node);
      v1::RegisterAck ack;
      core_.AgentRegistered(registration, fx, ack);
      Wake(now + absl::ToInt64Nanoseconds(idle_wake_));
      DrawInterruption(e.node, now);
      return;
    }
    if (e.power == AgentEvent::kInterrupt) {
      // Only the life it was drawn for: a node that powered down since is
      // another machine when it boots again.
      const core::NodeSlot* slot = core_.cluster().Find(e.node);
      if (life_[e.node] != e.request || slot == nullptr || slot->state != v1::NODE_STATE_UP) return;
      if (core_.InterruptNode(e.node, options_.power.spot_notice, "simulated", fx).ok()) {
        ++result_.spot_interruptions;
        Wake(now + absl::ToInt64Nanoseconds(options_.power.spot_notice) + 1);
      }
      return;
    }
    auto request = requests_.find(e.request);
    if (request == requests_.end()) return;
    const absl::Status outcome =
        e.power == AgentEvent::kProgramOk ? absl::OkStatus() : absl::AbortedError("(simulated) resume failed");
    core_.PowerProgramEnded(request->second, outcome, fx);
    requests_.erase(request);
  }

  void Wake(int64_t at) { events_.push({at, seq_++, "", 0, v1::JobUpdate::KIND_UNSPECIFIED, 0}); }

  // A uniform draw in [0, 1) from `key` and the seed: replays repeat.
  double Draw(uint64_t key) const {
    uint64_t h = (key + options_.power.seed * 0x9E3779B97F4A7C15ULL) * 0xBF58476D1CE4E5B9ULL;
    h ^= h >> 31;
    h *= 0x94D049BB133111EBULL;
    h ^= h >> 29;
    return static_cast<double>(h >> 11) / static_cast<double>(uint64_t{1} << 53);
  }

  // A spot node that came up is taken back after an exponential time.
  void DrawInterruption(const std::string& node, int64_t now) {
    const double rate = options_.power.spot_interruptions_per_node_hour;
    if (rate <= 0 || !spot_.contains(node)) return;
    const uint64_t life = ++life_[node];
    const double hours = -std::log(1 - Draw(std::hash<std::string>()(node) * 31 + life)) / rate;
    const int64_t at = now + static_cast<int64_t>(std::min(hours * 3600, 1e9) * 1e9);
    events_.push({at, seq_++, node, 0, v1::JobUpdate::KIND_UNSPECIFIED, 0, AgentEvent::kInterrupt, life});
  }

  // Plays the pools' programs: a resume call fails at the configured rate
  // (decided by its id and the seed, so replays repeat), else its nodes
  // register after the boot delay; a suspend ends after its delay.
  void StartPrograms(const core::Effects& fx, int64_t now) {
    const SimPower& power = options_.power;
    for (const core::PowerRequest& r : fx.power_requests) {
      requests_[r.id] = r;
      if (r.kind == core::PowerRequest::Kind::kSuspend) {
        events_.push({now + absl::ToInt64Nanoseconds(power.suspend_delay), seq_++, "", 0,
                      v1::JobUpdate::KIND_UNSPECIFIED, 0, AgentEvent::kProgramOk, r.id});
        continue;
      }
      const int64_t booted = now + absl::ToInt64Nanoseconds(power.boot_delay);
      const uint64_t h = (r.id + power.seed * 0x9E3779B97F4A7C15ULL) * 0xBF58476D1CE4E5B9ULL;
      if (static_cast<double>(h >> 11) / static_cast<double>(uint64_t{1} << 53) < power.boot_failure_rate) {
        events_.push({booted, seq_++, "", 0, v1::JobUpdate::KIND_UNSPECIFIED, 0, AgentEvent::kProgramFailed, r.id});
        continue;
      }
      events_.push({now, seq_++, "", 0, v1::JobUpdate::KIND_UNSPECIFIED, 0, AgentEvent::kProgramOk, r.id});
      for (const std::string& node : r.nodes) {
        events_.push({booted, seq_++, node, 0, v1::JobUpdate::KIND_UNSPECIFIED, 0, AgentEvent::kRegister, 0});
      }
      // The core's own timeout for a boot that never registers.
      Wake(now + absl::ToInt64Nanoseconds(r.timeout) + 1'000'000'000);
    }
  }

  JobOutcome& Outcome(uint64_t job_id) { return result_.jobs[trace_of_job_[job_id - 1]]; }

  // Each trace job's running attempt and the work its stopped ones saved.
  struct Progress {
    double started_s = 0;    // when the running attempt started
    double restoring_s = 0;  // its restore from the checkpoint, at its start
    double saved_s = 0;      // trace seconds of work done by stopped attempts
  };
  Progress& ProgressOf(uint64_t job_id) { return progress_[trace_of_job_[job_id - 1]]; }

  // Plays the agents' side of what the core asked for, and notes what ended.
  void Apply(core::Effects& fx, int64_t now) {
    StartPrograms(fx, now);
    for (const auto& [id, job] : fx.jobs) {
      auto [attempt, fresh] = attempt_of_.try_emplace(id, 0);
      if (job.attempt() == attempt->second) continue;
      attempt->second = job.attempt();
      JobOutcome& out = Outcome(id);
      if (out.nodes == 0) continue;
      // Requeued (preempted, or its spot node taken back): it gives its GPUs
      // up and is placed again (below, if it starts in this pass), from the
      // beginning or from what it saved.
      SaveProgress(id, out, now);
      busy_milli_ -= out.gpus * out.gpu_milli;
      out.nodes = 0;
      ++pending_;
      ++result_.requeues;
    }
    for (const core::AgentCommand& command : fx.agent_commands) {
      if (command.message.has_launch()) {
        const uint64_t id = command.message.launch().job_id();
        JobOutcome& out = Outcome(id);
        if (out.nodes == 0) Placed(id, out);
        // Until its start is reported, the attempt has done no work.
        Progress& progress = ProgressOf(id);
        progress.started_s = static_cast<double>(now) / 1e9;
        progress.restoring_s = 0;
        events_.push({now, seq_++, command.node, id, v1::JobUpdate::KIND_STARTED, 0, AgentEvent::kNoPower, 0,
                      command.message.launch().attempt()});
      } else if (command.message.has_kill()) {
        events_.push({now, seq_++, command.node, command.message.kill().job_id(), v1::JobUpdate::KIND_EXITED, 128 + 15,
                      AgentEvent::kNoPower, 0, command.message.kill().attempt()});
      }
    }
    // A node's power changes write its row.
    for (const auto& [name, row] : fx.nodes) Price(name, row.state(), row.info().gpus_size());
    for (const auto& [id, job] : fx.jobs) {
      if (!IsTerminal(job.state())) continue;
      JobOutcome& out = Outcome(id);
      out.state = job.state();
      out.reason = job.reason();
      out.submit_s = SecondsSince(job.submit_time());
      out.start_s = SecondsSince(job.start_time());
      out.end_s = SecondsSince(job.end_time());
      if (out.nodes > 0) busy_milli_ -= out.gpus * out.gpu_milli;
      // Its nodes may go idle: a pass when they have been idle long enough.
      if (!elastic_.empty()) Wake(now + absl::ToInt64Nanoseconds(idle_wake_));
    }
  }

  // A stopped attempt's work, in the trace's seconds, kept where jobs
  // checkpoint: what it ran past its restore, at its placement's pace.
  void SaveProgress(uint64_t job_id, const JobOutcome& out, int64_t now) {
    if (options_.checkpoint_restore < absl::ZeroDuration()) return;
    Progress& progress = ProgressOf(job_id);
    const double worked = static_cast<double>(now) / 1e9 - progress.started_s - progress.restoring_s;
    if (worked <= 0) return;
    progress.saved_s = std::min(out.trace_duration_s, progress.saved_s + worked / out.slowdown);
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
    busy_milli_ += out.gpus * out.gpu_milli;
    --pending_;
  }

  // What the node adds to the GPUs paid for and their price per hour now.
  void Price(const std::string& name, v1::NodeState state, int64_t gpus) {
    auto price = cost_of_.find(name);
    const double per_gpu = price == cost_of_.end() ? options_.power.static_cost_per_gpu_hour : price->second;
    const int64_t on = state == v1::NODE_STATE_POWERED_DOWN ? 0 : gpus;
    auto [it, fresh] = paid_of_.try_emplace(name, 0);
    paid_gpus_ += on - it->second;
    cost_per_hour_ += static_cast<double>(on - it->second) * per_gpu;
    it->second = on;
  }

  void Sample(int64_t now) {
    const double t = static_cast<double>(now) / 1e9;
    const int64_t paid = paid_gpus_;
    const double cost = cost_per_hour_;
    const double busy = static_cast<double>(busy_milli_) / core::sharing::kWholeGpuMilli;
    const UsageSample sample{t, busy, pending_, paid, cost};
    auto& usage = result_.usage;
    if (!usage.empty() && usage.back().busy_gpus == busy && usage.back().pending_jobs == pending_ &&
        usage.back().paid_gpus == paid && usage.back().cost_per_hour == cost) {
      return;
    }
    if (!usage.empty() && usage.back().t_s == t) {
      usage.back() = sample;
    } else {
      usage.push_back(sample);
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
  int64_t busy_milli_ = 0;              // GPUs allocated, in thousandths (shares count as theirs)
  int64_t pending_ = 0;
  // Elastic pools: their nodes, each pool node's price, the requests whose
  // programs run, and how long after a job ends a pass may suspend its nodes.
  std::set<std::string> elastic_;
  // Spot nodes, and how many times each came up (interruptions are drawn per life).
  std::set<std::string> spot_;
  std::map<std::string, uint64_t> life_;
  std::map<uint64_t, int32_t> attempt_of_;  // each job's attempt as last seen
  std::vector<Progress> progress_;
  std::map<std::string, double> cost_of_;
  std::map<std::string, const v1::NodeInfo*> info_of_;
  std::map<uint64_t, core::PowerRequest> requests_;
  absl::Duration idle_wake_ = absl::ZeroDuration();
  // Kept up to date from the node rows (Price): each node's GPUs paid for,
  // their sum and their price per hour.
  std::map<std::string, int64_t> paid_of_;
  int64_t paid_gpus_ = 0;
  double cost_per_hour_ = 0;
};

}  // namespace

absl::StatusOr<SimResult> Simulate(const Trace& trace, const SimCluster& cluster, const SimOptions& options) {
  if (!core::MakePlacementPolicy(options.policy).ok()) {
    return core::MakePlacementPolicy(options.policy).status();
  }
  if (cluster.nodes.empty()) return absl::InvalidArgumentError("the cluster has no nodes");
  std::set<std::string> names;
  for (const v1::NodeInfo& node : cluster.nodes) names.insert(node.name());
  for (const core::PoolSpec& pool : options.pools) {
    for (const std::string& node : pool.nodes) {
      if (!names.contains(node)) {
        return absl::InvalidArgumentError(
            absl::StrCat("pool ", pool.name, " names node ", node, ", which the cluster spec does not have"));
      }
    }
  }
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
