#pragma once

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent/gpu/nvml_api.h"

namespace gpusched::agent {

// The NVML entry points discovery and GPU metrics call. Required ones are never null;
// optional ones are null when the installed driver predates them, and the
// caller then leaves what they would tell unknown.
struct NvmlApi {
  // Required.
  nvml::nvmlInit_v2_fn* init = nullptr;
  nvml::nvmlShutdown_fn* shutdown = nullptr;
  nvml::nvmlErrorString_fn* error_string = nullptr;
  nvml::nvmlDeviceGetCount_v2_fn* device_count = nullptr;
  nvml::nvmlDeviceGetHandleByIndex_v2_fn* handle_by_index = nullptr;
  nvml::nvmlDeviceGetUUID_fn* uuid = nullptr;
  nvml::nvmlDeviceGetName_fn* name = nullptr;
  nvml::nvmlDeviceGetMemoryInfo_fn* memory_info = nullptr;
  nvml::nvmlDeviceGetPciInfo_v3_fn* pci_info = nullptr;
  // Optional.
  nvml::nvmlDeviceGetNvLinkState_fn* nvlink_state = nullptr;
  nvml::nvmlDeviceGetNvLinkRemotePciInfo_v2_fn* nvlink_remote_pci = nullptr;
  nvml::nvmlDeviceGetNvLinkRemoteDeviceType_fn* nvlink_remote_type = nullptr;
  nvml::nvmlDeviceGetTopologyCommonAncestor_fn* common_ancestor = nullptr;
  nvml::nvmlDeviceGetP2PStatus_fn* p2p_status = nullptr;
  nvml::nvmlDeviceGetCpuAffinity_fn* cpu_affinity = nullptr;
  nvml::nvmlDeviceGetMigMode_fn* mig_mode = nullptr;
  // A MIG-mode GPU's devices (R470 and later).
  nvml::nvmlDeviceGetMaxMigDeviceCount_fn* max_mig_devices = nullptr;
  nvml::nvmlDeviceGetMigDeviceHandleByIndex_fn* mig_device_by_index = nullptr;
  nvml::nvmlDeviceGetInstanceId_fn* gpu_instance_id = nullptr;
  nvml::nvmlDeviceGetInstanceId_fn* compute_instance_id = nullptr;
  nvml::nvmlDeviceGetAttributes_v2_fn* attributes = nullptr;
  nvml::nvmlDeviceGetCudaComputeCapability_fn* compute_capability = nullptr;
  nvml::nvmlDeviceGetPcieLink_fn* max_pcie_generation = nullptr;
  nvml::nvmlDeviceGetPcieLink_fn* curr_pcie_generation = nullptr;
  nvml::nvmlDeviceGetPcieLink_fn* max_pcie_width = nullptr;
  nvml::nvmlDeviceGetPcieLink_fn* curr_pcie_width = nullptr;
  nvml::nvmlDeviceGetGpuFabricInfo_fn* fabric_info = nullptr;
  // Optional, for metrics (NvmlGpuSampler); GPUs and drivers that lack one
  // simply leave that reading out.
  nvml::nvmlDeviceGetUtilizationRates_fn* utilization_rates = nullptr;
  nvml::nvmlDeviceGetTemperature_fn* temperature = nullptr;
  nvml::nvmlDeviceGetPowerUsage_fn* power_usage = nullptr;
};

// libnvidia-ml opened with dlopen and initialised. The agent links no NVIDIA
// library, so that it starts (and runs CPU jobs) on nodes without a driver.
class NvmlLibrary {
 public:
  static constexpr char kDefaultPath[] = "libnvidia-ml.so.1";

  // Unavailable, naming `path`, when the library cannot be loaded (the
  // dlerror text says why), lacks a required function, or nvmlInit_v2 fails
  // (no driver loaded, no permission, ...). `path` is a soname searched the
  // usual way or an absolute path (tests load a fake).
  static absl::StatusOr<std::unique_ptr<NvmlLibrary>> Open(const std::string& path);

  // nvmlShutdown and dlclose.
  ~NvmlLibrary();
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

  const NvmlApi& api() const { return api_; }
  const std::string& path() const { return path_; }

  // OK for NVML_SUCCESS; otherwise a status whose message names `call` and
  // carries NVML's own error text, e.g. "nvmlDeviceGetMemoryInfo (GPU 3): GPU
  // is lost (NVML error 15)". The code follows the error: Unavailable for a
  // missing driver, PermissionDenied, Unimplemented for NOT_SUPPORTED, ...
  absl::Status Check(nvml::nvmlReturn_t rc, absl::string_view call) const;

 private:
  NvmlLibrary(void* handle, std::string path, const NvmlApi& api);

  void* handle_;
  std::string path_;
  NvmlApi api_;
};

}  // namespace gpusched::agent
