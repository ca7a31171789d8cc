// load_bench: the daemon under a busy cluster's load, and a check that it
// neither lost nor duplicated a job meanwhile.
//
//   1. starts a real `gpuschedd serve` and --agents real gpusched-agent
//      processes with --gpus fake GPUs each: the jobs (/bin/true or a short
//      /bin/sleep; 1, 2, 4 or 8 GPUs) really fork, exec, exit and free GPUs;
//   2. --clients clients submit, GetJob their own jobs, list and cancel for
//      --duration s (load_clients.h), writing down every answer they get;
//   3. waits for every job to end, cancelling what is left after --drain-s;
//   4. checks the store against the clients' records (load_check.h) and says
//      PASS or FAIL (exit 0 or 1) on that alone, never on a time; then prints
//      the latencies and rates it measured under the load.
// Bench client, daemon, agents and job processes share the machine's CPUs; the
// CPU each used is reported, and so is the load average.
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <thread>

#include "CLI/CLI.hpp"
#include "absl/synchronization/mutex.h"
#include "common/job_states.h"
#include "tests/bench/bench_daemon.h"
#include "tests/bench/closed_loop.h"
#include "tests/bench/load_agents.h"
#include "tests/bench/load_check.h"
#include "tests/bench/load_clients.h"
#include "tests/bench/report.h"
#include "tests/support/subprocess.h"

namespace gpusched::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  ClientsSpec clients;
  int agents = 4;
  int gpus = 8;
  std::string topology_file;
  double drain_s = 60;
  std::string out_dir;
  bool keep_state = false;
  std::string daemon_bin = GPUSCHEDD_BIN;
  std::string agent_bin = GPUSCHED_AGENT_BIN;
};

const std::vector<v1::JobState> kUnfinished = {v1::JOB_STATE_PENDING, v1::JOB_STATE_STARTING, v1::JOB_STATE_RUNNING,
                                               v1::JOB_STATE_PREEMPTED};

double Seconds(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

// Nearest rank, as Summarize in report.h (which has no p95).
double Rank(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const size_t i = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::min(sorted.size() - 1, i == 0 ? 0 : i - 1)];
}

std::string Ms(double us) { return Fixed(us / 1000.0, 2); }

std::string UserName() {
  const passwd* pw = getpwuid(geteuid());
  return pw != nullptr ? pw->pw_name : "";  // "": the agent runs the job as itself
}

