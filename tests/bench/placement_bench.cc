// placement_bench: the placement policies side by side on a large cluster.
// A benchmark, not a test (nothing here is registered with add_test).
//
// The cluster: --nodes nodes of 8 GPUs built from the real `nvidia-smi topo -m`
// fixtures (HGX H200 / NVSwitch, DGX A100, DGX-1 V100 / hybrid cube mesh,
// 8x RTX 4090 / PCIe), one hardware kind per leaf switch, under a 3-level
// network: leaf switches of --leaf-nodes nodes, spines of --spine-leaves
// leaves, and a fraction of the H200 leaves cut into multi-node NVLink
// domains. Every node carries its leaf/spine/domain in
// NodeTopology::network(), as an agent with labels reports it.
//
// The jobs: gangs of 1..64 GPUs, powers of two weighted like real traces
// (mostly 1/2/4/8, some 16/32/64), multi-node ones mostly as N nodes x 8 GPUs;
// a few ask for a GPU model, most size CPUs and memory per GPU.
//
// Part 1, placements per second. Every policy has its own ClusterState and
// they run in lock step (each request goes to all of them, in rotating
// order), so load on the shared machine falls on all of them alike. Each
// lane fills its cluster to --util busy with its own placements, churns
// --warmup requests, then times --placements Place() calls: before each,
// random earlier gangs are released until the request fits under --util of
// all GPUs, so the cluster stays at that utilization. Only Place() is in the
// figures (Allocate is reported on its own). A gang that does not fit is
// dropped and counted.
//
// With --fractional F, part 1 has one lane more: the first policy on the same
// nodes with their GPUs time-sliced, where a share F of the requests (drawn
// once, the same in every run) asks for 25-81% of one GPU instead, and
// utilization counts a share as its fraction; its fill draws requests until
// they reach --util too. What Place() costs when half the work shares GPUs.
//
// Part 2, scheduling passes: a SchedulerCore per policy (ManualClock,
// queue_depth = --jobs) with every node registered through AgentRegistered
// and --jobs pending jobs of the same mix (put in the queue with Restore, as
// a restarted daemon gets them from its store; Submit() is timed apart on a
// sample, since it checks every job against every node). Schedule() is timed
// for the first pass (places in queue order until a job does not fit) and a
// second pass over what is left; with --pass3 a third after 10% of the
// running jobs completed. Jobs carry time limits (2-72 h) unless
// --no-time-limits, so a core with EASY backfill plans reservations and tries
// the jobs behind the first blocked one.
//
//   placement_bench [--nodes 5000] [--jobs 10000] [--placements 1000] ...
//   (--help lists them; tests/bench/run.sh builds and runs it with
//   BENCH=placement_bench)
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/clock.h"
#include "common/convert/topology_proto.h"
#include "common/topology/nvidia_smi_topo.h"
#include "daemon/core/cluster_state.h"
#include "daemon/core/effects.h"
#include "daemon/core/gang_request.h"
#include "daemon/core/job_validator.h"
#include "daemon/core/policy/placement_policy.h"
#include "daemon/core/scheduler_core.h"
#include "gpusched/v1/agent.pb.h"
#include "gpusched/v1/types.pb.h"
#include "tests/bench/report.h"

namespace gpusched::bench {
namespace {

using core::ClusterState;
using core::GangRequest;
using core::PlacementPolicy;
using core::PlacementResult;
using SteadyClock = std::chrono::steady_clock;

// ---------------------------------------------------------------- options

struct Options {
  int nodes = 5000;
  int jobs = 10000;
  int placements = 1000;  // timed Place() calls per policy
  int warmup = 200;       // churn requests after the fill, untimed
  double util = 0.8;      // busy fraction of all GPUs kept in part 1
  std::vector<std::string> policies = {"topology", "best-fit", "first-fit", "spread"};
  uint64_t seed = 1;
  int leaf_nodes = 32;
  int spine_leaves = 8;
  double nvlink_frac = 0.1;  // of all nodes, in multi-node NVLink domains (H200 leaves)
  int nvlink_domain_nodes = 16;
  double model_frac = 0.15;  // jobs that ask for a GPU model
  bool time_limits = true;   // jobs carry time limits (what lets backfill plan)
  int submit_sample = 200;   // Submit() calls timed on their own
  bool skip_place = false;
  bool skip_pass = false;
  bool pass3 = false;
  double fractional = 0;  // part 1: a lane where this share of the requests asks for part of one GPU
  std::string out_dir;
};

// ---------------------------------------------------------------- machine

std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return absl::StrCat(a, " ", b, " ", c);
}

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// This thread's CPU time: unlike wall time it leaves out the time the bench
// waited for a core on the shared machine.
double Since(SteadyClock::time_point t0) { return std::chrono::duration<double>(SteadyClock::now() - t0).count(); }

// Wall and this process's CPU over a phase: CPU/wall well under 1 means the
// bench waited for a core (the machine is shared).
class Phase {
 public:
  Phase() : t0_(SteadyClock::now()), cpu0_(CpuSeconds()) {}
  std::string Describe() const {
    const double wall = Since(t0_);
    return absl::StrFormat("%.1f s wall, CPU/wall %.2f, load average now %s", wall, (CpuSeconds() - cpu0_) / wall,
                           LoadAverage());
  }

