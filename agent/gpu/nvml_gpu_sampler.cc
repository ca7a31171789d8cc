#include "agent/gpu/nvml_gpu_sampler.h"

#include <cstring>

#include "absl/strings/str_cat.h"

namespace gpusched::agent {
namespace {

using nvml::NVML_SUCCESS;

// Far above any real node; keeps a corrupt count from allocating gigabytes.
constexpr unsigned kMaxGpus = 1024;

std::string ForGpu(const char* call, int index) { return absl::StrCat(call, " (GPU ", index, ")"); }

std::string FromBuffer(const char* data, size_t size) { return std::string(data, strnlen(data, size)); }

// A reading the GPU does not offer (NOT_SUPPORTED, e.g. power on many
// consumer boards) is left out; any other failure marks the GPU unwell.
bool Unsupported(nvml::nvmlReturn_t rc) {
  return rc == nvml::NVML_ERROR_NOT_SUPPORTED || rc == nvml::NVML_ERROR_FUNCTION_NOT_FOUND;
}

}  // namespace

absl::StatusOr<std::unique_ptr<NvmlGpuSampler>> NvmlGpuSampler::Open(const std::string& library) {
  auto nvml = NvmlLibrary::Open(library);
  if (!nvml.ok()) return nvml.status();
  const NvmlApi& api = (*nvml)->api();
  unsigned count = 0;
  if (absl::Status s = (*nvml)->Check(api.device_count(&count), "nvmlDeviceGetCount_v2"); !s.ok()) return s;
  if (count > kMaxGpus) return absl::InternalError(absl::StrCat("NVML reports ", count, " GPUs"));
  std::vector<Gpu> gpus(count);
  for (unsigned i = 0; i < count; ++i) {
    Gpu& gpu = gpus[i];
    const int index = static_cast<int>(i);
    gpu.identity.index = index;
    if (absl::Status s =
            (*nvml)->Check(api.handle_by_index(i, &gpu.handle), ForGpu("nvmlDeviceGetHandleByIndex_v2", index));
        !s.ok()) {
      return s;
    }
    char uuid[nvml::kUuidBufferSize] = {};
    if (absl::Status s = (*nvml)->Check(api.uuid(gpu.handle, uuid, sizeof uuid), ForGpu("nvmlDeviceGetUUID", index));
        !s.ok()) {
      return s;
    }
    gpu.identity.uuid = FromBuffer(uuid, sizeof uuid);
    char name[nvml::kNameBufferSize] = {};
    if (absl::Status s = (*nvml)->Check(api.name(gpu.handle, name, sizeof name), ForGpu("nvmlDeviceGetName", index));
        !s.ok()) {
      return s;
    }
    gpu.identity.model = FromBuffer(name, sizeof name);
    nvml::nvmlPciInfo_t pci{};
    if (api.pci_info(gpu.handle, &pci) == NVML_SUCCESS)
      gpu.identity.pci_bus_id = FromBuffer(pci.busId, sizeof pci.busId);
  }
  return std::unique_ptr<NvmlGpuSampler>(new NvmlGpuSampler(*std::move(nvml), std::move(gpus)));
}

std::vector<GpuSample> NvmlGpuSampler::Sample() const {
  std::vector<GpuSample> samples;
  samples.reserve(gpus_.size());
  for (const Gpu& gpu : gpus_) samples.push_back(Read(gpu));
  return samples;
}

GpuSample NvmlGpuSampler::Read(const Gpu& gpu) const {
  const NvmlApi& api = nvml_->api();
  GpuSample out = gpu.identity;
  const int index = gpu.identity.index;
  // Keeps the first failure; the other readings are still taken.
  auto ok = [&](nvml::nvmlReturn_t rc, const char* call) {
    if (rc == NVML_SUCCESS) return true;
    if (!Unsupported(rc) && out.status.ok()) out.status = nvml_->Check(rc, ForGpu(call, index));
    return false;
  };
  if (api.utilization_rates != nullptr) {
    nvml::nvmlUtilization_t utilization{};
    if (ok(api.utilization_rates(gpu.handle, &utilization), "nvmlDeviceGetUtilizationRates")) {
      out.gpu_utilization_percent = utilization.gpu;
      out.memory_utilization_percent = utilization.memory;
    }
  }
  nvml::nvmlMemory_t memory{};
  if (ok(api.memory_info(gpu.handle, &memory), "nvmlDeviceGetMemoryInfo")) {
    out.memory_used_bytes = memory.used;
    out.memory_free_bytes = memory.free;
  }
  unsigned value = 0;
  if (api.temperature != nullptr &&
      ok(api.temperature(gpu.handle, nvml::NVML_TEMPERATURE_GPU, &value), "nvmlDeviceGetTemperature")) {
    out.temperature_celsius = value;
  }
  if (api.power_usage != nullptr && ok(api.power_usage(gpu.handle, &value), "nvmlDeviceGetPowerUsage")) {
    out.power_watts = value / 1000.0;  // NVML reports milliwatts
  }
  return out;
}

}  // namespace gpusched::agent
