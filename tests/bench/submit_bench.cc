// submit_bench: durable submits per second through gRPC, against a bare gRPC
// unary call on the same daemon, and `status` latency with a large store.
//
//   1. starts a real `gpuschedd serve`, with no agents (every job stays
//      PENDING) or with --agents real agents on fake GPUs, connected
//      throughout (then every job is submitted held, and stays PENDING too);
//   2. for each client count C: Health.Check (the bare unary call) and
//      SubmitJob, closed loop, C outstanding calls, warm-up then a timed window;
//   3. fills the store to --fill-jobs jobs with SubmitJob;
//   4. GetJob / ListJobs latency, and the wall time of `gpusched status JOB`
//      and `gpusched status` (every non-terminal job, i.e. all of them);
//   5. optionally SubmitJob again, now with the full store.
// The bench client shares the machine's cores with the daemon; its own CPU use
// is reported next to the daemon's.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gpusched/v1/types.pb.h"
#include "tests/bench/bench_daemon.h"
#include "tests/bench/closed_loop.h"
#include "tests/bench/load_agents.h"
#include "tests/bench/report.h"

namespace gpusched::bench {
namespace {

struct Options {
  std::vector<int> clients = {1, 64};
  int client_threads = 1;
  int channels = 0;  // 0 = one per client
  double warmup_s = 1;
  double measure_s = 5;
  uint64_t fill_jobs = 100000;
  int status_reps = 200;
  double status_time_cap_s = 10;
  int cli_one_reps = 20;
  int cli_all_reps = 3;
  double after_fill_submit_s = 5;
  std::string out_dir;
  bool keep_state = false;
  bool absl_deadlock_detection = false;
  std::string daemon_bin = GPUSCHEDD_BIN;
  std::vector<std::string> serve_args;  // e.g. --store=postgresql://...
  std::string cli_bin = GPUSCHED_CLI_BIN;
  int agents = 0;
  std::string agent_bin = GPUSCHED_AGENT_BIN;
};

constexpr int kGpusPerAgent = 8;  // --agents' fake GPUs

std::string Ms(double us) { return Fixed(us / 1000.0, 2); }

// CPU use of daemon and bench around one phase.
class CpuMeter {
 public:
  explicit CpuMeter(const BenchDaemon& d)
      : d_(d),
        daemon0_(d.CpuSeconds()),
        self0_(SelfCpuSeconds()),
        machine0_(MachineBusySeconds()),
        t0_(std::chrono::steady_clock::now()) {}
  double wall() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count(); }
  double daemon() const { return d_.CpuSeconds() - daemon0_; }
  double self() const { return SelfCpuSeconds() - self0_; }
  double machine() const { return MachineBusySeconds() - machine0_; }