 private:
  SteadyClock::time_point t0_;
  double cpu0_;
};

// ---------------------------------------------------------------- cluster

struct Kind {
  const char* file;
  const char* short_name;
  const char* model;
  int64_t gpu_memory_mb;
  int64_t cpus;
  int64_t memory_mb;
  double weight;  // share of leaves
};

// The machines the fixtures come from, with their vendors' CPU and memory.
const Kind kKinds[] = {
    {"hgx-h200-8gpu-12nic.txt", "h200", "NVIDIA H200", 143771, 224, 2063937, 0.40},
    {"dgx-a100.txt", "a100", "NVIDIA A100-SXM4-40GB", 40960, 256, 1031560, 0.30},
    {"dgx1-v100.txt", "v100", "Tesla V100-SXM2-32GB", 32768, 80, 515000, 0.15},
    {"pcie-8x-rtx4090.txt", "4090", "NVIDIA GeForce RTX 4090", 24564, 224, 1031560, 0.15},
};
constexpr int kH200 = 0;

topology::NodeTopology LoadFixture(const Kind& kind) {
  const std::string path = std::string(GPUSCHED_FIXTURES_DIR) + "/topo/" + kind.file;
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  auto topo = topology::ParseNvidiaSmiTopo(text.str());
  if (!topo.ok()) {
    std::cerr << path << ": " << topo.status() << "\n";
    std::exit(1);
  }
  for (auto& gpu : topo->gpus()) {
    gpu.model = kind.model;
    gpu.memory_mb = kind.gpu_memory_mb;
  }
  // As the agent's topology-file source does.
  topo->set_nvswitch(topo->LooksLikeNvSwitch());
  return *std::move(topo);
}

struct ClusterSpec {
  std::vector<v1::NodeInfo> nodes;  // in name order
  std::map<std::string, int> nodes_per_kind;
  int leaves = 0, spines = 0, nvlink_domains = 0, nvlink_nodes = 0;
  int64_t total_gpus = 0;
};

ClusterSpec BuildCluster(const Options& o) {
  ClusterSpec spec;
  std::vector<topology::NodeTopology> fixtures;
  for (const Kind& kind : kKinds) fixtures.push_back(LoadFixture(kind));
  std::mt19937_64 rng(o.seed);
  std::vector<double> weights;
  for (const Kind& kind : kKinds) weights.push_back(kind.weight);
  std::discrete_distribution<int> pick_kind(weights.begin(), weights.end());

  spec.leaves = (o.nodes + o.leaf_nodes - 1) / o.leaf_nodes;
  spec.spines = (spec.leaves + o.spine_leaves - 1) / o.spine_leaves;
  std::vector<int> leaf_kind(spec.leaves);
  for (int& k : leaf_kind) k = pick_kind(rng);
  // Multi-node NVLink domains: whole H200 leaves, first ones first, until
  // about nvlink_frac of all nodes are in one.
  std::vector<bool> leaf_nvlink(spec.leaves, false);
  int want = static_cast<int>(o.nvlink_frac * o.nodes);
  for (int leaf = 0; leaf < spec.leaves && want > 0; ++leaf) {
    if (leaf_kind[leaf] != kH200) continue;
    leaf_nvlink[leaf] = true;
    want -= o.leaf_nodes;
  }

  for (int n = 0; n < o.nodes; ++n) {
    const int leaf = n / o.leaf_nodes;
    const int spine = leaf / o.spine_leaves;
    const Kind& kind = kKinds[leaf_kind[leaf]];
    topology::NodeTopology topo = fixtures[leaf_kind[leaf]];
    const std::string name = absl::StrFormat("node%05d", n);
    for (auto& gpu : topo.gpus()) gpu.uuid = absl::StrCat("GPU-", name, "-", gpu.index);
    topology::NetworkLocation& net = topo.network();
    net.rack = absl::StrFormat("rack%04d", leaf);
    net.leaf = absl::StrFormat("leaf%04d", leaf);
    net.spine = absl::StrFormat("spine%03d", spine);
    if (leaf_nvlink[leaf]) {
      const int domain = n / o.nvlink_domain_nodes;  // domains never straddle leaves when leaf_nodes % size == 0
      net.nvlink_domain = absl::StrFormat("nvl%04d", domain);
      ++spec.nvlink_nodes;
    }
    v1::NodeInfo info;
    convert::TopologyToProto(topo, &info);
    info.mutable_topology()->set_source(absl::StrCat("file:", kind.file));
    info.set_name(name);
    info.set_address(absl::StrFormat("10.%d.%d.%d", spine, leaf % 256, n % o.leaf_nodes + 1));
    info.set_cpus(kind.cpus);
    info.set_memory_mb(kind.memory_mb);
    (*info.mutable_labels())["gpusched.io/leaf"] = net.leaf;
    (*info.mutable_labels())["gpusched.io/spine"] = net.spine;
    if (!net.nvlink_domain.empty()) (*info.mutable_labels())["gpusched.io/nvlink-domain"] = net.nvlink_domain;
    info.set_agent_version("bench");
    spec.total_gpus += info.gpus_size();
    ++spec.nodes_per_kind[kind.short_name];
    spec.nodes.push_back(std::move(info));
  }
  std::set<std::string> domains;
  for (const auto& info : spec.nodes) {
    if (!info.topology().network().nvlink_domain().empty()) domains.insert(info.topology().network().nvlink_domain());
  }
  spec.nvlink_domains = static_cast<int>(domains.size());
  return spec;
}

// ---------------------------------------------------------------- jobs

constexpr int kSizes[] = {1, 2, 4, 8, 16, 32, 64};
constexpr double kSizeWeights[] = {40, 15, 15, 18, 6, 4, 2};
constexpr int kSizeClasses = 7;

int SizeClass(int64_t gpus) {
  for (int c = 0; c < kSizeClasses; ++c) {
    if (gpus <= kSizes[c]) return c;
  }
  return kSizeClasses - 1;
}

std::vector<v1::JobSpec> MakeJobs(const Options& o, uint64_t seed, size_t count) {
  std::mt19937_64 rng(seed);
  std::discrete_distribution<int> size(std::begin(kSizeWeights), std::end(kSizeWeights));
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<v1::JobSpec> jobs;
  jobs.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    v1::JobSpec spec;
    spec.set_name(absl::StrCat("bench-", i));
    spec.add_argv("/usr/bin/python3");
    spec.add_argv("train.py");
    v1::Resources* r = spec.mutable_resources();
    const int gpus = kSizes[size(rng)];
    if (gpus > 8 && u(rng) < 0.7) {
      r->set_nodes(gpus / 8);  // torchrun --nnodes N --nproc-per-node 8
      r->set_gpus_per_node(8);
    } else {
      r->set_gpus(gpus);
    }
    const double c = u(rng);
    r->set_cpus_per_gpu(c < 0.3 ? 0 : c < 0.6 ? 4 : c < 0.9 ? 8 : 10);
    const double m = u(rng);
    r->set_mem_per_gpu_mb(m < 0.4 ? 0 : m < 0.8 ? 32768 : 61440);
    const double g = u(rng);
    if (g < o.model_frac * 2 / 3) {
      r->set_gpu_model("H200");
    } else if (g < o.model_frac) {
      r->set_gpu_model("A100");
    }
    const double t = u(rng);  // drawn either way: the same jobs with and without limits
    if (o.time_limits) spec.set_time_limit_s(3600 * (t < 0.2 ? 2 : t < 0.5 ? 8 : t < 0.8 ? 24 : 72));
    if (absl::Status s = core::ValidateAndNormalize(spec); !s.ok()) {
      std::cerr << "bad bench job: " << s << "\n";
      std::exit(1);
    }
    jobs.push_back(std::move(spec));
  }
  return jobs;
}

