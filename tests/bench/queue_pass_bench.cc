// queue_pass_bench: one scheduling pass of the real SchedulerCore with the
// queue policy on, at the size issue 5 asks for: 10,000 pending and 5,000
// running jobs on 5,000 nodes of 8 GPUs, with backfill (every job has a time
// limit), multifactor priority over 50 users and two queues, the higher of
// which may preempt.
//
// The cluster is 5,000 copies of a real HGX H200 topology fixture under leaf
// switches of 32 nodes and spines of 16 leaves. Running jobs (1-16 GPUs,
// filling about 90% of the GPUs) are submitted, placed by a pass and
// reported started; then the pending jobs (1-64 GPUs) are submitted and the
// next passes are timed:
//   pass 1   the whole backlog is ranked, the head gets a reservation,
//            every other job is tried for backfill (queue_depth = all);
//   pass 2   after 10% of the running jobs ended;
//   pass 3   --arrivals tier-1 jobs of 8-64 GPUs arrive on the now full
//            cluster: each that cannot be placed plans a preemption (one
//            per pass, as the core does), on top of the full pass.
// Two cores side by side, on the same jobs: the configured multifactor
// weights, and all weights 0 (submission order, the cost without ranking).
//
// With --fractional F, a third lane runs the same passes on the same nodes
// with their GPUs time-sliced and a share F of the jobs (running and
// pending) asking for 25-81% of one GPU instead: what sharing costs a pass.
// Its running jobs are drawn until they ask for as many GPUs as the first
// lane's (a share counting as its fraction), so that its passes start on a
// cluster as full: with the same number of running jobs, a third of the GPUs
// would be free and pass 1 would start seven times as many jobs, which
// measures the room, not what sharing costs.
//
//   queue_pass_bench [--nodes 5000 --running 5000 --pending 10000 --users 50 --urgent 0.01 --seed 1]
//                    [--no-time-limits] [--fractional 0.5 [--fgd]]
#include <chrono>
#include <iostream>
#include <memory>
#include <random>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/clock.h"
#include "daemon/core/scheduler_core.h"
#include "daemon/sim/cluster_spec.h"
#include "daemon/sim/sim_cluster.h"
#include "tests/bench/report.h"

namespace gpusched::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;

struct Options {
  int nodes = 5000;
  int running = 5000;
  int pending = 10000;
  int users = 50;
  double urgent = 0.01;  // share of pending jobs in the tier-1 queue
  int arrivals = 10;     // tier-1 jobs submitted before pass 3
  uint64_t seed = 1;
  // Jobs without time limits, as most are submitted: reservations and the
  // ranking then come from run times learned from a history of ended jobs,
  // and multi-GPU jobs weigh waiting against spreading.
  bool no_time_limits = false;
  double fractional = 0;  // --fractional: the share of jobs asking for part of one GPU
  bool fgd = false;       // --fgd: a fourth lane packing the shares by FGD
};

constexpr int kShareMilli[] = {250, 320, 470, 500, 650, 810};

std::string ClusterToml(int nodes) {
  std::string toml = absl::StrCat(
      "name = \"bench\"\n[[node_type]]\nname = \"h200\"\ntopology = \"hgx-h200-8gpu-12nic.txt\"\n",
      "gpu_model = \"NVIDIA H200\"\ngpu_memory_mb = 143771\ncpus = 224\nmemory_mb = 2063937\nnic_gbps = 400\n",
      "[[nodes]]\nnames = \"n[00001-", absl::StrFormat("%05d", nodes), "]\"\ntype = \"h200\"\n");
  constexpr int kLeafNodes = 32, kSpineLeaves = 16;
  const int leaves = (nodes + kLeafNodes - 1) / kLeafNodes;
  for (int l = 0; l < leaves; ++l) {
    const int first = l * kLeafNodes + 1, last = std::min(nodes, first + kLeafNodes - 1);
    absl::StrAppend(&toml, "[[switch]]\nname = \"leaf", l, "\"\nnodes = \"n[", absl::StrFormat("%05d", first), "-",
                    absl::StrFormat("%05d", last), "]\"\n");
  }
  for (int s = 0; s * kSpineLeaves < leaves; ++s) {
    const int last = std::min(leaves, (s + 1) * kSpineLeaves) - 1;
    absl::StrAppend(&toml, "[[switch]]\nname = \"spine", s, "\"\nswitches = \"leaf[", s * kSpineLeaves, "-", last,
                    "]\"\n");
  }
  return toml;
}

