#include "tests/unit/gpu/fake_nvml/fake_machines.h"

#include <cstdio>

#include "agent/gpu/nvml_api.h"

namespace gpusched::fake_nvml {
namespace {

using namespace gpusched::nvml;  // NOLINT: the constants read like the NVML docs

std::vector<int> Cpus(std::initializer_list<std::pair<int, int>> ranges) {
  std::vector<int> out;
  for (auto [first, last] : ranges) {
    for (int c = first; c <= last; ++c) out.push_back(c);
  }
  return out;
}

std::string Uuid(const char* prefix, int i) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "GPU-%s-0000-4000-8000-%012d", prefix, i);
  return buf;
}

std::string Bus(unsigned domain, unsigned bus) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%08X:%02X:00.0", domain, bus);
  return buf;
}

std::vector<std::vector<int>> Square(int n, int value) {
  return std::vector<std::vector<int>>(n, std::vector<int>(n, value));
}

// DGX H100 / HGX H100: 8 GPUs, each with 18 NVLinks spread 5/4/4/5 over four
// NVSwitches; GPUs 0-3 on socket 0, 4-7 on socket 1.
FakeMachine HgxH100() {
  FakeMachine m;
  m.name = "hgx-h100";
  m.mig_capable = true;
  const unsigned buses[8] = {0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb};
  const std::string switches[4] = {Bus(0, 0x05), Bus(0, 0x06), Bus(0, 0x07), Bus(0, 0x08)};
  const int per_switch[4] = {5, 4, 4, 5};
  for (int i = 0; i < 8; ++i) {
    FakeGpu g;
    g.uuid = Uuid("h100beef", i);
    g.name = "NVIDIA H100 80GB HBM3";
    g.bus_id = Bus(0, buses[i]);
    g.memory_bytes = 85520809984ULL;  // 81559 MiB
    g.cc_major = 9;
    g.cc_minor = 0;
    g.pcie_max_gen = 5;
    g.pcie_curr_gen = 1;  // idle
    g.pcie_width = 16;
    g.cpus = i < 4 ? Cpus({{0, 55}, {112, 167}}) : Cpus({{56, 111}, {168, 223}});
    for (int s = 0; s < 4; ++s) {
      for (int k = 0; k < per_switch[s]; ++k) g.links.push_back({NVML_NVLINK_DEVICE_TYPE_SWITCH, switches[s]});
    }
    m.gpus.push_back(g);
  }
  m.ancestor = Square(8, NVML_TOPOLOGY_SYSTEM);
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 8; ++j) {
      if (i / 4 == j / 4) m.ancestor[i][j] = NVML_TOPOLOGY_NODE;
    }
  }
  m.p2p = Square(8, NVML_P2P_STATUS_OK);
  return m;
}

// DGX-1 with V100: the hybrid cube mesh, NV1 and NV2 point to point, as in
// shared/fixtures/topo/dgx1-v100.txt; a PCIe switch per GPU pair.
FakeMachine Dgx1V100() {
  FakeMachine m;
  m.name = "dgx1-v100";
  const int nv[8][8] = {
      {0, 1, 1, 2, 2, 0, 0, 0}, {1, 0, 2, 1, 0, 2, 0, 0}, {1, 2, 0, 2, 0, 0, 1, 0}, {2, 1, 2, 0, 0, 0, 0, 1},
      {2, 0, 0, 0, 0, 1, 1, 2}, {0, 2, 0, 0, 1, 0, 2, 1}, {0, 0, 1, 0, 1, 2, 0, 2}, {0, 0, 0, 1, 2, 1, 2, 0},
  };
  const unsigned buses[8] = {0x06, 0x07, 0x0a, 0x0b, 0x85, 0x86, 0x89, 0x8a};
  for (int i = 0; i < 8; ++i) {
    FakeGpu g;
    g.uuid = Uuid("v100cafe", i);
    g.name = "Tesla V100-SXM2-32GB";
    g.bus_id = Bus(0, buses[i]);
    g.memory_bytes = 34089730048ULL;  // 32510 MiB
    g.cc_major = 7;
    g.cc_minor = 0;
    g.pcie_max_gen = 3;
    g.pcie_curr_gen = 3;
    g.pcie_width = 16;
    g.cpus = i < 4 ? Cpus({{0, 19}, {40, 59}}) : Cpus({{20, 39}, {60, 79}});
    m.gpus.push_back(g);
  }
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 8; ++j) {
      for (int k = 0; k < nv[i][j]; ++k) m.gpus[i].links.push_back({NVML_NVLINK_DEVICE_TYPE_GPU, m.gpus[j].bus_id});
    }
  }
  m.ancestor = Square(8, NVML_TOPOLOGY_SYSTEM);
  m.p2p = Square(8, NVML_P2P_STATUS_CHIPSET_NOT_SUPPORTED);
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 8; ++j) {
      if (i / 2 == j / 2) {
        m.ancestor[i][j] = NVML_TOPOLOGY_SINGLE;
      } else if (i / 4 == j / 4) {
        m.ancestor[i][j] = NVML_TOPOLOGY_HOSTBRIDGE;
      }
      if (i / 4 == j / 4 || nv[i][j] > 0) m.p2p[i][j] = NVML_P2P_STATUS_OK;
    }
  }
  return m;
}