std::string MixDescription() {
  std::vector<std::string> parts;
  for (int c = 0; c < kSizeClasses; ++c) parts.push_back(absl::StrCat(kSizes[c], ":", kSizeWeights[c], "%"));
  return absl::StrJoin(parts, " ");
}

// ---------------------------------------------------------------- part 1

struct Lane {
  std::string name;
  std::unique_ptr<PlacementPolicy> policy;
  ClusterState cluster;
  std::mt19937_64 rng;
  std::vector<std::pair<uint64_t, v1::Allocation>> live;
  int64_t busy = 0;  // in thousandths of a GPU: a share counts as its fraction
  const std::vector<GangRequest>* fill = nullptr;
  const std::vector<GangRequest>* churn = nullptr;
  uint64_t next_id = 1;

  // Fill (cluster from empty to --util).
  double fill_place_s = 0;
  int fill_calls = 0, fill_placed = 0;
  // Timed window.
  std::vector<double> place_us, alloc_us;
  std::vector<std::vector<double>> place_us_by_size = std::vector<std::vector<double>>(kSizeClasses);
  std::vector<int> calls_by_size = std::vector<int>(kSizeClasses), placed_by_size = std::vector<int>(kSizeClasses);
  int calls = 0, placed = 0;
  double place_s = 0, place_cpu_s = 0;
  double util_sum = 0;
  double bw_sum = 0;
  int bw_n = 0;
  int multi = 0, multi_within_leaf = 0;
};

enum class Stage { kFill, kWarmup, kMeasure };

constexpr int kShareMilli[] = {250, 320, 470, 500, 650, 810};

int64_t MilliOf(const GangRequest& req) {
  return req.total_gpus * (req.gpu_share_milli > 0 ? req.gpu_share_milli : 1000);
}