v1::JobSpec MakeJob(std::mt19937_64& rng, const Options& o, bool running, double fractional = 0) {
  std::uniform_real_distribution<double> u(0, 1);
  v1::JobSpec spec;
  spec.add_argv("/bin/true");
  spec.set_user(absl::StrCat("user", std::uniform_int_distribution<int>(0, o.users - 1)(rng)));
  const double r = u(rng);
  int64_t gpus;
  if (running) {
    gpus = r < 0.05 ? 1 : r < 0.15 ? 2 : r < 0.30 ? 4 : r < 0.90 ? 8 : 16;
  } else {
    gpus = r < 0.35 ? 1 : r < 0.50 ? 2 : r < 0.60 ? 4 : r < 0.85 ? 8 : r < 0.95 ? 16 : r < 0.99 ? 32 : 64;
  }
  spec.mutable_resources()->set_gpus(gpus);
  // Drawn for every job, so that both lanes draw the same sequence.
  const bool shares = u(rng) < fractional;
  const int share = kShareMilli[std::uniform_int_distribution<int>(0, 5)(rng)];
  if (shares) {
    spec.mutable_resources()->set_gpus(1);
    spec.mutable_resources()->set_gpu_share_milli(share);
  }
  if (!o.no_time_limits) spec.set_time_limit_s(3600 * std::uniform_int_distribution<int>(1, 72)(rng));
  spec.set_queue(!running && u(rng) < o.urgent ? "urgent" : "batch");
  return spec;
}

struct Lane {
  std::string name;
  std::unique_ptr<ManualClock> clock;
  std::unique_ptr<core::SchedulerCore> core;
  std::vector<uint64_t> running;
  double pass_ms[3] = {0, 0, 0}, pass_cpu_ms[3] = {0, 0, 0};
  int started[3] = {0, 0, 0}, preempted[3] = {0, 0, 0};
  double submit_ms = 0;
  double running_gpus = 0;  // what the running jobs ask for, a share as its fraction
};

double GpusAskedBy(const v1::JobSpec& spec) {
  const v1::Resources& r = spec.resources();
  return r.gpu_share_milli() > 0 ? r.gpus() * r.gpu_share_milli() / 1000.0 : static_cast<double>(r.gpus());
}

void StartAll(core::SchedulerCore& core, const core::Effects& fx, std::vector<uint64_t>* ids) {
  core::Effects ignored;
  for (const v1::JobEvent& e : fx.events) {
    if (e.state() != v1::JOB_STATE_STARTING) continue;
    if (ids != nullptr) ids->push_back(e.job_id());
    const v1::Job* job = core.FindActive(e.job_id());
    for (const auto& part : job->allocation().nodes()) {
      v1::JobUpdate update;
      update.set_job_id(e.job_id());
      update.set_kind(v1::JobUpdate::KIND_STARTED);
      core.JobUpdate(part.node(), update, ignored);
    }
  }
}

void TimedPass(Lane& lane, int pass) {
  lane.clock->Advance(absl::Seconds(1));
  core::Effects fx;
  const double cpu0 = ThreadCpuSeconds();
  const SteadyClock::time_point t0 = SteadyClock::now();
  lane.core->Schedule(fx);
  lane.pass_ms[pass] = std::chrono::duration<double, std::milli>(SteadyClock::now() - t0).count();
  lane.pass_cpu_ms[pass] = 1e3 * (ThreadCpuSeconds() - cpu0);
  for (const v1::JobEvent& e : fx.events) lane.started[pass] += e.state() == v1::JOB_STATE_STARTING;
  for (const auto& [id, job] : fx.jobs) lane.preempted[pass] += job.stopping_as() == v1::JOB_STATE_PREEMPTED;
  StartAll(*lane.core, fx, nullptr);
}

