#pragma once

// The few parts of NVML's C API that discovery and the agent's GPU metrics
// use, declared by this project
// so that the agent builds without the CUDA toolkit or the driver and loads
// libnvidia-ml at run time (nvml_library.h). Names, values and layouts follow
// NVML's documented ABI; only what we call is here. The fake library in
// tests/unit/gpu/fake_nvml implements the same functions from this header.

#include <cstdint>

namespace gpusched::nvml {

using nvmlReturn_t = int;
inline constexpr nvmlReturn_t NVML_SUCCESS = 0;
inline constexpr nvmlReturn_t NVML_ERROR_UNINITIALIZED = 1;
inline constexpr nvmlReturn_t NVML_ERROR_INVALID_ARGUMENT = 2;
inline constexpr nvmlReturn_t NVML_ERROR_NOT_SUPPORTED = 3;
inline constexpr nvmlReturn_t NVML_ERROR_NO_PERMISSION = 4;
inline constexpr nvmlReturn_t NVML_ERROR_NOT_FOUND = 6;
inline constexpr nvmlReturn_t NVML_ERROR_INSUFFICIENT_SIZE = 7;
inline constexpr nvmlReturn_t NVML_ERROR_DRIVER_NOT_LOADED = 9;
inline constexpr nvmlReturn_t NVML_ERROR_TIMEOUT = 10;
inline constexpr nvmlReturn_t NVML_ERROR_LIBRARY_NOT_FOUND = 12;
inline constexpr nvmlReturn_t NVML_ERROR_FUNCTION_NOT_FOUND = 13;
inline constexpr nvmlReturn_t NVML_ERROR_GPU_IS_LOST = 15;
inline constexpr nvmlReturn_t NVML_ERROR_UNKNOWN = 999;

// Opaque; only ever passed back to the library.
struct nvmlDevice_st;
using nvmlDevice_t = nvmlDevice_st*;

inline constexpr unsigned kUuidBufferSize = 96;      // NVML_DEVICE_UUID_V2_BUFFER_SIZE
inline constexpr unsigned kNameBufferSize = 96;      // NVML_DEVICE_NAME_V2_BUFFER_SIZE
inline constexpr unsigned kPciBusIdBufferSize = 32;  // NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE
inline constexpr unsigned kPciBusIdLegacySize = 16;  // NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE
inline constexpr unsigned kNvLinkMaxLinks = 18;      // NVML_NVLINK_MAX_LINKS (Hopper and later)
inline constexpr unsigned kFabricUuidLen = 16;       // NVML_GPU_FABRIC_UUID_LEN

struct nvmlPciInfo_t {
  char busIdLegacy[kPciBusIdLegacySize];  // "0000:07:00.0"
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;  // device id << 16 | vendor id
  unsigned int pciSubSystemId;
  char busId[kPciBusIdBufferSize];  // "00000000:07:00.0"
};

struct nvmlMemory_t {
  unsigned long long total;  // bytes
  unsigned long long free;
  unsigned long long used;
};

// nvmlDeviceGetUtilizationRates: percent of the last sample period (1/6 s
// to 1 s, by product) in which a kernel ran / device memory was read or written.
struct nvmlUtilization_t {
  unsigned int gpu;
  unsigned int memory;
};

// nvmlDeviceGetTemperature's sensor; the GPU die is the only one.
using nvmlTemperatureSensors_t = int;
inline constexpr nvmlTemperatureSensors_t NVML_TEMPERATURE_GPU = 0;

using nvmlEnableState_t = int;
inline constexpr nvmlEnableState_t NVML_FEATURE_DISABLED = 0;
inline constexpr nvmlEnableState_t NVML_FEATURE_ENABLED = 1;

// nvmlDeviceGetMigMode's current/pending mode.
inline constexpr unsigned NVML_DEVICE_MIG_DISABLE = 0;
inline constexpr unsigned NVML_DEVICE_MIG_ENABLE = 1;

// How far apart two GPUs are on PCIe (nvmlDeviceGetTopologyCommonAncestor).
using nvmlGpuTopologyLevel_t = int;
inline constexpr nvmlGpuTopologyLevel_t NVML_TOPOLOGY_INTERNAL = 0;
inline constexpr nvmlGpuTopologyLevel_t NVML_TOPOLOGY_SINGLE = 10;
inline constexpr nvmlGpuTopologyLevel_t NVML_TOPOLOGY_MULTIPLE = 20;
inline constexpr nvmlGpuTopologyLevel_t NVML_TOPOLOGY_HOSTBRIDGE = 30;
inline constexpr nvmlGpuTopologyLevel_t NVML_TOPOLOGY_NODE = 40;
inline constexpr nvmlGpuTopologyLevel_t NVML_TOPOLOGY_SYSTEM = 50;

using nvmlGpuP2PCapsIndex_t = int;
inline constexpr nvmlGpuP2PCapsIndex_t NVML_P2P_CAPS_INDEX_READ = 0;
inline constexpr nvmlGpuP2PCapsIndex_t NVML_P2P_CAPS_INDEX_WRITE = 1;
inline constexpr nvmlGpuP2PCapsIndex_t NVML_P2P_CAPS_INDEX_NVLINK = 2;
inline constexpr nvmlGpuP2PCapsIndex_t NVML_P2P_CAPS_INDEX_ATOMICS = 3;
inline constexpr nvmlGpuP2PCapsIndex_t NVML_P2P_CAPS_INDEX_PCI = 4;

// Every value other than OK names a reason P2P does not work.
using nvmlGpuP2PStatus_t = int;
inline constexpr nvmlGpuP2PStatus_t NVML_P2P_STATUS_OK = 0;
inline constexpr nvmlGpuP2PStatus_t NVML_P2P_STATUS_CHIPSET_NOT_SUPPORTED = 1;
inline constexpr nvmlGpuP2PStatus_t NVML_P2P_STATUS_GPU_NOT_SUPPORTED = 2;
inline constexpr nvmlGpuP2PStatus_t NVML_P2P_STATUS_NOT_SUPPORTED = 5;

// What the far end of an NVLink is.
using nvmlIntNvLinkDeviceType_t = int;
inline constexpr nvmlIntNvLinkDeviceType_t NVML_NVLINK_DEVICE_TYPE_GPU = 0x00;
inline constexpr nvmlIntNvLinkDeviceType_t NVML_NVLINK_DEVICE_TYPE_IBMNPU = 0x01;
inline constexpr nvmlIntNvLinkDeviceType_t NVML_NVLINK_DEVICE_TYPE_SWITCH = 0x02;
inline constexpr nvmlIntNvLinkDeviceType_t NVML_NVLINK_DEVICE_TYPE_UNKNOWN = 0xFF;

// Multi-node NVLink membership (nvmlDeviceGetGpuFabricInfo). Older drivers
// called cliqueId partitionId; the layout is the same.
using nvmlGpuFabricState_t = unsigned char;
inline constexpr nvmlGpuFabricState_t NVML_GPU_FABRIC_STATE_NOT_SUPPORTED = 0;
inline constexpr nvmlGpuFabricState_t NVML_GPU_FABRIC_STATE_NOT_STARTED = 1;
inline constexpr nvmlGpuFabricState_t NVML_GPU_FABRIC_STATE_IN_PROGRESS = 2;
inline constexpr nvmlGpuFabricState_t NVML_GPU_FABRIC_STATE_COMPLETED = 3;

struct nvmlGpuFabricInfo_t {
  unsigned char clusterUuid[kFabricUuidLen];
  nvmlReturn_t status;  // meaningful only once state is COMPLETED
  unsigned int cliqueId;
  nvmlGpuFabricState_t state;
};

// nvmlDeviceGetAttributes_v2, asked of a MIG device handle.
struct nvmlDeviceAttributes_t {
  unsigned int multiprocessorCount;
  unsigned int sharedCopyEngineCount;
  unsigned int sharedDecoderCount;
  unsigned int sharedEncoderCount;
  unsigned int sharedJpegCount;
  unsigned int sharedOfaCount;
  unsigned int gpuInstanceSliceCount;
  unsigned int computeInstanceSliceCount;
  unsigned long long memorySizeMB;
};

// Function types, one per symbol we look up; the symbol names are next to
// the lookups in nvml_library.cc. All NVML functions have C linkage.
using nvmlInit_v2_fn = nvmlReturn_t();
using nvmlShutdown_fn = nvmlReturn_t();
using nvmlErrorString_fn = const char*(nvmlReturn_t);
using nvmlDeviceGetCount_v2_fn = nvmlReturn_t(unsigned int* count);
using nvmlDeviceGetHandleByIndex_v2_fn = nvmlReturn_t(unsigned int index, nvmlDevice_t* device);
using nvmlDeviceGetUUID_fn = nvmlReturn_t(nvmlDevice_t device, char* uuid, unsigned int length);
using nvmlDeviceGetName_fn = nvmlReturn_t(nvmlDevice_t device, char* name, unsigned int length);
using nvmlDeviceGetMemoryInfo_fn = nvmlReturn_t(nvmlDevice_t device, nvmlMemory_t* memory);
using nvmlDeviceGetPciInfo_v3_fn = nvmlReturn_t(nvmlDevice_t device, nvmlPciInfo_t* pci);
using nvmlDeviceGetNvLinkState_fn = nvmlReturn_t(nvmlDevice_t device, unsigned int link, nvmlEnableState_t* is_active);
using nvmlDeviceGetNvLinkRemotePciInfo_v2_fn = nvmlReturn_t(nvmlDevice_t device, unsigned int link, nvmlPciInfo_t* pci);
using nvmlDeviceGetNvLinkRemoteDeviceType_fn = nvmlReturn_t(nvmlDevice_t device, unsigned int link,
                                                            nvmlIntNvLinkDeviceType_t* type);
using nvmlDeviceGetTopologyCommonAncestor_fn = nvmlReturn_t(nvmlDevice_t device1, nvmlDevice_t device2,
                                                            nvmlGpuTopologyLevel_t* path_info);
using nvmlDeviceGetP2PStatus_fn = nvmlReturn_t(nvmlDevice_t device1, nvmlDevice_t device2, nvmlGpuP2PCapsIndex_t index,
                                               nvmlGpuP2PStatus_t* status);
using nvmlDeviceGetCpuAffinity_fn = nvmlReturn_t(nvmlDevice_t device, unsigned int cpu_set_size,
                                                 unsigned long* cpu_set);
using nvmlDeviceGetMigMode_fn = nvmlReturn_t(nvmlDevice_t device, unsigned int* current_mode,
                                             unsigned int* pending_mode);
using nvmlDeviceGetMaxMigDeviceCount_fn = nvmlReturn_t(nvmlDevice_t device, unsigned int* count);
using nvmlDeviceGetMigDeviceHandleByIndex_fn = nvmlReturn_t(nvmlDevice_t device, unsigned int index,
                                                            nvmlDevice_t* mig_device);
using nvmlDeviceGetInstanceId_fn = nvmlReturn_t(nvmlDevice_t mig_device, unsigned int* id);
using nvmlDeviceGetAttributes_v2_fn = nvmlReturn_t(nvmlDevice_t mig_device, nvmlDeviceAttributes_t* attributes);
using nvmlDeviceGetCudaComputeCapability_fn = nvmlReturn_t(nvmlDevice_t device, int* major, int* minor);
using nvmlDeviceGetPcieLink_fn = nvmlReturn_t(nvmlDevice_t device, unsigned int* value);
using nvmlDeviceGetGpuFabricInfo_fn = nvmlReturn_t(nvmlDevice_t device, nvmlGpuFabricInfo_t* info);
using nvmlDeviceGetUtilizationRates_fn = nvmlReturn_t(nvmlDevice_t device, nvmlUtilization_t* utilization);
using nvmlDeviceGetTemperature_fn = nvmlReturn_t(nvmlDevice_t device, nvmlTemperatureSensors_t sensor,
                                                 unsigned int* celsius);
using nvmlDeviceGetPowerUsage_fn = nvmlReturn_t(nvmlDevice_t device, unsigned int* milliwatts);

}  // namespace gpusched::nvml
