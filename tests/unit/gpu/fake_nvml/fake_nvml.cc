// A stand-in for libnvidia-ml.so.1, loaded by tests through the agent's own
// dlopen path. It exports the NVML functions discovery uses and answers them
// from a scripted machine (fake_machines.h), chosen when nvmlInit_v2 runs:
//
//   GPUSCHED_FAKE_NVML_MACHINE  hgx-h100 (default), dgx1-v100, pcie-l40s,
//                               gb200-nvl; anything else fails init.
//   GPUSCHED_FAKE_NVML_FAIL     "<function>" or "<function>:<gpu index>":
//                               that call fails (nvmlInit_v2 with DRIVER
//                               NOT LOADED, anything else with GPU IS LOST).
//   GPUSCHED_FAKE_NVML_UNSUPPORTED  "<function>": that call answers NOT
//                               SUPPORTED on every GPU, as a reading a
//                               board lacks does.
//
// Live readings (utilization, temperature, power; memory used is 512 MiB)
// are fixed per GPU index i, so that tests can expect exact values:
// utilization 10*i+5 %, memory utilization 2*i+1 %, 30+i degrees C,
// 100.5+i W.
//
// Built a second time with FAKE_NVML_OLD_DRIVER, it lacks the functions
// newer drivers added, as an old libnvidia-ml does.

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "agent/gpu/nvml_api.h"
#include "tests/unit/gpu/fake_nvml/fake_machines.h"

using namespace gpusched::nvml;  // NOLINT: the exported API uses NVML's names
using gpusched::fake_nvml::FakeGpu;
using gpusched::fake_nvml::FakeMachine;

#define FAKE_NVML_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

const FakeMachine* g_machine = nullptr;
std::string g_fail_call;
int g_fail_gpu = -1;  // -1: every GPU
std::string g_unsupported_call;

bool Fails(const char* call, int gpu) { return g_fail_call == call && (g_fail_gpu < 0 || g_fail_gpu == gpu); }

int IndexOf(nvmlDevice_t device) {
  auto value = reinterpret_cast<std::uintptr_t>(device);
  if (g_machine == nullptr || value == 0 || value > g_machine->gpus.size()) return -1;
  return static_cast<int>(value - 1);
}

// MIG device handles: the GPU's handle with (position in FakeGpu::migs + 1)
// above bit 16. GPU calls reject them, as IndexOf sees no such GPU.
constexpr int kMigShift = 16;

// The MIG device `device` names, and its GPU; null for anything else.
const gpusched::fake_nvml::FakeMig* MigOf(nvmlDevice_t device, const FakeGpu** parent = nullptr) {
  auto value = reinterpret_cast<std::uintptr_t>(device);
  if (g_machine == nullptr) return nullptr;
  const std::uintptr_t gpu = (value & ((1u << kMigShift) - 1)), mig = value >> kMigShift;
  if (mig == 0 || gpu == 0 || gpu > g_machine->gpus.size()) return nullptr;
  const FakeGpu& g = g_machine->gpus[gpu - 1];
  if (mig > g.migs.size()) return nullptr;
  if (parent != nullptr) *parent = &g;
  return &g.migs[mig - 1];
}

// Resolves `device`, or says why the call fails.
nvmlReturn_t Gpu(nvmlDevice_t device, const char* call, const FakeGpu*& gpu, int* index = nullptr) {
  if (g_machine == nullptr) return NVML_ERROR_UNINITIALIZED;
  int i = IndexOf(device);
  if (i < 0) return NVML_ERROR_INVALID_ARGUMENT;
  if (Fails(call, i)) return NVML_ERROR_GPU_IS_LOST;
  gpu = &g_machine->gpus[i];
  if (index != nullptr) *index = i;
  return NVML_SUCCESS;
}