// running_gpus > 0: draw running jobs until they ask for that many GPUs,
// instead of o.running jobs.
std::unique_ptr<Lane> MakeLane(const std::string& name, const Options& o, const sim::SimCluster& cluster, bool weighted,
                               double fractional = 0, core::SharePacking packing = core::SharePacking::kBestFit,
                               double running_gpus = 0) {
  auto lane = std::make_unique<Lane>();
  lane->name = name;
  lane->clock = std::make_unique<ManualClock>(absl::FromUnixSeconds(1'750'000'000));
  core::CoreOptions options;
  options.queue_depth = static_cast<size_t>(o.pending + o.running);
  options.queues.queues = {core::QueueSpec::Named("batch"), core::QueueSpec::Named("urgent", 1)};
  options.share_packing = packing;
  if (!weighted) {
    options.queues.weights = core::PriorityWeights::None();
  }
  lane->core = std::make_unique<core::SchedulerCore>(*lane->clock, options);
  for (const v1::NodeInfo& info : cluster.nodes) {
    v1::RegisterNode reg;
    *reg.mutable_node() = info;
    if (fractional > 0) {
      for (v1::GpuInfo& gpu : *reg.mutable_node()->mutable_gpus()) gpu.set_share_mode(v1::GPU_SHARE_MODE_TIMESLICE);
    }
    core::Effects fx;
    v1::RegisterAck ack;
    lane->core->AgentRegistered(reg, fx, ack);
  }
  if (o.no_time_limits) {
    // Three ended runs of 1-72 h for every user and size.
    std::mt19937_64 history(o.seed + 2);
    for (int u = 0; u < o.users; ++u) {
      for (int64_t gpus : {1, 2, 4, 8, 16, 32, 64}) {
        v1::JobSpec spec;
        spec.set_user(absl::StrCat("user", u));
        spec.mutable_resources()->set_gpus(gpus);
        for (int run = 0; run < 3; ++run) {
          lane->core->LearnRunTime(spec, absl::Hours(std::uniform_int_distribution<int>(1, 72)(history)));
        }
      }
    }
  }
  // The running jobs: submitted, placed by one pass, reported started.
  std::mt19937_64 rng(o.seed);
  for (int i = 0; running_gpus > 0 ? lane->running_gpus < running_gpus : i < o.running; ++i) {
    core::Effects fx;
    const v1::JobSpec spec = MakeJob(rng, o, true, fractional);
    lane->running_gpus += GpusAskedBy(spec);
    if (!lane->core->Submit(spec, "", fx).ok()) std::abort();
  }
  core::Effects fx;
  lane->core->Schedule(fx);
  StartAll(*lane->core, fx, &lane->running);
  lane->clock->Advance(absl::Minutes(30));
  std::mt19937_64 pending_rng(o.seed + 1);
  const SteadyClock::time_point t0 = SteadyClock::now();
  for (int i = 0; i < o.pending; ++i) {
    core::Effects submit_fx;
    if (!lane->core->Submit(MakeJob(pending_rng, o, false, fractional), "", submit_fx).ok()) std::abort();
    lane->clock->Advance(absl::Milliseconds(100));
  }
  lane->submit_ms = std::chrono::duration<double, std::milli>(SteadyClock::now() - t0).count();
  return lane;
}

void SubmitArrivals(Lane& lane, const Options& o) {
  std::mt19937_64 rng(o.seed + 3);
  for (int i = 0; i < o.arrivals; ++i) {
    v1::JobSpec spec = MakeJob(rng, o, false);
    spec.set_queue("urgent");
    spec.mutable_resources()->set_gpus(int64_t{8} << std::uniform_int_distribution<int>(0, 3)(rng));
    core::Effects fx;
    if (!lane.core->Submit(spec, "", fx).ok()) std::abort();
  }
}

void EndTenPercent(Lane& lane, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> ids = lane.running;
  std::shuffle(ids.begin(), ids.end(), rng);
  ids.resize(ids.size() / 10);
  for (uint64_t id : ids) {
    const v1::Job* job = lane.core->FindActive(id);
    if (job == nullptr || job->stopping_as() != v1::JOB_STATE_UNSPECIFIED) continue;
    const v1::Allocation allocation = job->allocation();
    core::Effects fx;
    for (const auto& part : allocation.nodes()) {
      v1::JobUpdate update;
      update.set_job_id(id);
      update.set_kind(v1::JobUpdate::KIND_EXITED);
      lane.core->JobUpdate(part.node(), update, fx);
    }
  }
}

}  // namespace
}  // namespace gpusched::bench