int64_t MilliOf(const v1::Allocation& allocation) {
  int64_t milli = 0;
  for (const auto& part : allocation.nodes()) {
    milli += part.gpu_indices_size() * (part.gpu_share_milli() > 0 ? part.gpu_share_milli() : 1000);
  }
  return milli;
}

// The requests of `jobs`, a share `fractional` of them (drawn with `seed`)
// turned into a share of one GPU, until they ask for `cap_milli` (all of them
// when 0).
std::vector<GangRequest> Requests(const std::vector<v1::JobSpec>& jobs, double fractional, uint64_t seed,
                                  int64_t cap_milli) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<GangRequest> out;
  int64_t sum = 0;
  for (v1::JobSpec job : jobs) {
    if (cap_milli > 0 && sum >= cap_milli) break;
    const bool share = u(rng) < fractional;
    const int milli = kShareMilli[std::uniform_int_distribution<int>(0, 5)(rng)];
    if (share) {
      v1::Resources* r = job.mutable_resources();
      r->clear_nodes();
      r->clear_gpus_per_node();
      r->set_gpus(1);
      r->set_gpu_share_milli(milli);
    }
    out.push_back(core::ToGangRequest(job));
    sum += MilliOf(out.back());
  }
  return out;
}

void Step(Lane& lane, const GangRequest& req, int64_t cap, Stage stage) {
  while (lane.busy + MilliOf(req) > cap && !lane.live.empty()) {
    std::uniform_int_distribution<size_t> pick(0, lane.live.size() - 1);
    const size_t i = pick(lane.rng);
    lane.cluster.Release(lane.live[i].first, lane.live[i].second);
    lane.busy -= MilliOf(lane.live[i].second);
    std::swap(lane.live[i], lane.live.back());
    lane.live.pop_back();
  }
  const double cpu0 = ThreadCpuSeconds();
  const SteadyClock::time_point t0 = SteadyClock::now();
  PlacementResult result = lane.policy->Place(lane.cluster, req);
  const SteadyClock::time_point t1 = SteadyClock::now();
  const double place_cpu_s = ThreadCpuSeconds() - cpu0;
  const double place_us = std::chrono::duration<double, std::micro>(t1 - t0).count();
  double alloc_us = 0;
  if (result.placed()) {
    const uint64_t id = lane.next_id++;
    const SteadyClock::time_point a0 = SteadyClock::now();
    absl::Status s = lane.cluster.Allocate(id, result.allocation());
    alloc_us = std::chrono::duration<double, std::micro>(SteadyClock::now() - a0).count();
    if (!s.ok()) {
      std::cerr << lane.name << ": Allocate refused a placement: " << s << "\n";
      std::exit(1);
    }
    lane.busy += MilliOf(req);
    lane.live.emplace_back(id, result.allocation());
  }
  if (stage == Stage::kFill) {
    lane.fill_place_s += place_us / 1e6;
    ++lane.fill_calls;
    lane.fill_placed += result.placed();
    return;
  }
  if (stage != Stage::kMeasure) return;
  const int c = SizeClass(req.total_gpus);
  lane.place_us.push_back(place_us);
  lane.place_us_by_size[c].push_back(place_us);
  lane.place_s += place_us / 1e6;
  lane.place_cpu_s += place_cpu_s;
  ++lane.calls;
  ++lane.calls_by_size[c];
  lane.util_sum += static_cast<double>(lane.busy) / static_cast<double>(cap);
  if (!result.placed()) return;
  ++lane.placed;
  ++lane.placed_by_size[c];
  lane.alloc_us.push_back(alloc_us);
  if (req.total_gpus >= 2) {
    lane.bw_sum += result.allocation().est_bus_bandwidth_gbps();
    ++lane.bw_n;
  }
  if (result.allocation().nodes_size() > 1) {
    ++lane.multi;
    const std::string& span = result.allocation().span();
    lane.multi_within_leaf += span.rfind("leaf", 0) == 0 || span.rfind("nvlink-domain", 0) == 0;
  }
}