// A cloud VM with 4 L40S on PCIe (AWS g6e.12xlarge): no NVLink, no MIG, no
// P2P, every pair NODE.
FakeMachine PcieL40s() {
  FakeMachine m;
  m.name = "pcie-l40s";
  m.nvlink = false;
  const unsigned buses[4] = {0x38, 0x3a, 0x3c, 0x3e};
  for (int i = 0; i < 4; ++i) {
    FakeGpu g;
    g.uuid = Uuid("140500aa", i);
    g.name = "NVIDIA L40S";
    g.bus_id = Bus(0, buses[i]);
    g.memory_bytes = 48305799168ULL;  // 46068 MiB
    g.cc_major = 8;
    g.cc_minor = 9;
    g.pcie_max_gen = 4;
    g.pcie_curr_gen = 4;
    g.pcie_width = 16;
    g.cpus = Cpus({{0, 47}});
    m.gpus.push_back(g);
  }
  m.ancestor = Square(4, NVML_TOPOLOGY_NODE);
  m.p2p = Square(4, NVML_P2P_STATUS_GPU_NOT_SUPPORTED);
  return m;
}

// One GB200 NVL72 compute tray: 4 GPUs whose 18 links each go to NVSwitch
// trays outside the node (no usable PCI address), members of one
// multi-node NVLink clique. GPU 3 runs in MIG mode.
FakeMachine Gb200Nvl() {
  FakeMachine m;
  m.name = "gb200-nvl";
  m.mig_capable = true;
  const unsigned domains[4] = {0x8, 0x9, 0x18, 0x19};
  for (int i = 0; i < 4; ++i) {
    FakeGpu g;
    g.uuid = Uuid("gb200f00", i);
    g.name = "NVIDIA GB200";
    g.bus_id = Bus(domains[i], 0x01);
    g.memory_bytes = 198642237440ULL;  // 189440 MiB
    g.cc_major = 10;
    g.cc_minor = 0;
    g.pcie_max_gen = 6;
    g.pcie_curr_gen = 6;
    g.pcie_width = 16;
    g.mig = i == 3;
    g.cpus = i < 2 ? Cpus({{0, 71}}) : Cpus({{72, 143}});
    for (int k = 0; k < 18; ++k) g.links.push_back({NVML_NVLINK_DEVICE_TYPE_SWITCH, ""});
    g.fabric = true;
    for (int b = 0; b < 16; ++b) g.cluster_uuid[b] = static_cast<unsigned char>(0x10 + b);
    g.clique = 32766;
    m.gpus.push_back(g);
  }
  m.ancestor = Square(4, NVML_TOPOLOGY_SYSTEM);
  m.p2p = Square(4, NVML_P2P_STATUS_OK);
  return m;
}

// Four A100-SXM4-80GB, the first two in MIG mode as an operator partitioned
// them: GPU 0 into two 3g.40gb, GPU 1 into seven 1g.10gb; GPUs 2 and 3 whole.
FakeMachine A100Mig() {
  FakeMachine m;
  m.name = "a100-mig";
  m.mig_capable = true;
  m.nvlink = false;
  for (int i = 0; i < 4; ++i) {
    FakeGpu g;
    g.uuid = Uuid("a100cafe", i);
    g.name = "NVIDIA A100-SXM4-80GB";
    g.bus_id = Bus(0, 0x07 + 0x10 * i);
    g.memory_bytes = 85899345920ULL;  // 81920 MiB
    g.cc_major = 8;
    g.cc_minor = 0;
    g.pcie_max_gen = 4;
    g.pcie_curr_gen = 4;
    g.pcie_width = 16;
    g.cpus = i < 2 ? Cpus({{0, 31}}) : Cpus({{32, 63}});
    g.mig = i < 2;
    char uuid[64];
    if (i == 0) {
      for (unsigned k = 0; k < 2; ++k) {
        std::snprintf(uuid, sizeof uuid, "MIG-3g40gb00-0000-4000-8000-%012u", k);
        g.migs.push_back({k, uuid, "3g.40gb", 1 + k, 0, 3, 40192});
      }
    } else if (i == 1) {
      for (unsigned k = 0; k < 7; ++k) {
        std::snprintf(uuid, sizeof uuid, "MIG-1g10gb00-0000-4000-8000-%012u", k);
        g.migs.push_back({k, uuid, "1g.10gb", 7 + k, 0, 1, 9728});
      }
    }
    m.gpus.push_back(g);
  }
  m.ancestor = Square(4, NVML_TOPOLOGY_NODE);
  m.p2p = Square(4, NVML_P2P_STATUS_OK);
  return m;
}

}  // namespace

const FakeMachine* FindMachine(const std::string& name) {
  static const FakeMachine machines[] = {HgxH100(), Dgx1V100(), PcieL40s(), Gb200Nvl(), A100Mig()};
  if (name.empty()) return &machines[0];
  for (const FakeMachine& m : machines) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

}  // namespace gpusched::fake_nvml