int main(int argc, char** argv) {
  using namespace gpusched::bench;
  Options o;
  CLI::App app{"One scheduling pass with queues, multifactor priority, backfill and preemption"};
  app.add_option("--nodes", o.nodes, "nodes of 8 GPUs")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--running", o.running, "running jobs before the timed passes")->capture_default_str();
  app.add_option("--pending", o.pending, "pending jobs in the timed passes")->capture_default_str();
  app.add_option("--users", o.users, "users the jobs belong to")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--urgent", o.urgent, "share of pending jobs in the tier-1 queue")->capture_default_str();
  app.add_option("--arrivals", o.arrivals, "tier-1 jobs submitted before pass 3")->capture_default_str();
  app.add_option("--seed", o.seed, "random seed")->capture_default_str();
  app.add_flag("--no-time-limits", o.no_time_limits,
               "jobs without time limits: plans from run times learned from a history of ended jobs");
  app.add_option("--fractional", o.fractional,
                 "add a lane where this share of the jobs asks for part of one time-sliced GPU")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_flag("--fgd", o.fgd, "with --fractional: a lane more whose shares are packed by FGD");
  CLI11_PARSE(app, argc, argv);

  auto spec = gpusched::sim::ParseClusterSpec(ClusterToml(o.nodes));
  if (!spec.ok()) {
    std::cerr << spec.status() << "\n";
    return 1;
  }
  auto cluster = gpusched::sim::BuildCluster(*spec, std::string(GPUSCHED_FIXTURES_DIR) + "/topo");
  if (!cluster.ok()) {
    std::cerr << cluster.status() << "\n";
    return 1;
  }
  std::cout << "queue_pass_bench: " << cluster->summary << "; " << o.running << " running, " << o.pending
            << " pending jobs of " << o.users << " users, " << o.urgent * 100 << "% in tier 1; build "
            << GPUSCHED_BUILD_TYPE << std::endl;
  std::vector<std::unique_ptr<Lane>> lanes;
  lanes.push_back(MakeLane("multifactor", o, *cluster, true));
  lanes.push_back(MakeLane("weights 0", o, *cluster, false));
  if (o.fractional > 0) {
    const double running_gpus = lanes[0]->running_gpus;
    lanes.push_back(MakeLane(absl::StrCat("multifactor, ", o.fractional * 100, "% shares"), o, *cluster, true,
                             o.fractional, gpusched::core::SharePacking::kBestFit, running_gpus));
    if (o.fgd) {
      lanes.push_back(MakeLane(absl::StrCat("multifactor, ", o.fractional * 100, "% shares, fgd"), o, *cluster, true,
                               o.fractional, gpusched::core::SharePacking::kFgd, running_gpus));
    }
  }
  for (auto& lane : lanes) TimedPass(*lane, 0);
  for (auto& lane : lanes) {
    EndTenPercent(*lane, o.seed + 2);
    TimedPass(*lane, 1);
  }
  for (auto& lane : lanes) {
    SubmitArrivals(*lane, o);
    TimedPass(*lane, 2);
  }

  Table table(
      absl::StrFormat("SchedulerCore::Schedule() with %d pending on %d nodes (queue_depth: all)", o.pending, o.nodes),
      {"ranking", "running", "GPUs asked", "pass 1 ms", "CPU ms", "started", "preempted", "pass 2 ms", "CPU ms",
       "started", "pass 3 ms", "CPU ms", "preempted", "submit us/job"});
  for (const auto& lane : lanes) {
    table.Add({lane->name, std::to_string(lane->running.size()), Fixed(lane->running_gpus, 0),
               Fixed(lane->pass_ms[0], 1), Fixed(lane->pass_cpu_ms[0], 1), std::to_string(lane->started[0]),
               std::to_string(lane->preempted[0]), Fixed(lane->pass_ms[1], 1), Fixed(lane->pass_cpu_ms[1], 1),
               std::to_string(lane->started[1]), Fixed(lane->pass_ms[2], 1), Fixed(lane->pass_cpu_ms[2], 1),
               std::to_string(lane->preempted[2]), Fixed(1e3 * lane->submit_ms / o.pending, 1)});
  }
  std::cout << "\n" << table.Render();
  std::cout << "ratio multifactor / weights 0, pass 1 CPU: "
            << Fixed(lanes[0]->pass_cpu_ms[0] / lanes[1]->pass_cpu_ms[0], 2) << "x\n";
  if (o.fractional > 0) {
    std::cout << "ratio with shares / whole GPUs (multifactor), CPU: pass 1 "
              << Fixed(lanes[2]->pass_cpu_ms[0] / lanes[0]->pass_cpu_ms[0], 2) << "x, pass 2 "
              << Fixed(lanes[2]->pass_cpu_ms[1] / lanes[0]->pass_cpu_ms[1], 2) << "x, pass 3 "
              << Fixed(lanes[2]->pass_cpu_ms[2] / lanes[0]->pass_cpu_ms[2], 2) << "x\n";
    if (o.fgd) {
      std::cout << "ratio fgd / best-fit shares, CPU: pass 1 "
                << Fixed(lanes[3]->pass_cpu_ms[0] / lanes[2]->pass_cpu_ms[0], 2) << "x, pass 2 "
                << Fixed(lanes[3]->pass_cpu_ms[1] / lanes[2]->pass_cpu_ms[1], 2) << "x, pass 3 "
                << Fixed(lanes[3]->pass_cpu_ms[2] / lanes[2]->pass_cpu_ms[2], 2) << "x\n";
    }
  }
  return 0;
}