 private:
  const BenchDaemon& d_;
  double daemon0_, self0_, machine0_;
  std::chrono::steady_clock::time_point t0_;
};

struct Phase {
  LoadResult result;
  double wall_s = 0, daemon_cpu_s = 0, bench_cpu_s = 0;
  double other_cpu_s = 0;  // the rest of the machine: anything but daemon and bench
  std::string load;        // loadavg after the phase
};

Phase Measure(const BenchDaemon& daemon, const std::vector<std::shared_ptr<grpc::Channel>>& channels,
              const LoadSpec& spec) {
  CpuMeter meter(daemon);
  Phase p;
  p.result = RunClosedLoop(channels, spec);
  p.wall_s = meter.wall();
  p.daemon_cpu_s = meter.daemon();
  p.bench_cpu_s = meter.self();
  p.other_cpu_s = std::max(0.0, meter.machine() - p.daemon_cpu_s - p.bench_cpu_s);
  p.load = LoadAverage();
  if (p.result.failed > 0) {
    std::cerr << "  WARNING: " << p.result.failed << " " << CallName(spec.kind)
              << " calls failed; first: " << p.result.first_error << "\n";
  }
  return p;
}

std::string Percent(double cpu_s, double wall_s) { return wall_s > 0 ? Fixed(100 * cpu_s / wall_s, 0) : "-"; }

std::string PerCall(double cpu_s, uint64_t calls) { return calls > 0 ? Fixed(1e6 * cpu_s / calls, 0) : "-"; }

int Run(const Options& o) {
  const auto bench_start = std::chrono::steady_clock::now();
  const std::string load_start = LoadAverage();
  BenchDaemon daemon(o.daemon_bin, o.keep_state, o.serve_args);
  std::unique_ptr<BenchAgents> agents;
  if (o.agents > 0) {
    agents = std::make_unique<BenchAgents>(
        AgentsSpec{o.agent_bin, daemon.address(), daemon.dir(), o.agents, kGpusPerAgent, ""});
    if (absl::Status up = agents->WaitUntilUp(absl::Seconds(60)); !up.ok()) {
      std::cerr << "submit_bench: " << up.message() << "\n";
      return 1;
    }
  }
  const bool hold = o.agents > 0;
  std::cout << "gpuschedd pid " << daemon.pid() << " on " << daemon.address() << ", state in " << daemon.dir()
            << "/state\n"
            << "machine: " << sysconf(_SC_NPROCESSORS_ONLN) << " CPUs online, loadavg at start " << load_start
            << "\nbench client: " << o.client_threads << " client thread(s), completion-queue API, "
            << (o.channels == 0 ? std::string("one channel (own TCP connection) per client")
                                : std::to_string(o.channels) + " channel(s) (own TCP connection each), shared")
            << "; it shares the CPUs with the daemon\n"
            << (o.agents > 0 ? absl::StrCat(o.agents, " agents with ", kGpusPerAgent,
                                            " fake GPUs each connected throughout; every job submitted held\n\n")
                             : std::string("no agents\n\n"))
            << std::flush;

  Table throughput(
      "Throughput, closed loop (C clients = C outstanding calls)",
      {"call", "store jobs", "C", "conns", "calls/s", "p50 ms", "p99 ms", "max ms", "ok", "failed", "daemon CPU%",
       "bench CPU%", "other CPU%", "daemon us/call", "bench us/call", "vs bare", "loadavg"});
  uint64_t jobs_in_store = 0;
  std::map<int, std::vector<std::shared_ptr<grpc::Channel>>> channels_for;
  auto channels = [&](int c) -> const std::vector<std::shared_ptr<grpc::Channel>>& {
    auto it = channels_for.find(c);
    if (it == channels_for.end()) {
      const int n = o.channels == 0 ? c : std::min(o.channels, c);
      it = channels_for.emplace(c, MakeChannels(daemon.address(), n)).first;
    }
    return it->second;
  };
  std::map<int, double> bare_rate;
  auto add_row = [&](const Phase& p, CallKind kind, int c, uint64_t store_jobs) {
    const auto lat = Summarize(p.result.latency_us);
    const double rate = p.result.CallsPerSecond();
    std::string vs = "-";
    if (kind == CallKind::kHealthCheck) {
      bare_rate[c] = rate;
    } else if (bare_rate.count(c) && bare_rate[c] > 0) {
      vs = Fixed(rate / bare_rate[c], 2);
    }
    throughput.Add({CallName(kind), std::to_string(store_jobs), std::to_string(c), std::to_string(channels(c).size()),
                    Fixed(rate, 0), Ms(lat.p50), Ms(lat.p99), Ms(lat.max), std::to_string(p.result.ok),
                    std::to_string(p.result.failed), Percent(p.daemon_cpu_s, p.wall_s),
                    Percent(p.bench_cpu_s, p.wall_s), Percent(p.other_cpu_s, p.wall_s),
                    PerCall(p.daemon_cpu_s, p.result.total_calls), PerCall(p.bench_cpu_s, p.result.total_calls), vs,
                    p.load});
    std::cout << "  " << CallName(kind) << " C=" << c << ": " << Fixed(rate, 0) << " calls/s, p50 " << Ms(lat.p50)
              << " ms, p99 " << Ms(lat.p99) << " ms (loadavg " << p.load << ")\n"
              << std::flush;
  };

  // 2. Bare unary call against durable submit, per client count.
  std::cout << "throughput: " << o.warmup_s << " s warm-up + " << o.measure_s << " s window per row\n";
  for (int c : o.clients) {
    for (CallKind kind : {CallKind::kHealthCheck, CallKind::kSubmitJob}) {
      LoadSpec spec;
      spec.kind = kind;
      spec.hold = hold;
      spec.clients = c;
      spec.threads = o.client_threads;
      spec.warmup_s = o.warmup_s;
      spec.measure_s = o.measure_s;
      const uint64_t before = jobs_in_store;
      Phase p = Measure(daemon, channels(c), spec);
      if (kind == CallKind::kSubmitJob) jobs_in_store += p.result.total_ok;
      add_row(p, kind, c, before);
    }
  }

  // 3. Fill the store.
  const int fill_c = *std::max_element(o.clients.begin(), o.clients.end());
  Table fill("Fill: SubmitJob until the store holds the target", {"what", "value"});
  uint64_t probe_job = 0;
  if (o.fill_jobs > jobs_in_store) {
    const uint64_t n = o.fill_jobs - jobs_in_store;
    std::cout << "fill: " << n << " submits with C=" << fill_c << "\n" << std::flush;
    LoadSpec spec;
    spec.kind = CallKind::kSubmitJob;
    spec.hold = hold;
    spec.clients = fill_c;
    spec.threads = o.client_threads;
    spec.max_calls = n;
    spec.record_completions = true;
    Phase p = Measure(daemon, channels(fill_c), spec);
    jobs_in_store += p.result.total_ok;
    probe_job = (p.result.min_job_id + p.result.max_job_id) / 2;
    const auto lat = Summarize(p.result.latency_us);
    fill.Add({"submits", std::to_string(n)});
    fill.Add({"clients", std::to_string(fill_c)});
    fill.Add({"failed", std::to_string(p.result.failed)});
    fill.Add({"seconds", Fixed(p.result.wall_s, 2)});
    fill.Add({"submits/s (whole fill)", Fixed(p.result.total_ok / p.result.wall_s, 0)});
    fill.Add({"p50 / p99 / max ms", Ms(lat.p50) + " / " + Ms(lat.p99) + " / " + Ms(lat.max)});
    fill.Add({"daemon / bench / other CPU%", Percent(p.daemon_cpu_s, p.wall_s) + " / " +
                                                 Percent(p.bench_cpu_s, p.wall_s) + " / " +
                                                 Percent(p.other_cpu_s, p.wall_s)});
    fill.Add({"daemon CPU us/submit", PerCall(p.daemon_cpu_s, p.result.total_calls)});
    // Rate per tenth of the fill: does it slow down as the store grows?
    const auto& t = p.result.completion_s;
    std::string tenths;
    for (int i = 0; i < 10 && !t.empty(); ++i) {
      const size_t a = t.size() * i / 10, b = t.size() * (i + 1) / 10 - 1;
      const double dt = t[b] - (a == 0 ? 0.0 : t[a - 1]);
      tenths += (i ? " " : "") + Fixed(dt > 0 ? (b - a + 1) / dt : 0, 0);
    }
    fill.Add({"submits/s per tenth of the fill", tenths});
    fill.Add({"loadavg after", p.load});
  } else {
    fill.Add({"submits", "0 (already at target)"});
  }
  if (probe_job == 0) probe_job = 1;
  fill.Add({"jobs in store", std::to_string(jobs_in_store)});
  const int64_t db = daemon.FileBytes(daemon.db_path());
  const int64_t wal = daemon.FileBytes(daemon.db_path() + "-wal");
  fill.Add({"daemon VmRSS MiB", Fixed(daemon.RssKb() / 1024.0, 1)});
  fill.Add({"daemon VmHWM MiB", Fixed(daemon.HighWaterRssKb() / 1024.0, 1)});
  fill.Add({"daemon threads", std::to_string(daemon.Threads())});
  fill.Add({"gpusched.db MiB", Fixed(db / 1048576.0, 1)});
  fill.Add({"gpusched.db-wal MiB", Fixed(wal / 1048576.0, 1)});
  fill.Add({"bytes per job (db+wal)",
            jobs_in_store ? Fixed(double(db + std::max<int64_t>(wal, 0)) / jobs_in_store, 0) : "-"});

  // 4. Status latency with the full store.
  Table status("Status latency with " + std::to_string(jobs_in_store) + " jobs in the store",
               {"what", "n", "p50 ms", "p99 ms", "min ms", "max ms", "items", "daemon CPU ms/call", "loadavg"});
  auto rpc_row = [&](const std::string& what, const LoadSpec& spec) {
    Phase p = Measure(daemon, channels(1), spec);
    const auto lat = Summarize(p.result.latency_us);
    status.Add({what, std::to_string(lat.n), Ms(lat.p50), Ms(lat.p99), Ms(lat.min), Ms(lat.max),
                std::to_string(p.result.response_items),
                p.result.total_calls ? Fixed(1e3 * p.daemon_cpu_s / p.result.total_calls, 2) : "-", p.load});
    std::cout << "  " << what << ": p50 " << Ms(lat.p50) << " ms, p99 " << Ms(lat.p99) << " ms\n" << std::flush;
  };
  std::cout << "status: probe job " << probe_job << "\n";
  {
    LoadSpec spec;
    spec.clients = 1;
    spec.max_calls = static_cast<uint64_t>(o.status_reps);
    spec.time_cap_s = o.status_time_cap_s;
    spec.kind = CallKind::kGetJob;
    spec.job_id = probe_job;
    rpc_row("GetJob " + std::to_string(probe_job) + " (with events)", spec);
    spec.kind = CallKind::kListJobs;
    rpc_row("ListJobs page 1, all states", spec);
    spec.states = {v1::JOB_STATE_PENDING, v1::JOB_STATE_STARTING, v1::JOB_STATE_RUNNING, v1::JOB_STATE_PREEMPTED};
    rpc_row("ListJobs page 1, non-terminal (CLI filter)", spec);
  }
  auto cli_row = [&](const std::string& what, const std::vector<std::string>& args, int reps) {
    std::vector<double> us;
    int64_t lines = 0, bytes = 0;
    CpuMeter meter(daemon);
    for (int i = 0; i < reps; ++i) {
      std::vector<std::string> argv = {o.cli_bin};
      argv.insert(argv.end(), args.begin(), args.end());
      TimedRun r = RunTimed(argv, daemon.address(), daemon.dir() + "/cli.out");
      if (r.exit_code != 0) {
        std::cerr << "  WARNING: " << what << " exited " << r.exit_code << ": " << r.stderr_text << "\n";
        continue;
      }
      us.push_back(r.wall_ms * 1000);
      lines = r.stdout_lines;
      bytes = r.stdout_bytes;
    }
    const auto lat = Summarize(us);
    status.Add({what, std::to_string(lat.n), Ms(lat.p50), Ms(lat.p99), Ms(lat.min), Ms(lat.max),
                std::to_string(lines) + " lines/" + std::to_string(bytes / 1024) + " KiB",
                reps ? Fixed(1e3 * meter.daemon() / reps, 2) : "-", LoadAverage()});
    std::cout << "  " << what << ": p50 " << Ms(lat.p50) << " ms, max " << Ms(lat.max) << " ms\n" << std::flush;
  };
  cli_row("CLI: gpusched status " + std::to_string(probe_job), {"status", std::to_string(probe_job)}, o.cli_one_reps);
  cli_row("CLI: gpusched status (all non-terminal)", {"status"}, o.cli_all_reps);

  // 5. Submits with the full store.
  if (o.after_fill_submit_s > 0) {
    std::cout << "throughput with the full store:\n";
    for (CallKind kind : {CallKind::kHealthCheck, CallKind::kSubmitJob}) {
      LoadSpec spec;
      spec.kind = kind;
      spec.hold = hold;
      spec.clients = fill_c;
      spec.threads = o.client_threads;
      spec.warmup_s = o.warmup_s;
      spec.measure_s = o.after_fill_submit_s;
      const uint64_t before = jobs_in_store;
      Phase p = Measure(daemon, channels(fill_c), spec);
      if (kind == CallKind::kSubmitJob) jobs_in_store += p.result.total_ok;
      add_row(p, kind, fill_c, before);
    }
  }

  Table summary("Run", {"what", "value"});
  summary.Add({"CPUs online", std::to_string(sysconf(_SC_NPROCESSORS_ONLN))});
  summary.Add({"loadavg at start", load_start});
  summary.Add({"loadavg at end", LoadAverage()});
  summary.Add({"bench wall s",
               Fixed(std::chrono::duration<double>(std::chrono::steady_clock::now() - bench_start).count(), 1)});
  summary.Add({"agents connected", std::to_string(o.agents)});
  summary.Add({"client threads", std::to_string(o.client_threads)});
  summary.Add({"channels", o.channels == 0 ? "one per client" : std::to_string(o.channels)});
  summary.Add({"bench absl deadlock detection", o.absl_deadlock_detection ? "on" : "off"});
  summary.Add({"daemon VmRSS MiB at end", Fixed(daemon.RssKb() / 1024.0, 1)});

  std::cout << "\n"
            << throughput.Render() << "\n"
            << fill.Render() << "\n"
            << status.Render() << "\n"
            << summary.Render();
  std::cout
      << "(vs bare = SubmitJob calls/s / Health.Check calls/s at the same C and store size; daemon and bench "
         "CPU% are of one core, so 200% is the whole 2-core machine; other CPU% is everything else on the machine, "
         "kernel threads included: another build or test shows up there)\n";
  if (!o.out_dir.empty()) {
    std::filesystem::create_directories(o.out_dir);
    for (const auto& [name, table] : std::vector<std::pair<std::string, const Table*>>{
             {"throughput.csv", &throughput}, {"fill.csv", &fill}, {"status.csv", &status}, {"run.csv", &summary}}) {
      std::ofstream(o.out_dir + "/" + name) << table->Csv();
    }
    std::cout << "CSV written to " << o.out_dir << "/{throughput,fill,status,run}.csv\n";
  }
  return 0;
}

}  // namespace
}  // namespace gpusched::bench

