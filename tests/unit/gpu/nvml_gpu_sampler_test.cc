#include "agent/gpu/nvml_gpu_sampler.h"

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "tests/unit/gpu/scoped_env.h"

using gpusched::agent::GpuSample;
using gpusched::agent::NvmlGpuSampler;
using gpusched::testing::ScopedEnv;

// The fake libnvidia-ml answers live readings as a fixed function of the GPU
// index (fake_nvml.cc): utilization 10*i+5 %, memory utilization 2*i+1 %,
// 512 MiB used, 30+i C, 100.5+i W.

TEST_CASE("NVML readings of every GPU come back with the GPU's identity") {
  ScopedEnv machine("GPUSCHED_FAKE_NVML_MACHINE", "hgx-h100");
  auto sampler = NvmlGpuSampler::Open(GPUSCHED_FAKE_NVML);
  INFO(sampler.status().message());
  REQUIRE(sampler.ok());
  std::vector<GpuSample> samples = (*sampler)->Sample();
  REQUIRE(samples.size() == 8);
  const GpuSample& s = samples[3];
  CHECK(s.status.ok());
  CHECK(s.index == 3);
  CHECK(s.uuid == "GPU-h100beef-0000-4000-8000-000000000003");
  CHECK(s.model == "NVIDIA H100 80GB HBM3");
  CHECK(s.pci_bus_id == "00000000:5D:00.0");
  CHECK(s.gpu_utilization_percent == 35);
  CHECK(s.memory_utilization_percent == 7);
  CHECK(s.memory_used_bytes == 512ULL << 20);
  CHECK(s.memory_free_bytes == 85520809984ULL - (512ULL << 20));
  CHECK(s.temperature_celsius == 33);
  CHECK(s.power_watts == 103.5);
  // Read afresh each time, not cached from the first call.
  CHECK((*sampler)->Sample()[7].temperature_celsius == 37);
}

TEST_CASE("a reading the GPU does not support is left out, and the GPU is still well") {
  ScopedEnv unsupported("GPUSCHED_FAKE_NVML_UNSUPPORTED", "nvmlDeviceGetPowerUsage");
  auto sampler = NvmlGpuSampler::Open(GPUSCHED_FAKE_NVML);
  REQUIRE(sampler.ok());
  const GpuSample s = (*sampler)->Sample()[0];
  CHECK(s.status.ok());
  CHECK_FALSE(s.power_watts.has_value());
  CHECK(s.temperature_celsius == 30);
}

TEST_CASE("a GPU that stops answering is marked, with NVML's reason, and the others are read") {
  ScopedEnv fail("GPUSCHED_FAKE_NVML_FAIL", "nvmlDeviceGetTemperature:2");
  auto sampler = NvmlGpuSampler::Open(GPUSCHED_FAKE_NVML);
  REQUIRE(sampler.ok());
  std::vector<GpuSample> samples = (*sampler)->Sample();
  REQUIRE(samples.size() == 8);
  CHECK_FALSE(samples[2].status.ok());
  INFO(samples[2].status.message());
  CHECK(absl::StrContains(samples[2].status.message(), "nvmlDeviceGetTemperature (GPU 2): GPU is lost"));
  CHECK_FALSE(samples[2].temperature_celsius.has_value());
  CHECK(samples[2].power_watts == 102.5);  // the rest of its readings still taken
  CHECK(samples[1].status.ok());
  CHECK(samples[1].temperature_celsius == 31);
}

TEST_CASE("without NVML there is no sampler, and the reason says why") {
  auto sampler = NvmlGpuSampler::Open("/nonexistent/libnvidia-ml.so.1");
  REQUIRE_FALSE(sampler.ok());
  CHECK(sampler.status().code() == absl::StatusCode::kUnavailable);
}

TEST_CASE("an old driver's library gives the same readings") {
  auto sampler = NvmlGpuSampler::Open(GPUSCHED_FAKE_NVML_OLD);
  REQUIRE(sampler.ok());
  const GpuSample s = (*sampler)->Sample()[1];
  CHECK(s.status.ok());
  CHECK(s.gpu_utilization_percent == 15);
}
