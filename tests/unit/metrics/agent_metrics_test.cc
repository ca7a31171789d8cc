// The agent's collectors, fed by the real NVML sampling path: NvmlGpuSampler
// loading the fake libnvidia-ml the GPU tests build.
#include <catch2/catch.hpp>

#include "agent/gpu/nvml_gpu_sampler.h"
#include "agent/metrics/agent_collector.h"
#include "agent/metrics/gpu_collector.h"
#include "tests/support/metrics_text.h"
#include "tests/unit/gpu/scoped_env.h"
#include "tests/unit/metrics/metrics_test_util.h"

namespace gpusched::agent {
namespace {

using gpusched::metrics::testing::Scrape;
using gpusched::testing::FindMetric;
using gpusched::testing::ScopedEnv;

TEST_CASE("GPU readings are exported under DCGM exporter's names and labels") {
  ScopedEnv machine("GPUSCHED_FAKE_NVML_MACHINE", "pcie-l40s");
  auto sampler = NvmlGpuSampler::Open(GPUSCHED_FAKE_NVML);
  INFO(sampler.status().message());
  REQUIRE(sampler.ok());
  const std::string uuid = (*sampler)->Sample()[1].uuid;
  const std::string model = (*sampler)->Sample()[1].model;
  GpuCollector collector("gpu07", sampler->get());
  const std::string text = Scrape(collector);
  INFO(text);
  const std::map<std::string, std::string> gpu1 = {
      {"gpu", "1"}, {"UUID", uuid}, {"device", "nvidia1"}, {"modelName", model}, {"Hostname", "gpu07"}};
  CHECK(FindMetric(text, "DCGM_FI_DEV_GPU_UTIL", gpu1) == 15);
  CHECK(FindMetric(text, "DCGM_FI_DEV_MEM_COPY_UTIL", gpu1) == 3);
  CHECK(FindMetric(text, "DCGM_FI_DEV_FB_USED", gpu1) == 512);
  CHECK(FindMetric(text, "DCGM_FI_DEV_GPU_TEMP", gpu1) == 31);
  CHECK(FindMetric(text, "DCGM_FI_DEV_POWER_USAGE", gpu1) == 101.5);
  CHECK(FindMetric(text, "gpusched_agent_gpu_up", gpu1) == 1);
  CHECK(text.find("# TYPE DCGM_FI_DEV_GPU_UTIL gauge") != std::string::npos);
}

TEST_CASE("a GPU NVML has lost reads 0 in gpusched_agent_gpu_up and drops the reading that failed") {
  ScopedEnv fail("GPUSCHED_FAKE_NVML_FAIL", "nvmlDeviceGetUtilizationRates:0");
  auto sampler = NvmlGpuSampler::Open(GPUSCHED_FAKE_NVML);
  REQUIRE(sampler.ok());
  GpuCollector collector("gpu07", sampler->get());
  const std::string text = Scrape(collector);
  INFO(text);
  CHECK(FindMetric(text, "gpusched_agent_gpu_up", {{"gpu", "0"}}) == 0);
  CHECK(FindMetric(text, "gpusched_agent_gpu_up", {{"gpu", "1"}}) == 1);
  CHECK_FALSE(FindMetric(text, "DCGM_FI_DEV_GPU_UTIL", {{"gpu", "0"}}).has_value());
  CHECK(FindMetric(text, "DCGM_FI_DEV_GPU_UTIL", {{"gpu", "1"}}) == 15);
  CHECK(FindMetric(text, "DCGM_FI_DEV_GPU_TEMP", {{"gpu", "0"}}) == 30);
}

TEST_CASE("what the agent runs is read at each scrape") {
  AgentCollector::Status status{2, 9, true};
  AgentCollector collector("gpu07", [&] { return status; });
  std::string text = Scrape(collector);
  CHECK(FindMetric(text, "gpusched_agent_running_jobs", {{"node", "gpu07"}}) == 2);
  CHECK(FindMetric(text, "gpusched_agent_running_ranks", {{"node", "gpu07"}}) == 9);
  CHECK(FindMetric(text, "gpusched_agent_connected", {{"node", "gpu07"}}) == 1);
  status = {0, 0, false};
  text = Scrape(collector);
  CHECK(FindMetric(text, "gpusched_agent_running_jobs") == 0);
  CHECK(FindMetric(text, "gpusched_agent_connected") == 0);
}

}  // namespace
}  // namespace gpusched::agent
