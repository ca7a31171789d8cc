// Metrics end to end: the real gpuschedd and an agent on the NVML path (the
// fake libnvidia-ml), scraped over HTTP directly and by a real Prometheus
// server, while real jobs run.

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/job_states.h"
#include "tests/integration/prometheus_server.h"
#include "tests/integration/test_cluster.h"
#include "tests/skip.h"
#include "tests/support/http_client.h"
#include "tests/support/metrics_text.h"
#include "tests/support/scarce_descriptors.h"

using namespace gpusched;
using gpusched::testing::CpuSeconds;
using gpusched::testing::FindMetric;
using gpusched::testing::FreeLoopbackPort;
using gpusched::testing::HttpGet;
using gpusched::testing::PrometheusServer;
using gpusched::testing::ScarceDescriptors;
using gpusched::testing::TestCluster;

namespace {

// One node, "hgx", whose 8 H100s come from NVML (the fake library), with its
// agent and the daemon both serving /metrics on loopback.
struct MetricsCluster {
  int daemon_port = FreeLoopbackPort();
  int agent_port = FreeLoopbackPort();
  TestCluster cluster{{{"hgx",
                        0,
                        {"--gpu-source", "nvml", "--nvml-library", GPUSCHED_FAKE_NVML, "--metrics-listen",
                         absl::StrCat("127.0.0.1:", agent_port)},
                        {"GPUSCHED_FAKE_NVML_MACHINE=hgx-h100"}}},
                      {"--metrics-listen", absl::StrCat("127.0.0.1:", daemon_port)}};

  std::string daemon_target() const { return absl::StrCat("127.0.0.1:", daemon_port); }
  std::string agent_target() const { return absl::StrCat("127.0.0.1:", agent_port); }