std::vector<Table> RunPlacements(const Options& o, const ClusterSpec& spec) {
  std::vector<std::unique_ptr<Lane>> lanes;
  std::vector<std::string> names = o.policies;
  if (o.fractional > 0) names.push_back(o.policies.front());
  for (size_t l = 0; l < names.size(); ++l) {
    const std::string& name = names[l];
    const bool shares = l == o.policies.size();
    auto policy = core::MakePlacementPolicy(name);
    if (!policy.ok()) {
      std::cerr << policy.status() << "\n";
      std::exit(2);
    }
    auto lane = std::make_unique<Lane>();
    lane->name = shares ? absl::StrCat(name, ", ", 100 * o.fractional, "% shares") : name;
    lane->policy = *std::move(policy);
    lane->rng.seed(o.seed + 7);  // the same release draws for every lane
    for (v1::NodeInfo info : spec.nodes) {
      if (shares) {
        for (v1::GpuInfo& gpu : *info.mutable_gpus()) gpu.set_share_mode(v1::GPU_SHARE_MODE_TIMESLICE);
      }
      lane->cluster.UpsertNode(info);
      lane->cluster.SetState(info.name(), v1::NODE_STATE_UP, "");
    }
    lanes.push_back(std::move(lane));
  }
  const int64_t cap = static_cast<int64_t>(o.util * static_cast<double>(spec.total_gpus)) * 1000;

  // The fill: requests until their GPUs add up to the target.
  const std::vector<v1::JobSpec> fill_jobs = MakeJobs(o, o.seed + 1, static_cast<size_t>(2 * spec.total_gpus));
  const std::vector<GangRequest> fill = Requests(fill_jobs, 0, o.seed + 8, cap);
  const std::vector<GangRequest> fill_shared = Requests(fill_jobs, o.fractional, o.seed + 8, cap);
  const std::vector<v1::JobSpec> churn_jobs = MakeJobs(o, o.seed + 2, static_cast<size_t>(o.warmup + o.placements));
  const std::vector<GangRequest> churn = Requests(churn_jobs, 0, o.seed + 9, 0);
  const std::vector<GangRequest> churn_shared = Requests(churn_jobs, o.fractional, o.seed + 9, 0);
  for (size_t l = 0; l < lanes.size(); ++l) {
    const bool shares = l == o.policies.size();
    lanes[l]->fill = shares ? &fill_shared : &fill;
    lanes[l]->churn = shares ? &churn_shared : &churn;
  }

  Phase phase;
  size_t rotate = 0;
  auto step_all = [&](size_t i, Stage stage) {
    for (size_t k = 0; k < lanes.size(); ++k) {
      Lane& lane = *lanes[(rotate + k) % lanes.size()];
      const std::vector<GangRequest>& requests = stage == Stage::kFill ? *lane.fill : *lane.churn;
      if (i < requests.size()) Step(lane, requests[i], cap, stage);
    }
    ++rotate;
  };
  for (size_t i = 0; i < std::max(fill.size(), fill_shared.size()); ++i) step_all(i, Stage::kFill);
  std::cout << "  fill: " << fill.size() << " requests per policy";
  if (o.fractional > 0) std::cout << ", " << fill_shared.size() << " with shares";
  std::cout << " (" << phase.Describe() << ")" << std::endl;
  Phase churn_phase;
  for (int i = 0; i < o.warmup; ++i) step_all(static_cast<size_t>(i), Stage::kWarmup);
  for (int i = 0; i < o.placements; ++i) step_all(static_cast<size_t>(o.warmup + i), Stage::kMeasure);
  std::cout << "  churn: " << o.warmup << " warm-up + " << o.placements << " timed requests per policy ("
            << churn_phase.Describe() << ")\n"
            << std::endl;

  const double base_rate = lanes.front()->calls / lanes.front()->place_s;
  const double base_cpu_rate = lanes.front()->calls / lanes.front()->place_cpu_s;
  Table main(absl::StrFormat("Part 1: Place() on %d nodes x 8 GPUs, steady state at %.0f%% of GPUs busy "
                             "(%d timed requests per policy, lock step)",
                             o.nodes, 100 * o.util, o.placements),
             {"policy", "Place calls/s", "vs " + lanes.front()->name, "calls/CPU-s", "vs " + lanes.front()->name,
              "p50 us", "p99 us", "max us", "placed %", "busy % (mean)", "Allocate p50 us", "est GB/s (>=2 GPUs)",
              "multi-node in 1 leaf/NVL %", "fill calls/s"});
  for (const auto& lane : lanes) {
    const Percentiles p = Summarize(lane->place_us);
    const Percentiles a = Summarize(lane->alloc_us);
    const double rate = lane->calls / lane->place_s;
    const double cpu_rate = lane->calls / lane->place_cpu_s;
    main.Add({lane->name, Fixed(rate, 0), Fixed(rate / base_rate, 2) + "x", Fixed(cpu_rate, 0),
              Fixed(cpu_rate / base_cpu_rate, 2) + "x", Fixed(p.p50, 1), Fixed(p.p99, 1), Fixed(p.max, 0),
              Fixed(100.0 * lane->placed / std::max(1, lane->calls), 1),
              Fixed(100.0 * o.util * lane->util_sum / std::max(1, lane->calls), 1), Fixed(a.p50, 1),
              lane->bw_n ? Fixed(lane->bw_sum / lane->bw_n, 1) : "-",
              lane->multi ? Fixed(100.0 * lane->multi_within_leaf / lane->multi, 0) : "-",
              Fixed(lane->fill_calls / lane->fill_place_s, 0)});
  }
  std::vector<std::string> columns = {"policy"};
  for (int c = 0; c < kSizeClasses; ++c) columns.push_back(absl::StrCat(kSizes[c], " GPU"));
  Table by_size("Part 1 by gang size: p50 Place() us (placed %) [calls]", columns);
  for (const auto& lane : lanes) {
    std::vector<std::string> row = {lane->name};
    for (int c = 0; c < kSizeClasses; ++c) {
      if (lane->calls_by_size[c] == 0) {
        row.push_back("-");
        continue;
      }
      row.push_back(absl::StrCat(Fixed(Summarize(lane->place_us_by_size[c]).p50, 0), " (",
                                 Fixed(100.0 * lane->placed_by_size[c] / lane->calls_by_size[c], 0), "%) [",
                                 lane->calls_by_size[c], "]"));
    }
    by_size.Add(row);
  }
  return {main, by_size};
}

