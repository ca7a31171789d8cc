#include "agent/metrics/gpu_collector.h"

#include <functional>
#include <optional>

#include "absl/strings/str_cat.h"

namespace gpusched::agent {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

struct Field {
  const char* name;
  const char* help;  // DCGM exporter's own wording
  std::function<std::optional<double>(const GpuSample&)> read;
};

std::optional<double> Mib(const std::optional<uint64_t>& bytes) {
  if (!bytes.has_value()) return std::nullopt;
  return static_cast<double>(*bytes) / kMiB;
}

const std::vector<Field>& Fields() {
  static const std::vector<Field> fields = {
      {"DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", [](const GpuSample& s) { return s.gpu_utilization_percent; }},
      {"DCGM_FI_DEV_MEM_COPY_UTIL", "Memory utilization (in %).",
       [](const GpuSample& s) { return s.memory_utilization_percent; }},
      {"DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).",
       [](const GpuSample& s) { return Mib(s.memory_used_bytes); }},
      {"DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).",
       [](const GpuSample& s) { return Mib(s.memory_free_bytes); }},
      {"DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).", [](const GpuSample& s) { return s.temperature_celsius; }},
      {"DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", [](const GpuSample& s) { return s.power_watts; }},
      {"gpusched_agent_gpu_up", "1 when NVML answered for the GPU at this scrape, 0 when it reported an error",
       [](const GpuSample& s) { return std::optional<double>(s.status.ok() ? 1.0 : 0.0); }},
  };
  return fields;
}

std::vector<prometheus::ClientMetric::Label> LabelsOf(const GpuSample& s, const std::string& hostname) {
  // In the order DCGM exporter writes them.
  return {{"gpu", absl::StrCat(s.index)}, {"UUID", s.uuid},
          {"pci_bus_id", s.pci_bus_id},   {"device", absl::StrCat("nvidia", s.index)},
          {"modelName", s.model},         {"Hostname", hostname}};
}

}  // namespace

std::vector<prometheus::MetricFamily> GpuCollector::Collect() const {
  const std::vector<GpuSample> samples = sampler_->Sample();
  std::vector<prometheus::MetricFamily> families;
  for (const Field& field : Fields()) {
    prometheus::MetricFamily family;
    family.name = field.name;
    family.help = field.help;
    family.type = prometheus::MetricType::Gauge;
    for (const GpuSample& sample : samples) {
      std::optional<double> value = field.read(sample);
      if (!value.has_value()) continue;
      prometheus::ClientMetric metric;
      metric.label = LabelsOf(sample, hostname_);
      metric.gauge.value = *value;
      family.metric.push_back(std::move(metric));
    }
    if (!family.metric.empty()) families.push_back(std::move(family));
  }
  return families;
}

}  // namespace gpusched::agent