  // A job that holds its GPUs until Release().
  uint64_t SubmitHeld(int gpus) const {
    return cluster.Submit({"--gpus", std::to_string(gpus), "--", "/bin/sh", "-c",
                           absl::StrCat("while [ ! -e ", cluster.dir(), "/go ]; do sleep 0.05; done")});
  }
  void Release() const { std::ofstream(cluster.dir() + "/go") << "go\n"; }
};

std::string Scrape(int port) {
  auto response = HttpGet("127.0.0.1", port, "/metrics");
  INFO((response.ok() ? "" : response.status().ToString()));
  REQUIRE(response.ok());
  REQUIRE(response->status == 200);
  return response->body;
}

// Polls a scrape until the sample has the value (changes reach the metrics
// when the scheduler thread's pass ends, a moment after the RPC that caused them).
void WaitForScraped(int port, const std::string& name, const std::map<std::string, std::string>& labels,
                    double expected) {
  std::string text;
  for (int i = 0; i < 200; ++i) {
    text = Scrape(port);
    if (FindMetric(text, name, labels) == expected) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  FAIL(name << " never reached " << expected << "; last scrape:\n" << text);
}

}  // namespace

TEST_CASE("daemon and agent /metrics show the queue, the GPUs and the NVML readings while jobs run",
          "[integration][metrics]") {
  MetricsCluster m;
  const int d = m.daemon_port;
  WaitForScraped(d, "gpusched_nodes", {{"state", "up"}}, 1);
  WaitForScraped(d, "gpusched_gpus", {{"state", "free"}}, 8);
  WaitForScraped(d, "gpusched_node_state", {{"node", "hgx"}, {"state", "up"}}, 1);

  const uint64_t held = m.SubmitHeld(4);
  m.cluster.WaitForState(held, v1::JOB_STATE_RUNNING);
  WaitForScraped(d, "gpusched_gpus", {{"state", "allocated"}}, 4);
  WaitForScraped(d, "gpusched_gpus", {{"state", "free"}}, 4);
  WaitForScraped(d, "gpusched_jobs", {{"state", "running"}, {"queue", "default"}}, 1);
  // Four GPUs of one HGX: a single-node NVSwitch ring.
  WaitForScraped(d, "gpusched_placements_total", {{"span", "node"}, {"worst_link", "NV18"}}, 1);

  // The agent: what it runs, and each GPU as NVML reads it (the fake's
  // readings for GPU 3: 35 %, 512 MiB used, 33 C, 103.5 W).
  WaitForScraped(m.agent_port, "gpusched_agent_running_jobs", {{"node", "hgx"}}, 1);
  const std::string agent = Scrape(m.agent_port);
  INFO(agent);
  CHECK(FindMetric(agent, "gpusched_agent_running_ranks", {{"node", "hgx"}}) == 4);
  CHECK(FindMetric(agent, "gpusched_agent_connected", {{"node", "hgx"}}) == 1);
  const std::map<std::string, std::string> gpu3 = {{"gpu", "3"},
                                                   {"UUID", "GPU-h100beef-0000-4000-8000-000000000003"},
                                                   {"Hostname", "hgx"},
                                                   {"modelName", "NVIDIA H100 80GB HBM3"}};
  CHECK(FindMetric(agent, "DCGM_FI_DEV_GPU_UTIL", gpu3) == 35);
  CHECK(FindMetric(agent, "DCGM_FI_DEV_FB_USED", gpu3) == 512);
  CHECK(FindMetric(agent, "DCGM_FI_DEV_GPU_TEMP", gpu3) == 33);
  CHECK(FindMetric(agent, "DCGM_FI_DEV_POWER_USAGE", gpu3) == 103.5);
  CHECK(FindMetric(agent, "gpusched_agent_gpu_up", gpu3) == 1);

  // Eight more GPUs than are free: it waits.
  const uint64_t waiting = m.cluster.Submit({"--gpus", "8", "--", "/bin/true"});
  WaitForScraped(d, "gpusched_jobs", {{"state", "pending"}, {"queue", "default"}}, 1);

  m.Release();
  CHECK(m.cluster.WaitForEnd(held).state() == v1::JOB_STATE_COMPLETED);
  CHECK(m.cluster.WaitForEnd(waiting).state() == v1::JOB_STATE_COMPLETED);
  WaitForScraped(d, "gpusched_jobs_finished_total", {{"state", "completed"}, {"queue", "default"}}, 2);
  const std::string daemon = Scrape(d);
  INFO(daemon);
  CHECK(FindMetric(daemon, "gpusched_jobs", {{"state", "pending"}}) == 0);
  CHECK(FindMetric(daemon, "gpusched_jobs", {{"state", "running"}}) == 0);
  CHECK(FindMetric(daemon, "gpusched_gpus", {{"state", "allocated"}}) == 0);
  CHECK(FindMetric(daemon, "gpusched_jobs_submitted_total", {{"queue", "default"}}) == 2);
  CHECK(FindMetric(daemon, "gpusched_jobs_started_total", {{"queue", "default"}}) == 2);
  CHECK(FindMetric(daemon, "gpusched_job_wait_seconds_count") == 2);
  CHECK(FindMetric(daemon, "gpusched_submit_duration_seconds_count") == 2);
  CHECK(FindMetric(daemon, "gpusched_scheduling_pass_duration_seconds_count") > 0);
  WaitForScraped(m.agent_port, "gpusched_agent_running_jobs", {{"node", "hgx"}}, 0);

  // A held array of 50 tasks: all submitted and pending at once, though
  // only its first task is a job yet.
  REQUIRE(m.cluster.Cli({"submit", "--array", "0-49", "--hold", "--gpus", "1", "--", "/bin/true"}).exit_code == 0);
  WaitForScraped(d, "gpusched_jobs_submitted_total", {{"queue", "default"}}, 52);
  CHECK(FindMetric(Scrape(d), "gpusched_jobs", {{"state", "pending"}, {"queue", "default"}}) == 50);
}

TEST_CASE("the daemon counts recovered jobs after a crash, not as new submits", "[integration][metrics]") {
  MetricsCluster m;
  const uint64_t held = m.SubmitHeld(2);
  m.cluster.WaitForState(held, v1::JOB_STATE_RUNNING);
  m.cluster.CrashDaemon();
  m.cluster.StartDaemon();
  // Before its agent is back, the node waits and its free GPUs are down;
  // the running job's GPUs stay allocated.
  WaitForScraped(m.daemon_port, "gpusched_jobs", {{"state", "running"}, {"queue", "default"}}, 1);
  WaitForScraped(m.daemon_port, "gpusched_gpus", {{"state", "allocated"}}, 2);
  CHECK(FindMetric(Scrape(m.daemon_port), "gpusched_jobs_submitted_total", {{"queue", "default"}}) == 0);
  WaitForScraped(m.daemon_port, "gpusched_nodes", {{"state", "up"}}, 1);  // the agent reconnects
  m.Release();
  CHECK(m.cluster.WaitForEnd(held).state() == v1::JOB_STATE_COMPLETED);
  WaitForScraped(m.daemon_port, "gpusched_jobs_finished_total", {{"state", "completed"}, {"queue", "default"}}, 1);
  WaitForScraped(m.daemon_port, "gpusched_jobs", {{"state", "running"}, {"queue", "default"}}, 0);
}

TEST_CASE("a real Prometheus server scrapes daemon and agent and answers queries on them", "[integration][metrics]") {
  if (PrometheusServer::Binary().empty()) {
    GPUSCHED_SKIP("no prometheus binary (Debian package prometheus)");
  }
  MetricsCluster m;
  PrometheusServer prometheus(m.cluster.dir() + "/prometheus",
                              {{"gpuschedd", {m.daemon_target()}}, {"gpusched-agent", {m.agent_target()}}},
                              {GPUSCHED_PACKAGING_DIR "/prometheus/gpusched-alerts.yml"});
  prometheus.WaitForValue("up{job=\"gpuschedd\"}", 1);
  prometheus.WaitForValue("up{job=\"gpusched-agent\"}", 1);
  prometheus.WaitForValue("gpusched_gpus{state=\"free\"}", 8);

  const uint64_t held = m.SubmitHeld(4);
  m.cluster.WaitForState(held, v1::JOB_STATE_RUNNING);
  prometheus.WaitForValue("gpusched_gpus{state=\"allocated\"}", 4);
  prometheus.WaitForValue("sum(gpusched_agent_running_ranks)", 4);
  const uint64_t waiting = m.cluster.Submit({"--gpus", "6", "--", "/bin/true"});
  prometheus.WaitForValue("sum(gpusched_jobs{state=\"pending\"})", 1);

  // The agent's GPUs under DCGM exporter's names, as a DCGM dashboard asks.
  prometheus.WaitForValue("DCGM_FI_DEV_GPU_TEMP{gpu=\"5\",Hostname=\"hgx\"}", 35);
  prometheus.WaitForValue("avg(DCGM_FI_DEV_GPU_UTIL{modelName=\"NVIDIA H100 80GB HBM3\"})", 40);  // (5+...+75)/8
  prometheus.WaitForValue("sum(DCGM_FI_DEV_POWER_USAGE)", 8 * 100.5 + 28);

  m.Release();
  CHECK(m.cluster.WaitForEnd(held).state() == v1::JOB_STATE_COMPLETED);
  CHECK(m.cluster.WaitForEnd(waiting).state() == v1::JOB_STATE_COMPLETED);
  prometheus.WaitForValue("sum(gpusched_jobs_finished_total{state=\"completed\"})", 2);
  prometheus.WaitForValue("sum(gpusched_jobs{state=~\"pending|starting|running\"})", 0);
  prometheus.WaitForValue("gpusched_gpus{state=\"allocated\"}", 0);
  prometheus.WaitForValue("sum(gpusched_placements_total)", 2);
  // Submit latency: both submits were answered within a second.
  prometheus.WaitForValue("gpusched_submit_duration_seconds_bucket{le=\"1\"}", 2);

  // The shipped alert rules load and evaluate on these series without error,
  // and none fires on a healthy cluster.
  const std::string rules = prometheus.Get("/api/v1/rules");
  INFO(rules);
  CHECK(absl::StrContains(rules, "\"name\":\"GpuschedQueueStuck\""));
  CHECK(absl::StrContains(rules, "\"name\":\"GpuschedGpuDown\""));
  CHECK_FALSE(absl::StrContains(rules, "\"health\":\"err\""));
  CHECK(prometheus.Query("ALERTS{alertstate=\"firing\"}").empty());
}

TEST_CASE("a daemon out of file descriptors does not spin on /metrics' socket, and serves it again",
          "[integration][metrics]") {
  if (gpusched::testing::kSanitizedBuild) {
    GPUSCHED_SKIP("a sanitizer build cannot run short of file descriptors (UBSan's vptr check needs one)");
  }
  const int port = FreeLoopbackPort();
  TestCluster cluster({{"node-a", 2}}, {"--metrics-listen", absl::StrCat("127.0.0.1:", port)});
  Scrape(port);
  const pid_t daemon = cluster.daemon_pid();
  {
    const ScarceDescriptors scarce(daemon, 0);
    // Scrapers that gave up: their connections wait to be accepted all the same.
    for (int i = 0; i < 5; ++i) {
      const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      REQUIRE(fd >= 0);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_port = htons(static_cast<uint16_t>(port));
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      REQUIRE(connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0);
      close(fd);
    }
    const double cpu_before = CpuSeconds(daemon);
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    // A loop that polled the readable socket again at once would take a core.
    CHECK(CpuSeconds(daemon) - cpu_before < 0.5);
  }
  CHECK(absl::StrContains(Scrape(port), "gpusched_nodes"));
}
