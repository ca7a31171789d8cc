#include "agent/gpu/nvml_library.h"

#include <dlfcn.h>

#include <utility>

#include "absl/strings/str_cat.h"

namespace gpusched::agent {
namespace {

template <typename Fn>
Fn* Lookup(void* handle, const char* symbol) {
  return reinterpret_cast<Fn*>(dlsym(handle, symbol));
}

// Binds every entry point; the name of the first missing required one, or
// empty when all of them are there.
std::string Bind(void* h, NvmlApi& api) {
  api.init = Lookup<nvml::nvmlInit_v2_fn>(h, "nvmlInit_v2");
  api.shutdown = Lookup<nvml::nvmlShutdown_fn>(h, "nvmlShutdown");
  api.error_string = Lookup<nvml::nvmlErrorString_fn>(h, "nvmlErrorString");
  api.device_count = Lookup<nvml::nvmlDeviceGetCount_v2_fn>(h, "nvmlDeviceGetCount_v2");
  api.handle_by_index = Lookup<nvml::nvmlDeviceGetHandleByIndex_v2_fn>(h, "nvmlDeviceGetHandleByIndex_v2");
  api.uuid = Lookup<nvml::nvmlDeviceGetUUID_fn>(h, "nvmlDeviceGetUUID");
  api.name = Lookup<nvml::nvmlDeviceGetName_fn>(h, "nvmlDeviceGetName");
  api.memory_info = Lookup<nvml::nvmlDeviceGetMemoryInfo_fn>(h, "nvmlDeviceGetMemoryInfo");
  api.pci_info = Lookup<nvml::nvmlDeviceGetPciInfo_v3_fn>(h, "nvmlDeviceGetPciInfo_v3");

  api.nvlink_state = Lookup<nvml::nvmlDeviceGetNvLinkState_fn>(h, "nvmlDeviceGetNvLinkState");
  api.nvlink_remote_pci =
      Lookup<nvml::nvmlDeviceGetNvLinkRemotePciInfo_v2_fn>(h, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
  api.nvlink_remote_type =
      Lookup<nvml::nvmlDeviceGetNvLinkRemoteDeviceType_fn>(h, "nvmlDeviceGetNvLinkRemoteDeviceType");
  api.common_ancestor = Lookup<nvml::nvmlDeviceGetTopologyCommonAncestor_fn>(h, "nvmlDeviceGetTopologyCommonAncestor");
  api.p2p_status = Lookup<nvml::nvmlDeviceGetP2PStatus_fn>(h, "nvmlDeviceGetP2PStatus");
  api.cpu_affinity = Lookup<nvml::nvmlDeviceGetCpuAffinity_fn>(h, "nvmlDeviceGetCpuAffinity");
  api.mig_mode = Lookup<nvml::nvmlDeviceGetMigMode_fn>(h, "nvmlDeviceGetMigMode");
  api.max_mig_devices = Lookup<nvml::nvmlDeviceGetMaxMigDeviceCount_fn>(h, "nvmlDeviceGetMaxMigDeviceCount");
  api.mig_device_by_index =
      Lookup<nvml::nvmlDeviceGetMigDeviceHandleByIndex_fn>(h, "nvmlDeviceGetMigDeviceHandleByIndex");
  api.gpu_instance_id = Lookup<nvml::nvmlDeviceGetInstanceId_fn>(h, "nvmlDeviceGetGpuInstanceId");
  api.compute_instance_id = Lookup<nvml::nvmlDeviceGetInstanceId_fn>(h, "nvmlDeviceGetComputeInstanceId");
  api.attributes = Lookup<nvml::nvmlDeviceGetAttributes_v2_fn>(h, "nvmlDeviceGetAttributes_v2");
  api.compute_capability = Lookup<nvml::nvmlDeviceGetCudaComputeCapability_fn>(h, "nvmlDeviceGetCudaComputeCapability");
  api.max_pcie_generation = Lookup<nvml::nvmlDeviceGetPcieLink_fn>(h, "nvmlDeviceGetMaxPcieLinkGeneration");
  api.curr_pcie_generation = Lookup<nvml::nvmlDeviceGetPcieLink_fn>(h, "nvmlDeviceGetCurrPcieLinkGeneration");
  api.max_pcie_width = Lookup<nvml::nvmlDeviceGetPcieLink_fn>(h, "nvmlDeviceGetMaxPcieLinkWidth");
  api.curr_pcie_width = Lookup<nvml::nvmlDeviceGetPcieLink_fn>(h, "nvmlDeviceGetCurrPcieLinkWidth");
  api.fabric_info = Lookup<nvml::nvmlDeviceGetGpuFabricInfo_fn>(h, "nvmlDeviceGetGpuFabricInfo");
  api.utilization_rates = Lookup<nvml::nvmlDeviceGetUtilizationRates_fn>(h, "nvmlDeviceGetUtilizationRates");
  api.temperature = Lookup<nvml::nvmlDeviceGetTemperature_fn>(h, "nvmlDeviceGetTemperature");
  api.power_usage = Lookup<nvml::nvmlDeviceGetPowerUsage_fn>(h, "nvmlDeviceGetPowerUsage");

  const std::pair<const void*, const char*> required[] = {
      {reinterpret_cast<const void*>(api.init), "nvmlInit_v2"},
      {reinterpret_cast<const void*>(api.shutdown), "nvmlShutdown"},
      {reinterpret_cast<const void*>(api.error_string), "nvmlErrorString"},
      {reinterpret_cast<const void*>(api.device_count), "nvmlDeviceGetCount_v2"},
      {reinterpret_cast<const void*>(api.handle_by_index), "nvmlDeviceGetHandleByIndex_v2"},
      {reinterpret_cast<const void*>(api.uuid), "nvmlDeviceGetUUID"},
      {reinterpret_cast<const void*>(api.name), "nvmlDeviceGetName"},
      {reinterpret_cast<const void*>(api.memory_info), "nvmlDeviceGetMemoryInfo"},
      {reinterpret_cast<const void*>(api.pci_info), "nvmlDeviceGetPciInfo_v3"},
  };
  for (const auto& [fn, symbol] : required) {
    if (fn == nullptr) return symbol;
  }
  return "";
}

absl::StatusCode CodeFor(nvml::nvmlReturn_t rc) {
  switch (rc) {
    case nvml::NVML_ERROR_DRIVER_NOT_LOADED:
    case nvml::NVML_ERROR_LIBRARY_NOT_FOUND: return absl::StatusCode::kUnavailable;
    case nvml::NVML_ERROR_NO_PERMISSION: return absl::StatusCode::kPermissionDenied;
    case nvml::NVML_ERROR_NOT_SUPPORTED:
    case nvml::NVML_ERROR_FUNCTION_NOT_FOUND: return absl::StatusCode::kUnimplemented;
    case nvml::NVML_ERROR_NOT_FOUND: return absl::StatusCode::kNotFound;
    case nvml::NVML_ERROR_INVALID_ARGUMENT: return absl::StatusCode::kInvalidArgument;
    case nvml::NVML_ERROR_TIMEOUT: return absl::StatusCode::kDeadlineExceeded;
    case nvml::NVML_ERROR_UNINITIALIZED: return absl::StatusCode::kFailedPrecondition;
    default: return absl::StatusCode::kInternal;
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<NvmlLibrary>> NvmlLibrary::Open(const std::string& path) {
  // RTLD_LOCAL: NVML's symbols must not satisfy lookups of anything else the
  // agent loads later.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return absl::UnavailableError(absl::StrCat("NVML not available: ", why != nullptr ? why : path));
  }
  NvmlApi api;
  std::string missing = Bind(handle, api);
  if (!missing.empty()) {
    dlclose(handle);
    return absl::UnavailableError(
        absl::StrCat("NVML not available: ", path, " has no ", missing, " (driver too old, or not libnvidia-ml)"));
  }
  // Constructed before init so that a failed init still dlcloses, but
  // shutdown must not run for an init that did not happen.
  std::unique_ptr<NvmlLibrary> lib(new NvmlLibrary(handle, path, api));
  nvml::nvmlReturn_t rc = api.init();
  if (rc != nvml::NVML_SUCCESS) {
    absl::Status failed = lib->Check(rc, "nvmlInit_v2");
    lib->api_.shutdown = nullptr;
    return absl::UnavailableError(absl::StrCat("NVML not available: ", path, ": ", failed.message()));
  }
  return lib;
}

NvmlLibrary::NvmlLibrary(void* handle, std::string path, const NvmlApi& api)
    : handle_(handle), path_(std::move(path)), api_(api) {}

NvmlLibrary::~NvmlLibrary() {
  if (api_.shutdown != nullptr) api_.shutdown();
  dlclose(handle_);
}

absl::Status NvmlLibrary::Check(nvml::nvmlReturn_t rc, absl::string_view call) const {
  if (rc == nvml::NVML_SUCCESS) return absl::OkStatus();
  const char* text = api_.error_string != nullptr ? api_.error_string(rc) : nullptr;
  return absl::Status(CodeFor(rc),
                      absl::StrCat(call, ": ", text != nullptr ? text : "unknown error", " (NVML error ", rc, ")"));
}

}  // namespace gpusched::agent
