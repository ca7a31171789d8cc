#include "daemon/sim/sharing_command.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "daemon/sim/csv_table.h"
#include "daemon/sim/report_files.h"

namespace gpusched::sim {
namespace {

using core::sharing::PackingPolicy;

std::string PlacementLog(const InflationRun& run, const InflationExperiment& experiment) {
  std::string out = "seq,pod,source,node,gpus\n";
  for (const InflationArrival& a : run.arrivals) {
    std::string gpus;
    for (int g : a.gpus) {
      if (!gpus.empty()) gpus += ";";
      absl::StrAppend(&gpus, g, ":", a.gpu_milli);
    }
    absl::StrAppend(&out, a.seq, ",", CsvQuoted(a.pod), ",", CsvQuoted(a.source), ",",
                    a.node < 0 ? std::string("unscheduled") : CsvQuoted(experiment.nodes()[a.node].name), ",", gpus,
                    "\n");
  }
  return out;
}

std::string Percent(double share) { return absl::StrFormat("%.2f%%", 100 * share); }

struct PolicyRuns {
  PackingPolicy policy;
  std::vector<InflationRun> runs;
};

// Mean, min and max of the unallocated share at the measuring point over the
// runs that reached it.
struct Spread {
  int reached = 0;
  double mean = 0, min = 1, max = 0, rejected = 0, at_end = 0;
};

Spread SpreadOf(const std::vector<InflationRun>& runs) {
  Spread s;
  for (const InflationRun& r : runs) {
    s.at_end += r.unallocated_at_end / static_cast<double>(runs.size());
    if (!r.unallocated_at_measure) continue;
    ++s.reached;
    s.mean += *r.unallocated_at_measure;
    s.rejected += static_cast<double>(r.rejected_at_measure);
    s.min = std::min(s.min, *r.unallocated_at_measure);
    s.max = std::max(s.max, *r.unallocated_at_measure);
  }
  if (s.reached > 0) {
    s.mean /= s.reached;
    s.rejected /= s.reached;
  }
  return s;
}

}  // namespace

absl::StatusOr<std::vector<uint64_t>> ParseSeeds(const std::string& spec) {
  std::vector<uint64_t> seeds;
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("--seeds \"", spec, "\": ", why, " (expected A-B or A,B,C)"));
  };
  for (absl::string_view part : absl::StrSplit(spec, ',')) {
    std::vector<absl::string_view> range = absl::StrSplit(part, absl::MaxSplits('-', 1));
    uint64_t first = 0, last = 0;
    if (!absl::SimpleAtoi(range[0], &first)) return bad(absl::StrCat("\"", range[0], "\" is not a seed"));
    last = first;
    if (range.size() == 2 && !absl::SimpleAtoi(range[1], &last)) {
      return bad(absl::StrCat("\"", range[1], "\" is not a seed"));
    }
    if (last < first) return bad(absl::StrCat(part, " runs backwards"));
    if (last - first >= 10000 || seeds.size() + (last - first) >= 10000) return bad("more than 10,000 seeds");
    for (uint64_t s = first; s <= last; ++s) seeds.push_back(s);
  }
  return seeds;
}