nvmlReturn_t CopyString(const std::string& value, char* out, unsigned length) {
  if (out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (value.size() + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(out, value.c_str(), value.size() + 1);
  return NVML_SUCCESS;
}

void FillPci(const std::string& bus_id, nvmlPciInfo_t* pci) {
  std::memset(pci, 0, sizeof *pci);
  std::strncpy(pci->busId, bus_id.c_str(), sizeof pci->busId - 1);
  unsigned domain = 0, bus = 0, dev = 0;
  if (std::sscanf(bus_id.c_str(), "%x:%x:%x", &domain, &bus, &dev) == 3) {
    pci->domain = domain;
    pci->bus = bus;
    pci->device = dev;
    std::snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04X:%02X:%02X.0", domain & 0xffff, bus, dev);
  }
  pci->pciDeviceId = 0x233010de;
}

nvmlReturn_t Pair(nvmlDevice_t a, nvmlDevice_t b, const char* call, int& i, int& j) {
  const FakeGpu* unused = nullptr;
  if (nvmlReturn_t rc = Gpu(a, call, unused, &i); rc != NVML_SUCCESS) return rc;
  if (nvmlReturn_t rc = Gpu(b, call, unused, &j); rc != NVML_SUCCESS) return rc;
  return NVML_SUCCESS;
}

nvmlReturn_t NvLink(nvmlDevice_t device, unsigned link, const char* call, const FakeGpu*& gpu) {
  if (nvmlReturn_t rc = Gpu(device, call, gpu); rc != NVML_SUCCESS) return rc;
  if (!g_machine->nvlink) return NVML_ERROR_NOT_SUPPORTED;
  if (link >= kNvLinkMaxLinks) return NVML_ERROR_INVALID_ARGUMENT;
  return NVML_SUCCESS;
}

}  // namespace

FAKE_NVML_EXPORT nvmlReturn_t nvmlInit_v2() {
  const char* fail = std::getenv("GPUSCHED_FAKE_NVML_FAIL");
  g_fail_call = fail != nullptr ? fail : "";
  g_fail_gpu = -1;
  if (size_t colon = g_fail_call.find(':'); colon != std::string::npos) {
    g_fail_gpu = std::atoi(g_fail_call.c_str() + colon + 1);
    g_fail_call.resize(colon);
  }
  const char* unsupported = std::getenv("GPUSCHED_FAKE_NVML_UNSUPPORTED");
  g_unsupported_call = unsupported != nullptr ? unsupported : "";
  if (g_fail_call == "nvmlInit_v2") return NVML_ERROR_DRIVER_NOT_LOADED;
  const char* name = std::getenv("GPUSCHED_FAKE_NVML_MACHINE");
  g_machine = gpusched::fake_nvml::FindMachine(name != nullptr ? name : "");
  return g_machine != nullptr ? NVML_SUCCESS : NVML_ERROR_NOT_FOUND;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlShutdown() {
  if (g_machine == nullptr) return NVML_ERROR_UNINITIALIZED;
  g_machine = nullptr;
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT const char* nvmlErrorString(nvmlReturn_t rc) {
  switch (rc) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_NOT_FOUND: return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
    default: return "Unknown Error";
  }
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  if (g_machine == nullptr) return NVML_ERROR_UNINITIALIZED;
  if (Fails("nvmlDeviceGetCount_v2", -1)) return NVML_ERROR_GPU_IS_LOST;
  *count = static_cast<unsigned>(g_machine->gpus.size());
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  if (g_machine == nullptr) return NVML_ERROR_UNINITIALIZED;
  if (index >= g_machine->gpus.size()) return NVML_ERROR_INVALID_ARGUMENT;
  if (Fails("nvmlDeviceGetHandleByIndex_v2", static_cast<int>(index))) return NVML_ERROR_GPU_IS_LOST;
  *device = reinterpret_cast<nvmlDevice_t>(static_cast<std::uintptr_t>(index) + 1);
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) {
  if (const auto* mig = MigOf(device)) return CopyString(mig->uuid, uuid, length);
  const FakeGpu* g = nullptr;
  if (nvmlReturn_t rc = Gpu(device, "nvmlDeviceGetUUID", g); rc != NVML_SUCCESS) return rc;
  return CopyString(g->uuid, uuid, length);
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
  const FakeGpu* parent = nullptr;
  if (const auto* mig = MigOf(device, &parent)) return CopyString(parent->name + " MIG " + mig->profile, name, length);
  const FakeGpu* g = nullptr;
  if (nvmlReturn_t rc = Gpu(device, "nvmlDeviceGetName", g); rc != NVML_SUCCESS) return rc;
  return CopyString(g->name, name, length);
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  if (const auto* mig = MigOf(device)) {
    memory->total = mig->memory_mb << 20;
    memory->used = 0;
    memory->free = memory->total;
    return NVML_SUCCESS;
  }
  const FakeGpu* g = nullptr;
  if (nvmlReturn_t rc = Gpu(device, "nvmlDeviceGetMemoryInfo", g); rc != NVML_SUCCESS) return rc;
  memory->total = g->memory_bytes;
  memory->used = 512ULL << 20;
  memory->free = g->memory_bytes - memory->used;
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  const FakeGpu* g = nullptr;
  if (nvmlReturn_t rc = Gpu(device, "nvmlDeviceGetPciInfo_v3", g); rc != NVML_SUCCESS) return rc;
  FillPci(g->bus_id, pci);
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link,
                                                       nvmlEnableState_t* active) {
  const FakeGpu* g = nullptr;
  if (nvmlReturn_t rc = NvLink(device, link, "nvmlDeviceGetNvLinkState", g); rc != NVML_SUCCESS) return rc;
  *active = link < g->links.size() ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device, unsigned int link,
                                                                  nvmlPciInfo_t* pci) {
  const FakeGpu* g = nullptr;
  if (nvmlReturn_t rc = NvLink(device, link, "nvmlDeviceGetNvLinkRemotePciInfo_v2", g); rc != NVML_SUCCESS) {
    return rc;
  }
  if (link >= g->links.size()) return NVML_ERROR_NOT_FOUND;
  FillPci(g->links[link].remote_bus, pci);
  return NVML_SUCCESS;
}

#ifndef FAKE_NVML_OLD_DRIVER
FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t device, unsigned int link,
                                                                  nvmlIntNvLinkDeviceType_t* type) {
  const FakeGpu* g = nullptr;
  if (nvmlReturn_t rc = NvLink(device, link, "nvmlDeviceGetNvLinkRemoteDeviceType", g); rc != NVML_SUCCESS) {
    return rc;
  }
  if (link >= g->links.size()) return NVML_ERROR_NOT_FOUND;
  *type = g->links[link].type;
  return NVML_SUCCESS;
}
#endif

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t a, nvmlDevice_t b,
                                                                  nvmlGpuTopologyLevel_t* level) {
  int i = 0, j = 0;
  if (nvmlReturn_t rc = Pair(a, b, "nvmlDeviceGetTopologyCommonAncestor", i, j); rc != NVML_SUCCESS) return rc;
  *level = i == j ? NVML_TOPOLOGY_INTERNAL : g_machine->ancestor[i][j];
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t a, nvmlDevice_t b, nvmlGpuP2PCapsIndex_t index,
                                                     nvmlGpuP2PStatus_t* status) {
  int i = 0, j = 0;
  if (nvmlReturn_t rc = Pair(a, b, "nvmlDeviceGetP2PStatus", i, j); rc != NVML_SUCCESS) return rc;
  if (index != NVML_P2P_CAPS_INDEX_READ && index != NVML_P2P_CAPS_INDEX_WRITE) return NVML_ERROR_INVALID_ARGUMENT;
  *status = i == j ? NVML_P2P_STATUS_OK : g_machine->p2p[i][j];
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCpuAffinity(nvmlDevice_t device, unsigned int size, unsigned long* set) {
  const FakeGpu* g = nullptr;
  if (nvmlReturn_t rc = Gpu(device, "nvmlDeviceGetCpuAffinity", g); rc != NVML_SUCCESS) return rc;
  constexpr unsigned kBits = 8 * sizeof(unsigned long);
  std::memset(set, 0, size * sizeof(unsigned long));
  for (int cpu : g->cpus) {
    if (static_cast<unsigned>(cpu) / kBits < size) set[cpu / kBits] |= 1UL << (cpu % kBits);
  }
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t device, unsigned int* value) {
  const FakeGpu* g = nullptr;
  if (nvmlReturn_t rc = Gpu(device, "nvmlDeviceGetCurrPcieLinkGeneration", g); rc != NVML_SUCCESS) return rc;
  *value = g->pcie_curr_gen;
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t device, unsigned int* value) {
  const FakeGpu* g = nullptr;
  if (nvmlReturn_t rc = Gpu(device, "nvmlDeviceGetCurrPcieLinkWidth", g); rc != NVML_SUCCESS) return rc;
  *value = g->pcie_width;
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t device, unsigned int* value) {
  const FakeGpu* g = nullptr;
  if (nvmlReturn_t rc = Gpu(device, "nvmlDeviceGetMaxPcieLinkWidth", g); rc != NVML_SUCCESS) return rc;
  *value = g->pcie_width;
  return NVML_SUCCESS;
}

#ifndef FAKE_NVML_OLD_DRIVER
FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t device, unsigned int* value) {
  const FakeGpu* g = nullptr;
  if (nvmlReturn_t rc = Gpu(device, "nvmlDeviceGetMaxPcieLinkGeneration", g); rc != NVML_SUCCESS) return rc;
  *value = g->pcie_max_gen;
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int* current, unsigned int* pending) {
  const FakeGpu* g = nullptr;
  if (nvmlReturn_t rc = Gpu(device, "nvmlDeviceGetMigMode", g); rc != NVML_SUCCESS) return rc;
  if (!g_machine->mig_capable) return NVML_ERROR_NOT_SUPPORTED;
  *current = *pending = g->mig ? NVML_DEVICE_MIG_ENABLE : NVML_DEVICE_MIG_DISABLE;
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int* count) {
  const FakeGpu* g = nullptr;
  if (nvmlReturn_t rc = Gpu(device, "nvmlDeviceGetMaxMigDeviceCount", g); rc != NVML_SUCCESS) return rc;
  if (!g_machine->mig_capable) return NVML_ERROR_NOT_SUPPORTED;
  *count = 7;  // A100/H100: seven compute slices
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index,
                                                                  nvmlDevice_t* mig) {
  const FakeGpu* g = nullptr;
  int i = 0;
  if (nvmlReturn_t rc = Gpu(device, "nvmlDeviceGetMigDeviceHandleByIndex", g, &i); rc != NVML_SUCCESS) return rc;
  if (!g->mig) return NVML_ERROR_INVALID_ARGUMENT;
  for (size_t k = 0; k < g->migs.size(); ++k) {
    if (g->migs[k].index != index) continue;
    *mig = reinterpret_cast<nvmlDevice_t>((static_cast<std::uintptr_t>(k + 1) << kMigShift) | (i + 1));
    return NVML_SUCCESS;
  }
  return NVML_ERROR_NOT_FOUND;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned int* id) {
  const auto* mig = MigOf(device);
  if (mig == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *id = mig->gpu_instance_id;
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t device, unsigned int* id) {
  const auto* mig = MigOf(device);
  if (mig == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *id = mig->compute_instance_id;
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetAttributes_v2(nvmlDevice_t device, nvmlDeviceAttributes_t* attributes) {
  const auto* mig = MigOf(device);
  if (mig == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  std::memset(attributes, 0, sizeof *attributes);
  attributes->multiprocessorCount = 14 * mig->slices;
  attributes->gpuInstanceSliceCount = mig->slices;
  attributes->computeInstanceSliceCount = mig->slices;
  attributes->memorySizeMB = mig->memory_mb;
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int* major, int* minor) {
  const FakeGpu* g = nullptr;
  if (nvmlReturn_t rc = Gpu(device, "nvmlDeviceGetCudaComputeCapability", g); rc != NVML_SUCCESS) return rc;
  *major = g->cc_major;
  *minor = g->cc_minor;
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetGpuFabricInfo(nvmlDevice_t device, nvmlGpuFabricInfo_t* info) {
  const FakeGpu* g = nullptr;
  if (nvmlReturn_t rc = Gpu(device, "nvmlDeviceGetGpuFabricInfo", g); rc != NVML_SUCCESS) return rc;
  // Single-node NVSwitch systems and PCIe GPUs have no fabric to report.
  if (!g->fabric) return NVML_ERROR_NOT_SUPPORTED;
  std::memcpy(info->clusterUuid, g->cluster_uuid.data(), sizeof info->clusterUuid);
  info->status = NVML_SUCCESS;
  info->cliqueId = g->clique;
  info->state = NVML_GPU_FABRIC_STATE_COMPLETED;
  return NVML_SUCCESS;
}
#endif

// Live readings: in every build, as even old drivers have them.
FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* utilization) {
  const FakeGpu* g = nullptr;
  int i = 0;
  if (nvmlReturn_t rc = Gpu(device, "nvmlDeviceGetUtilizationRates", g, &i); rc != NVML_SUCCESS) return rc;
  if (g_unsupported_call == "nvmlDeviceGetUtilizationRates") return NVML_ERROR_NOT_SUPPORTED;
  utilization->gpu = 10 * i + 5;
  utilization->memory = 2 * i + 1;
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensor,
                                                       unsigned int* celsius) {
  const FakeGpu* g = nullptr;
  int i = 0;
  if (nvmlReturn_t rc = Gpu(device, "nvmlDeviceGetTemperature", g, &i); rc != NVML_SUCCESS) return rc;
  if (sensor != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
  if (g_unsupported_call == "nvmlDeviceGetTemperature") return NVML_ERROR_NOT_SUPPORTED;
  *celsius = 30 + i;
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* milliwatts) {
  const FakeGpu* g = nullptr;
  int i = 0;
  if (nvmlReturn_t rc = Gpu(device, "nvmlDeviceGetPowerUsage", g, &i); rc != NVML_SUCCESS) return rc;
  if (g_unsupported_call == "nvmlDeviceGetPowerUsage") return NVML_ERROR_NOT_SUPPORTED;
  *milliwatts = 100500 + 1000 * i;
  return NVML_SUCCESS;
}