// ---------------------------------------------------------------- part 2

struct CoreLane {
  std::string name;
  std::unique_ptr<ManualClock> clock;
  std::unique_ptr<core::SchedulerCore> core;
  double register_s = 0, restore_s = 0;
  double pass_ms[3] = {0, 0, 0};
  double pass_cpu_ms[3] = {0, 0, 0};
  int started[3] = {0, 0, 0};
  std::vector<uint64_t> running;
  int completed = 0;
  double complete_ms = 0;
};

int CountStarts(const core::Effects& fx, std::vector<uint64_t>* ids) {
  int n = 0;
  for (const v1::JobEvent& e : fx.events) {
    if (e.state() != v1::JOB_STATE_STARTING) continue;
    ++n;
    if (ids != nullptr) ids->push_back(e.job_id());
  }
  return n;
}

void TimeSchedule(CoreLane& lane, int pass, std::vector<uint64_t>* started) {
  lane.clock->Advance(absl::Seconds(1));
  core::Effects fx;
  const double cpu0 = ThreadCpuSeconds();
  const SteadyClock::time_point t0 = SteadyClock::now();
  lane.core->Schedule(fx);
  lane.pass_ms[pass] = std::chrono::duration<double, std::milli>(SteadyClock::now() - t0).count();
  lane.pass_cpu_ms[pass] = 1e3 * (ThreadCpuSeconds() - cpu0);
  lane.started[pass] = CountStarts(fx, started);
}

std::unique_ptr<core::SchedulerCore> MakeCore(const Options& o, const std::string& policy, const ManualClock& clock) {
  core::CoreOptions options;
  options.queue_depth = static_cast<size_t>(o.jobs);
  options.placement_policy = policy;
  return std::make_unique<core::SchedulerCore>(clock, options);
}

void RegisterAll(core::SchedulerCore& core, const ClusterSpec& spec) {
  for (const v1::NodeInfo& info : spec.nodes) {
    v1::RegisterNode reg;
    *reg.mutable_node() = info;
    core::Effects fx;
    v1::RegisterAck ack;
    core.AgentRegistered(reg, fx, ack);
  }
}

