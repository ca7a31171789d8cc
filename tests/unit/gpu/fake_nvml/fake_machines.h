#pragma once

#include <array>
#include <string>
#include <vector>

// Scripted answers for the fake libnvidia-ml: a few real machine layouts,
// described the way NVML reports them.
namespace gpusched::fake_nvml {

struct FakeLink {
  int type = 0;            // nvmlIntNvLinkDeviceType_t of the far end
  std::string remote_bus;  // the far end's busId; may be empty
};

// A MIG device of a GPU in MIG mode.
struct FakeMig {
  unsigned index = 0;  // nvmlDeviceGetMigDeviceHandleByIndex's index
  std::string uuid;
  std::string profile;  // named "<GPU name> MIG <profile>"
  unsigned gpu_instance_id = 0, compute_instance_id = 0;
  unsigned slices = 0;
  unsigned long long memory_mb = 0;
};

struct FakeGpu {
  std::string uuid;
  std::string name;
  std::string bus_id;  // NVML form, "00000000:18:00.0"
  unsigned long long memory_bytes = 0;
  int cc_major = 0, cc_minor = 0;
  unsigned pcie_max_gen = 0, pcie_curr_gen = 0, pcie_width = 0;
  bool mig = false;           // MIG mode; asked only on MIG-capable machines
  std::vector<FakeMig> migs;  // its MIG devices, when in MIG mode
  std::vector<int> cpus;
  std::vector<FakeLink> links;  // active NVLinks, link 0 upwards
  bool fabric = false;          // answers nvmlDeviceGetGpuFabricInfo as COMPLETED
  std::array<unsigned char, 16> cluster_uuid{};
  unsigned clique = 0;
};

struct FakeMachine {
  std::string name;
  std::vector<FakeGpu> gpus;
  bool nvlink = true;        // false: NvLink queries answer NOT_SUPPORTED
  bool mig_capable = false;  // false: nvmlDeviceGetMigMode answers NOT_SUPPORTED
  // nvmlGpuTopologyLevel_t and nvmlGpuP2PStatus_t for i != j.
  std::vector<std::vector<int>> ancestor;
  std::vector<std::vector<int>> p2p;
};

// "hgx-h100" (also for an empty name), "dgx1-v100", "pcie-l40s",
// "gb200-nvl", "a100-mig"; nullptr for anything else.
const FakeMachine* FindMachine(const std::string& name);

}  // namespace gpusched::fake_nvml