absl::Status RunSimulateSharing(const SimulateSharingOptions& options, std::ostream& out, std::ostream& err) {
  std::vector<PackingPolicy> policies;
  for (const std::string& name : options.policies) {
    auto policy = core::sharing::ParsePackingPolicy(name);
    if (!policy) {
      return absl::InvalidArgumentError(
          absl::StrCat("--policy: unknown policy \"", name, "\" (known: ", core::sharing::PackingPolicyNames(), ")"));
    }
    policies.push_back(*policy);
  }
  if (policies.empty()) return absl::InvalidArgumentError("--policy: no policy given");
  auto seeds = ParseSeeds(options.seeds);
  if (!seeds.ok()) return seeds.status();
  auto nodes = LoadOpenbNodes(options.nodes_path);
  if (!nodes.ok()) return nodes.status();
  auto pods = LoadOpenbPods(options.pods_path);
  if (!pods.ok()) return pods.status();
  std::vector<OpenbPod> given;
  if (!options.arrivals_path.empty()) {
    auto read = LoadOpenbPods(options.arrivals_path);
    if (!read.ok()) return read.status();
    given = *std::move(read);
  }
  const size_t node_rows = nodes->size(), pod_rows = pods->size();
  auto experiment = InflationExperiment::Make(*std::move(nodes), *std::move(pods));
  if (!experiment.ok()) return experiment.status();

  std::vector<PolicyRuns> results;
  for (PackingPolicy policy : policies) {
    const auto started = std::chrono::steady_clock::now();
    PolicyRuns& r = results.emplace_back(PolicyRuns{policy, {}});
    if (given.empty()) {
      for (uint64_t seed : *seeds) r.runs.push_back(experiment->Sampled(policy, seed, options.inflation));
    } else {
      auto run = experiment->Replayed(policy, given, options.inflation);
      if (!run.ok())
        return absl::Status(run.status().code(), absl::StrCat(options.arrivals_path, ": ", run.status().message()));
      r.runs.push_back(*std::move(run));
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    err << absl::StrFormat("%s: %d run(s) in %.1f s\n", core::sharing::PackingPolicyName(policy), r.runs.size(), s);
  }

  const int64_t gpus = experiment->gpu_capacity_milli() / core::sharing::kWholeGpuMilli;
  out << absl::StrFormat("workload inflation: %d nodes with GPUs (of %d rows), %d GPUs; task mix of %d pods; %s\n",
                         experiment->nodes().size(), node_rows, gpus, pod_rows,
                         given.empty() ? absl::StrCat("seeds ", options.seeds, ", drawn to ",
                                                      Percent(options.inflation.inflate_to), " of capacity")
                                       : absl::StrCat(given.size(), " arrivals from ", options.arrivals_path));
  const std::string at = Percent(options.inflation.measure_at);
  out << absl::StrFormat("%-10s  %22s  %15s  %16s  %14s\n", "policy", absl::StrCat("unallocated at ", at),
                         "(min - max)", "pods rejected", "unallocated at end");
  std::string summary =
      "policy,seed,arrivals_at_measure,rejected_at_measure,unallocated_at_measure,arrived_at_end,"
      "unallocated_at_end\n";
  for (const PolicyRuns& r : results) {
    const Spread s = SpreadOf(r.runs);
    const std::string name(core::sharing::PackingPolicyName(r.policy));
    if (s.reached == 0) {
      out << absl::StrFormat("%-10s  %22s  %15s  %16s  %14s\n", name, "not reached", "", "", Percent(s.at_end));
    } else {
      out << absl::StrFormat("%-10s  %22s  %15s  %16.1f  %14s\n", name, Percent(s.mean),
                             absl::StrCat(Percent(s.min), " - ", Percent(s.max)), s.rejected, Percent(s.at_end));
    }
    for (const InflationRun& run : r.runs) {
      absl::StrAppend(&summary, name, ",", run.seed ? absl::StrCat(*run.seed) : std::string(), ",",
                      run.arrivals_at_measure, ",", run.rejected_at_measure, ",",
                      run.unallocated_at_measure ? absl::StrFormat("%.6f", *run.unallocated_at_measure) : "", ",",
                      absl::StrFormat("%.6f", run.arrived_at_end), ",", absl::StrFormat("%.6f", run.unallocated_at_end),
                      "\n");
    }
  }
  if (options.out_dir.empty()) return absl::OkStatus();
  if (absl::Status s = MakeReportDir(options.out_dir); !s.ok()) return s;
  std::vector<std::string> written;
  if (absl::Status s = WriteReportFile(options.out_dir, "summary.csv", summary, written); !s.ok()) return s;
  for (const PolicyRuns& r : results) {
    for (const InflationRun& run : r.runs) {
      const std::string name = absl::StrCat("placements-", core::sharing::PackingPolicyName(r.policy),
                                            run.seed ? absl::StrCat("-seed", *run.seed) : "", ".csv");
      if (absl::Status s = WriteReportFile(options.out_dir, name, PlacementLog(run, *experiment), written); !s.ok()) {
        return s;
      }
    }
  }
  out << "wrote " << written.size() << " files to " << options.out_dir << "\n";
  return absl::OkStatus();
}

}  // namespace gpusched::sim