int main(int argc, char** argv) {
  gpusched::bench::Options o;
  CLI::App app{"submit_bench: gpuschedd submit throughput and status latency (a benchmark, not a test)"};
  app.add_option("--clients", o.clients, "client counts to measure, e.g. 1,64")->delimiter(',')->capture_default_str();
  app.add_option("--client-threads", o.client_threads, "bench threads driving completion queues")
      ->check(CLI::Range(1, 16))
      ->capture_default_str();
  app.add_option("--channels", o.channels, "TCP connections shared by the clients (0 = one per client)")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  app.add_option("--warmup-s", o.warmup_s, "warm-up before each timed window")->capture_default_str();
  app.add_option("--measure-s", o.measure_s, "timed window per throughput row")->capture_default_str();
  app.add_option("--fill-jobs", o.fill_jobs, "jobs in the store before the status measurements")->capture_default_str();
  app.add_option("--status-reps", o.status_reps, "GetJob / ListJobs repetitions")->capture_default_str();
  app.add_option("--status-time-cap-s", o.status_time_cap_s, "at most this long per GetJob / ListJobs row")
      ->capture_default_str();
  app.add_option("--cli-one-reps", o.cli_one_reps, "runs of `gpusched status JOB`")->capture_default_str();
  app.add_option("--cli-all-reps", o.cli_all_reps, "runs of `gpusched status`")->capture_default_str();
  app.add_option("--after-fill-submit-s", o.after_fill_submit_s, "timed window of the full-store rows (0 = skip)")
      ->capture_default_str();
  app.add_option("--out", o.out_dir, "directory for CSV files");
  app.add_flag("--keep-state", o.keep_state, "leave the daemon's state directory behind");
  app.add_flag("--absl-deadlock-detection", o.absl_deadlock_detection,
               "keep Abseil's mutex deadlock detection on in the bench client (Debian's Abseil enables it, and "
               "gRPC's mutexes pay for it)");
  app.add_option("--daemon", o.daemon_bin, "gpuschedd binary")->capture_default_str();
  app.add_option("--serve-arg", o.serve_args,
                 "one more `gpuschedd serve` argument, as --serve-arg=--store=postgresql://... (repeatable)");
  app.add_option("--cli", o.cli_bin, "gpusched binary")->capture_default_str();
  app.add_option("--agents", o.agents,
                 absl::StrCat("real agents (", gpusched::bench::kGpusPerAgent,
                              " fake GPUs each) connected throughout; jobs are then held"))
      ->check(CLI::Range(0, 256))
      ->capture_default_str();
  app.add_option("--agent", o.agent_bin, "gpusched-agent binary")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (o.clients.empty()) {
    std::cerr << "--clients: give at least one count\n";
    return 2;
  }
  for (int c : o.clients) {
    if (c < 1 || c > 4096) {
      std::cerr << "--clients: " << c << " is out of range 1..4096\n";
      return 2;
    }
  }
  // The bench client should take as little CPU from the daemon as it can.
  if (!o.absl_deadlock_detection) absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  try {
    return gpusched::bench::Run(o);
  } catch (const std::exception& e) {
    std::cerr << "submit_bench: " << e.what() << "\n";
    return 1;
  }
}
