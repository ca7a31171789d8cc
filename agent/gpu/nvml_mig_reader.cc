#include "agent/gpu/nvml_mig_reader.h"

#include <array>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"

namespace gpusched::agent {
namespace {

using nvml::NVML_SUCCESS;

// More than any GPU has (7 on A100/H100); bounds a corrupt count.
constexpr unsigned kMaxMigDevices = 64;

}  // namespace

std::string MigProfileFromName(const std::string& name) {
  const size_t at = name.rfind(" MIG ");
  return at == std::string::npos ? "" : name.substr(at + 5);
}

std::vector<topology::MigDevice> ReadMigDevices(const NvmlApi& api, nvml::nvmlDevice_t gpu) {
  std::vector<topology::MigDevice> devices;
  if (api.max_mig_devices == nullptr || api.mig_device_by_index == nullptr) return devices;
  unsigned count = 0;
  if (api.max_mig_devices(gpu, &count) != NVML_SUCCESS) return devices;
  for (unsigned i = 0; i < count && i < kMaxMigDevices; ++i) {
    nvml::nvmlDevice_t mig = nullptr;
    // NOT_FOUND: no device at this index (the GPU is not fully partitioned).
    if (api.mig_device_by_index(gpu, i, &mig) != NVML_SUCCESS || mig == nullptr) continue;
    topology::MigDevice device;
    device.index = static_cast<int>(i);
    std::array<char, nvml::kUuidBufferSize> uuid{};
    if (api.uuid(mig, uuid.data(), uuid.size()) != NVML_SUCCESS) continue;
    device.uuid = std::string(uuid.data(), strnlen(uuid.data(), uuid.size()));
    if (device.uuid.empty()) continue;
    unsigned id = 0;
    if (api.gpu_instance_id != nullptr && api.gpu_instance_id(mig, &id) == NVML_SUCCESS) device.gpu_instance_id = id;
    if (api.compute_instance_id != nullptr && api.compute_instance_id(mig, &id) == NVML_SUCCESS) {
      device.compute_instance_id = static_cast<int>(id);
    }
    nvml::nvmlDeviceAttributes_t attributes{};
    if (api.attributes != nullptr && api.attributes(mig, &attributes) == NVML_SUCCESS) {
      device.slices = static_cast<int>(attributes.gpuInstanceSliceCount);
      device.memory_mb = static_cast<int64_t>(attributes.memorySizeMB);
    }
    nvml::nvmlMemory_t memory{};
    if (device.memory_mb == 0 && api.memory_info(mig, &memory) == NVML_SUCCESS) {
      device.memory_mb = static_cast<int64_t>(memory.total / (1024 * 1024));
    }
    std::array<char, nvml::kNameBufferSize> name{};
    if (api.name(mig, name.data(), name.size()) == NVML_SUCCESS) {
      device.profile = MigProfileFromName(std::string(name.data(), strnlen(name.data(), name.size())));
    }
    if (device.profile.empty() && device.slices > 0) {
      // NVIDIA's own naming: slices, then memory in whole GB, rounded up.
      device.profile = absl::StrCat(device.slices, "g.", (device.memory_mb + 1023) / 1024, "gb");
    }
    devices.push_back(std::move(device));
  }
  return devices;
}

}  // namespace gpusched::agent