// Submit() on its own, on a core of its own: per job it validates and checks
// the job could ever fit the cluster.
double SubmitMicros(const Options& o, const ClusterSpec& spec) {
  ManualClock clock(absl::FromUnixSeconds(1'750'000'000));
  auto core = MakeCore(o, o.policies.front(), clock);
  RegisterAll(*core, spec);
  const std::vector<v1::JobSpec> jobs = MakeJobs(o, o.seed + 4, static_cast<size_t>(o.submit_sample));
  const SteadyClock::time_point t0 = SteadyClock::now();
  for (size_t i = 0; i < jobs.size(); ++i) {
    core::Effects fx;
    if (!core->Submit(jobs[i], absl::StrCat("sample-", i), fx).ok()) {
      std::cerr << "Submit refused a bench job\n";
      std::exit(1);
    }
  }
  return 1e6 * Since(t0) / static_cast<double>(jobs.size());
}

std::vector<Table> RunPasses(const Options& o, const ClusterSpec& spec) {
  // The queue: pending jobs as the store gives them back to a restarted
  // daemon (Restore), so that setting up 10,000 jobs does not take 10,000
  // Submit() calls; Submit() is timed on its own below.
  const absl::Time t_submit = absl::FromUnixSeconds(1'750'000'000);
  std::vector<v1::Job> queue;
  for (v1::JobSpec& spec_i : MakeJobs(o, o.seed + 3, static_cast<size_t>(o.jobs))) {
    v1::Job job;
    job.set_id(queue.size() + 1);
    *job.mutable_spec() = std::move(spec_i);
    const int64_t submit_ms = static_cast<int64_t>(queue.size()) * 10;  // one every 10 ms
    job.mutable_submit_time()->set_seconds(absl::ToUnixSeconds(t_submit) + submit_ms / 1000);
    job.mutable_submit_time()->set_nanos(static_cast<int32_t>(submit_ms % 1000) * 1'000'000);
    job.set_state(v1::JOB_STATE_PENDING);
    job.set_reason("queued: not yet considered by the scheduler");
    job.set_client_request_id(absl::StrCat("bench-", job.id()));
    queue.push_back(std::move(job));
  }

  std::vector<std::unique_ptr<CoreLane>> lanes;
  Phase setup;
  for (const std::string& name : o.policies) {
    auto lane = std::make_unique<CoreLane>();
    lane->name = name;
    lane->clock = std::make_unique<ManualClock>(t_submit + absl::Milliseconds(10 * o.jobs));
    lane->core = MakeCore(o, name, *lane->clock);
    SteadyClock::time_point t0 = SteadyClock::now();
    RegisterAll(*lane->core, spec);
    lane->register_s = Since(t0);
    t0 = SteadyClock::now();
    lane->core->Restore(queue, {}, queue.size(), {});
    lane->restore_s = Since(t0);
    lanes.push_back(std::move(lane));
  }
  std::cout << "  setup: " << lanes.size() << " cores, " << o.nodes << " nodes registered (AgentRegistered) and "
            << o.jobs << " pending jobs restored in each (" << setup.Describe() << ")" << std::endl;
  const double submit_us = o.submit_sample > 0 ? SubmitMicros(o, spec) : 0;

  Phase passes;
  const size_t n = lanes.size();
  // Each pass for every policy before the next pass, rotating who goes first.
  for (size_t k = 0; k < n; ++k) {
    CoreLane& lane = *lanes[k];
    TimeSchedule(lane, 0, &lane.running);
  }
  for (size_t k = 0; k < n; ++k) TimeSchedule(*lanes[(k + 1) % n], 1, nullptr);
  if (o.pass3) {
    // 10% of the running jobs complete (agents report every part started,
    // then exited), then pass 3.
    for (size_t k = 0; k < n; ++k) {
      CoreLane& lane = *lanes[(k + 2) % n];
      std::mt19937_64 rng(o.seed + 11);
      std::vector<uint64_t> ids = lane.running;
      std::shuffle(ids.begin(), ids.end(), rng);
      ids.resize(ids.size() / 10);
      lane.clock->Advance(absl::Minutes(10));
      const SteadyClock::time_point t0 = SteadyClock::now();
      for (uint64_t id : ids) {
        const v1::Job* job = lane.core->FindActive(id);
        if (job == nullptr) continue;
        const v1::Allocation allocation = job->allocation();
        core::Effects fx;
        for (auto kind : {v1::JobUpdate::KIND_STARTED, v1::JobUpdate::KIND_EXITED}) {
          for (const auto& part : allocation.nodes()) {
            v1::JobUpdate update;
            update.set_job_id(id);
            update.set_kind(kind);
            lane.core->JobUpdate(part.node(), update, fx);
          }
        }
        ++lane.completed;
      }
      lane.complete_ms = std::chrono::duration<double, std::milli>(SteadyClock::now() - t0).count();
      TimeSchedule(lane, 2, nullptr);
    }
  }
  std::cout << "  passes: " << (o.pass3 ? 3 : 2) << " per policy (" << passes.Describe() << ")" << std::endl;

  std::cout << "\n";

  // Ratios on CPU time: on a shared machine one pass can wait for a core
  // far longer than another.
  const CoreLane& base = *lanes.front();
  std::vector<std::string> columns = {"policy",    "pass 1 ms", "CPU ms",          "vs " + base.name, "started",
                                      "pass 2 ms", "CPU ms",    "vs " + base.name, "started"};
  if (o.pass3) {
    for (const char* c : {"10% end: ms", "pass 3 ms", "CPU ms", "started"}) columns.push_back(c);
  }
  columns.push_back("register ms");
  Table pass_table(absl::StrFormat("Part 2: SchedulerCore::Schedule() over %d pending jobs on %d nodes "
                                   "(queue_depth %d); ratios on CPU time",
                                   o.jobs, o.nodes, o.jobs),
                   columns);
  for (const auto& lane : lanes) {
    std::vector<std::string> row = {lane->name};
    for (int pass = 0; pass < 2; ++pass) {
      row.push_back(Fixed(lane->pass_ms[pass], 1));
      row.push_back(Fixed(lane->pass_cpu_ms[pass], 1));
      row.push_back(Fixed(lane->pass_cpu_ms[pass] / base.pass_cpu_ms[pass], 2) + "x");
      row.push_back(std::to_string(lane->started[pass]));
    }
    if (o.pass3) {
      row.push_back(Fixed(lane->complete_ms, 1));
      row.push_back(Fixed(lane->pass_ms[2], 1));
      row.push_back(Fixed(lane->pass_cpu_ms[2], 1));
      row.push_back(std::to_string(lane->started[2]));
    }
    row.push_back(Fixed(lane->register_s * 1e3, 0));
    pass_table.Add(row);
  }
  std::vector<Table> out = {pass_table};
  if (o.submit_sample > 0) {
    std::cout << "  Submit(): " << Fixed(submit_us, 0) << " us per job (" << o.submit_sample << " jobs on a core with "
              << o.nodes << " nodes; validation and the ever-fits check)\n\n";
  }
  return out;
}

}  // namespace
}  // namespace gpusched::bench

int main(int argc, char** argv) {
  using namespace gpusched::bench;
  Options o;
  CLI::App app{"placement_bench: placement policies side by side on a large cluster (a benchmark, not a test)"};
  app.add_option("--nodes", o.nodes, "nodes of 8 GPUs")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--jobs", o.jobs, "pending jobs for the scheduling pass (part 2)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--placements", o.placements, "timed Place() calls per policy (part 1)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--warmup", o.warmup, "untimed churn requests before the timed ones (part 1)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--util", o.util, "busy fraction of all GPUs kept in part 1")
      ->capture_default_str()
      ->check(CLI::Range(0.05, 0.99));
  app.add_option("--policies", o.policies, "policies, first one is the base of the ratios")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--seed", o.seed, "random seed (cluster, jobs, releases)")->capture_default_str();
  app.add_option("--leaf-nodes", o.leaf_nodes, "nodes per leaf switch")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--spine-leaves", o.spine_leaves, "leaf switches per spine")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--nvlink-frac", o.nvlink_frac, "share of nodes in multi-node NVLink domains (H200 leaves)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--nvlink-domain-nodes", o.nvlink_domain_nodes, "nodes per NVLink domain")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--model-frac", o.model_frac, "share of jobs asking for a GPU model (2/3 H200, 1/3 A100)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  app.add_flag("--skip-place", o.skip_place, "skip part 1 (Place() per second)");
  app.add_flag("--skip-pass", o.skip_pass, "skip part 2 (scheduling pass)");
  app.add_flag("--pass3", o.pass3, "part 2: a third pass after 10% of the running jobs ended");
  app.add_option("--fractional", o.fractional,
                 "part 1: a lane more, the first policy with this share of the requests asking for part of one "
                 "time-sliced GPU")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  app.add_flag("!--no-time-limits", o.time_limits, "jobs without time limits (no backfill reservations)");
  app.add_option("--submit-sample", o.submit_sample, "Submit() calls timed on their own (0 = none)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--out", o.out_dir, "directory for CSV files");
  CLI11_PARSE(app, argc, argv);

  const SteadyClock::time_point start = SteadyClock::now();
  char host[256] = "?";
  gethostname(host, sizeof(host) - 1);
  std::cout << "placement_bench on " << host << ": nproc " << sysconf(_SC_NPROCESSORS_ONLN) << " ("
            << std::thread::hardware_concurrency() << " hardware threads), one used; load average " << LoadAverage()
            << "; build " << GPUSCHED_BUILD_TYPE
#ifdef NDEBUG
            << " (NDEBUG)"
#else
            << " (assertions on)"
#endif
            << "\n";

  Phase build_phase;
  const ClusterSpec spec = BuildCluster(o);
  std::vector<std::string> kinds;
  for (const auto& [kind, count] : spec.nodes_per_kind) kinds.push_back(absl::StrCat(kind, " ", count));
  std::cout << "cluster: " << o.nodes << " nodes x 8 GPUs = " << spec.total_gpus << " GPUs ("
            << absl::StrJoin(kinds, ", ") << "); " << spec.leaves << " leaves of " << o.leaf_nodes << ", "
            << spec.spines << " spines of " << o.spine_leaves << " leaves, " << spec.nvlink_domains
            << " NVLink domains of " << o.nvlink_domain_nodes << " H200 nodes (" << spec.nvlink_nodes
            << " nodes); built in " << build_phase.Describe() << "\n";
  std::cout << "jobs: gang sizes " << MixDescription() << "; >8 GPUs 70% as N nodes x 8; " << 100 * o.model_frac
            << "% ask a GPU model; cpus/mem per GPU mostly set; "
            << (o.time_limits ? "time limits 2-72 h" : "no time limits") << "; seed " << o.seed << "\n";
  std::cout << "policies (lock step, first is the base of ratios): " << absl::StrJoin(o.policies, ", ") << "\n\n";

  std::vector<Table> tables;
  if (!o.skip_place) {
    std::cout << "Part 1: Place() per second" << std::endl;
    for (Table& t : RunPlacements(o, spec)) tables.push_back(std::move(t));
    for (size_t i = 0; i < tables.size(); ++i) std::cout << tables[i].Render() << std::endl;
  }
  if (!o.skip_pass) {
    const size_t before = tables.size();
    std::cout << "Part 2: scheduling passes" << std::endl;
    for (Table& t : RunPasses(o, spec)) tables.push_back(std::move(t));
    for (size_t i = before; i < tables.size(); ++i) std::cout << tables[i].Render() << std::endl;
  }
  std::cout << "targets (issue): >= 5,000 Place() calls/s; a pass over " << o.jobs << " pending jobs <= 200 ms\n";
  std::cout << "total " << Since(start) << " s; load average at the end " << LoadAverage() << "\n";

  if (!o.out_dir.empty()) {
    std::filesystem::create_directories(o.out_dir);
    for (size_t i = 0; i < tables.size(); ++i) {
      std::ofstream(o.out_dir + "/placement_" + std::to_string(i + 1) + ".csv") << tables[i].Csv();
    }
    std::cout << "CSV written to " << o.out_dir << "/placement_*.csv\n";
  }
  return 0;
}