// Until no job is unfinished or `seconds` pass; the jobs still unfinished.
std::vector<v1::Job> WaitForDrain(v1::Scheduler::Stub& stub, double seconds) {
  const auto start = Clock::now();
  while (true) {
    auto left = ListAllJobs(stub, kUnfinished);
    if (!left.ok()) throw std::runtime_error(std::string(left.status().message()));
    if (left->empty() || Seconds(start) >= seconds) return *std::move(left);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

// Load average and daemon RSS, sampled while the clients run.
struct Sampler {
  double max_load1 = 0;
  int64_t max_rss_kb = 0;
  bool daemon_gone = false;
  void Sample(const BenchDaemon& daemon) {
    max_load1 = std::max(max_load1, std::atof(LoadAverage().c_str()));
    max_rss_kb = std::max(max_rss_kb, daemon.RssKb());
    daemon_gone = daemon_gone || testing::ProcessGone(daemon.pid());
  }
};

int Run(Options o) {
  const auto bench_start = Clock::now();
  const std::string load_start = LoadAverage();
  // Should a cancelled job's process outlive SIGTERM (a loaded machine), its
  // GPUs come back after 1 s rather than the default 10: the churn goes on.
  BenchDaemon daemon(o.daemon_bin, o.keep_state, {"--kill-grace-ms", "1000"});
  BenchAgents agents({o.agent_bin, daemon.address(), daemon.dir(), o.agents, o.gpus, o.topology_file});
  if (absl::Status up = agents.WaitUntilUp(absl::Seconds(60)); !up.ok()) throw std::runtime_error(up.ToString());
  const auto channels = MakeChannels(daemon.address(), o.clients.clients);
  auto stub = v1::Scheduler::NewStub(channels.front());  // the bench's own calls: drain and check
  o.clients.user = UserName();
  o.clients.request_id_prefix = "load-" + std::to_string(getpid()) + "-" +
                                std::to_string(std::chrono::system_clock::now().time_since_epoch().count());
  std::cout << "gpuschedd pid " << daemon.pid() << " on " << daemon.address() << ", state in " << daemon.dir()
            << "/state; " << agents.count() << " agents x " << o.gpus << " GPUs ("
            << (o.topology_file.empty() ? "fake" : o.topology_file) << ")\n"
            << "machine: " << sysconf(_SC_NPROCESSORS_ONLN) << " CPUs online, loadavg at start " << load_start << "\n"
            << o.clients.clients << " clients on " << o.clients.threads << " client thread(s), " << channels.size()
            << " connection(s), for " << o.clients.duration_s << " s\n"
            << std::flush;

  // 2. The load.
  const double daemon0 = daemon.CpuSeconds(), agents0 = agents.CpuSeconds(), self0 = SelfCpuSeconds(),
               machine0 = MachineBusySeconds();
  const auto run_start = Clock::now();
  ClientsResult clients;
  std::atomic<bool> done{false};
  std::thread load([&] {
    clients = RunClients(channels, o.clients);
    done = true;
  });
  Sampler sampler;
  while (!done) {
    sampler.Sample(daemon);
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  load.join();
  if (sampler.daemon_gone) {
    // A crash: say so, with the daemon's last words, before its directory goes.
    const std::string log = testing::ReadFile(daemon.dir() + "/daemon.log");
    throw std::runtime_error("gpuschedd exited during the load; its log ends:\n" +
                             log.substr(log.size() > 4000 ? log.size() - 4000 : 0));
  }
  const double run_wall = Seconds(run_start);
  const double daemon_cpu = daemon.CpuSeconds() - daemon0, agents_cpu = agents.CpuSeconds() - agents0,
               self_cpu = SelfCpuSeconds() - self0;
  const double other_cpu = std::max(0.0, MachineBusySeconds() - machine0 - daemon_cpu - agents_cpu - self_cpu);
  const std::string load_end = LoadAverage();
  auto ended_in_run = ListAllJobs(*stub, {v1::JOB_STATE_COMPLETED, v1::JOB_STATE_FAILED, v1::JOB_STATE_CANCELLED,
                                          v1::JOB_STATE_TIMEOUT, v1::JOB_STATE_NODE_FAIL});
  if (!ended_in_run.ok()) throw std::runtime_error(std::string(ended_in_run.status().message()));
  const auto completed_in_run = std::count_if(ended_in_run->begin(), ended_in_run->end(),
                                              [](const v1::Job& j) { return j.state() == v1::JOB_STATE_COMPLETED; });

  // 3. Every job ends: by itself, else cancelled by the bench.
  std::cout << "load done after " << Fixed(run_wall, 1) << " s; waiting for the queue to drain\n" << std::flush;
  const auto drain_start = Clock::now();
  std::vector<v1::Job> left = WaitForDrain(*stub, o.drain_s);
  const double drain_s = Seconds(drain_start);
  std::set<uint64_t> bench_cancelled;
  if (!left.empty()) {
    std::cout << left.size() << " jobs still unfinished after " << Fixed(drain_s, 1) << " s; cancelling them\n";
    for (const v1::Job& job : left) {
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
      v1::CancelJobRequest cancel;
      cancel.set_job_id(job.id());
      cancel.set_reason("load_bench: drain timeout");
      v1::CancelJobResponse response;
      stub->CancelJob(&ctx, cancel, &response);  // "already ended" is as good
      bench_cancelled.insert(job.id());
    }
    WaitForDrain(*stub, o.drain_s);
  }

  // 4. The verdict.
  const CheckOutcome check = CheckJobs(*stub, clients, bench_cancelled);

  std::string title = std::to_string(o.clients.clients) + " clients for " + Fixed(o.clients.duration_s, 0) + " s, " +
                      std::to_string(agents.count()) + " agents x " + std::to_string(o.gpus) + " GPUs";
  Table calls("Calls under load: " + title,
              {"call", "answered", "calls/s", "p50 ms", "p95 ms", "p99 ms", "max ms", "transient", "errors"});
  for (int k = 0; k < kOpKinds; ++k) {
    OpStats s = clients.ops[k];
    std::sort(s.latency_us.begin(), s.latency_us.end());
    calls.Add({OpName(static_cast<OpKind>(k)), std::to_string(s.answered),
               Fixed(clients.run_s > 0 ? s.answered / clients.run_s : 0, 0), Ms(Rank(s.latency_us, 0.50)),
               Ms(Rank(s.latency_us, 0.95)), Ms(Rank(s.latency_us, 0.99)),
               Ms(s.latency_us.empty() ? 0 : s.latency_us.back()), std::to_string(s.transient),
               std::to_string(s.errors)});
  }
  Table run("Run", {"what", "value"});
  auto percent = [&](double cpu) { return Fixed(cpu, 1) + " s (" + Fixed(100 * cpu / run_wall, 0) + "% of one CPU)"; };
  run.Add({"CPUs online", std::to_string(sysconf(_SC_NPROCESSORS_ONLN))});
  run.Add({"load window s (until the last call ended)", Fixed(clients.run_s, 1)});
  run.Add({"jobs acknowledged", std::to_string(check.acknowledged)});
  run.Add({"jobs ended during the load", std::to_string(ended_in_run->size())});
  run.Add({"jobs COMPLETED during the load (per s)",
           std::to_string(completed_in_run) + " (" + Fixed(completed_in_run / run_wall, 1) + ")"});
  for (const auto& [state, n] : check.by_state) run.Add({"final state " + state, std::to_string(n)});
  run.Add({"submits answered duplicate (resubmits, retries)", std::to_string(clients.duplicates_answered)});
  run.Add({"cancels answered 'already ended'", std::to_string(clients.cancels_after_end)});
  run.Add({"drain s (after the load)", Fixed(drain_s, 1)});
  run.Add({"jobs cancelled by the bench after --drain-s", std::to_string(bench_cancelled.size())});
  run.Add({"daemon CPU during the load", percent(daemon_cpu)});
  run.Add({"agents + job processes CPU", percent(agents_cpu)});
  run.Add({"bench client CPU", percent(self_cpu)});
  run.Add({"rest of the machine CPU", percent(other_cpu)});
  run.Add({"daemon VmRSS MiB, max during / at end",
           Fixed(sampler.max_rss_kb / 1024.0, 1) + " / " + Fixed(daemon.RssKb() / 1024.0, 1)});
  run.Add({"daemon VmHWM MiB", Fixed(daemon.HighWaterRssKb() / 1024.0, 1)});
  run.Add({"daemon threads", std::to_string(daemon.Threads())});
  run.Add({"loadavg at start", load_start});
  run.Add({"loadavg 1-min, max during the load", Fixed(sampler.max_load1, 2)});
  run.Add({"loadavg at end of the load", load_end});
  run.Add({"bench wall s", Fixed(Seconds(bench_start), 1)});

  std::cout << "\n" << calls.Render() << "\n" << run.Render() << "\n";
  std::cout << "(calls/s = answered / load window; latency per attempt, of answered calls only; transient = "
               "UNAVAILABLE, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, ABORTED, after which a submit or cancel is "
               "sent again; CPU % is of one CPU)\n";
  if (!check.unexpected_ends.empty()) {
    std::cout << "note: " << check.unexpected_end_count
              << " uncancelled jobs ended neither COMPLETED nor CANCELLED (not part of the verdict), e.g.:\n";
    for (const auto& e : check.unexpected_ends) std::cout << "  " << e << "\n";
  }
  if (check.in_doubt > 0) std::cout << "note: " << check.in_doubt << " jobs of submits that never got an answer\n";
  if (!o.out_dir.empty()) {
    std::filesystem::create_directories(o.out_dir);
    std::ofstream(o.out_dir + "/load_calls.csv") << calls.Csv();
    std::ofstream(o.out_dir + "/load_run.csv") << run.Csv();
    std::cout << "CSV written to " << o.out_dir << "/load_{calls,run}.csv\n";
  }
  std::cout << "\nchecked " << check.listed << " jobs in the store against " << check.acknowledged
            << " acknowledgements: every acknowledged job once, under its request id, ended; no job nobody was told "
               "about; CANCELLED exactly where asked\n";
  for (const auto& [what, n] : check.problems_by_check) std::cout << "  FAILED CHECK: " << what << ": " << n << "\n";
  for (const auto& e : check.examples) std::cout << "    " << e << "\n";
  if (!check.passed()) {
    std::cout << "load_bench: FAIL (" << check.problems_by_check.size() << " checks failed; rerun with --keep-state "
              << "to keep the daemon's state, its log and the agents' logs)\n";
    return 1;
  }
  std::cout << "load_bench: PASS: " << check.acknowledged << " jobs, none lost, none duplicated\n";
  return 0;
}

}  // namespace
}  // namespace gpusched::bench

int main(int argc, char** argv) {
  gpusched::bench::Options o;
  gpusched::bench::ClientsSpec& c = o.clients;
  CLI::App app{"load_bench: gpuschedd under 64 clients and job churn; checks no job is lost or duplicated"};
  app.add_option("--duration", c.duration_s, "seconds of load")->check(CLI::Range(0.5, 3600.0))->capture_default_str();
  app.add_option("--clients", c.clients, "concurrent clients")->check(CLI::Range(1, 4096))->capture_default_str();
  app.add_option("--client-threads", c.threads, "bench threads driving completion queues")
      ->check(CLI::Range(1, 16))
      ->capture_default_str();
  app.add_option("--agents", o.agents, "gpusched-agent processes")->check(CLI::Range(1, 64))->capture_default_str();
  app.add_option("--gpus", o.gpus, "fake GPUs per agent")->check(CLI::Range(8, 64))->capture_default_str();
  app.add_option("--topology-file", o.topology_file, "agents' GPUs wired like this `nvidia-smi topo -m` output")
      ->check(CLI::ExistingFile);
  app.add_option("--active-per-client", c.active_per_client, "unfinished own jobs at which a client stops submitting")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  app.add_option("--cancel-fraction", c.cancel_fraction, "acknowledged jobs their client cancels later")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--resubmit-fraction", c.resubmit_fraction, "acknowledged submits sent again with the same request id")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--deadline-ms", c.deadline_ms, "deadline of each call")
      ->check(CLI::Range(10, 600000))
      ->capture_default_str();
  app.add_option("--give-up-s", c.give_up_s, "stop resending a submit or cancel this long after the load")
      ->capture_default_str();
  app.add_option("--drain-s", o.drain_s, "wait this long for jobs to end after the load, then cancel the rest")
      ->capture_default_str();
  app.add_option("--seed", c.seed, "seed of the clients' choices")->capture_default_str();
  app.add_option("--out", o.out_dir, "directory for CSV files");
  app.add_flag("--keep-state", o.keep_state, "leave the daemon's state directory behind");
  app.add_option("--daemon", o.daemon_bin, "gpuschedd binary")->capture_default_str();
  app.add_option("--agent", o.agent_bin, "gpusched-agent binary")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  // The bench client should take as little CPU from the daemon as it can (see submit_bench).
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  try {
    return gpusched::bench::Run(std::move(o));
  } catch (const std::exception& e) {
    std::cerr << "load_bench: " << e.what() << "\n";
    return 1;
  }
}
