#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/gpu/pci_address.h"
#include "common/topology/node_topology.h"

namespace gpusched::agent {

struct HostOptions {
  // Read the topology from this hwloc XML file (`lstopo --of xml`) instead of
  // probing this machine: tests, and rehearsing another node's layout.
  std::string hwloc_xml_path;
  // Or a synthetic description such as "pack:2 numa:1 core:4 pu:2" (no PCI
  // devices, so no NICs): tests of the CPU and memory side.
  std::string hwloc_synthetic;
  // Where NIC link speeds are read; tests point it at a fake tree.
  std::string sysfs_root = "/sys";
};

// The host side of a node as hwloc sees it: NUMA nodes, NICs and the PCIe
// tree that says how close any two PCI devices are. hwloc's own types stay in
// hwloc_host.cc.
class HwlocHost {
 public:
  // InvalidArgument for a synthetic description hwloc rejects; Internal,
  // with hwloc's reason, when the topology cannot be loaded.
  static absl::StatusOr<std::unique_ptr<HwlocHost>> Load(const HostOptions& options);
  ~HwlocHost();
  HwlocHost(const HwlocHost&) = delete;
  HwlocHost& operator=(const HwlocHost&) = delete;

  // In id order, with the CPUs this process may use and the local memory.
  // A machine without NUMA has one node, 0.
  std::vector<topology::NumaNode> NumaNodes() const;

  // RDMA devices and network interfaces that sit on PCI, one per PCI
  // function: an InfiniBand or RoCE port is named after its RDMA device
  // ("mlx5_0", which NCCL_IB_HCA wants) even though it also has a network
  // interface; a plain Ethernet NIC after its interface ("ens1f0"). RDMA
  // devices come first, then by device name with numbers compared as numbers
  // (mlx5_2 before mlx5_10), named NIC0, NIC1, ... as in `nvidia-smi topo
  // -m`. Virtual interfaces without a PCI device are not NICs.
  std::vector<topology::NicInfo> Nics() const;

  // How two PCI functions reach each other, in topo -m's classes:
  //   PIX  the same PCIe switch (or bridge): neither is more than one bridge
  //        below their closest common bridge;
  //   PXB  a common PCIe bridge below the host bridge, through more switches;
  //   PHB  the same host bridge;
  //   NODE different host bridges of one NUMA node;
  //   SYS  different NUMA nodes.
  // nullopt when either is not in hwloc's PCI tree.
  std::optional<topology::Link> PciLink(const PciAddress& a, const PciAddress& b) const;

  // The NUMA node a PCI function is attached to, when it is exactly one.
  std::optional<int> NumaNodeOf(const PciAddress& address) const;
  // The CPUs local to a PCI function; empty when it is not in the tree.
  std::vector<int> CpusNear(const PciAddress& address) const;

 private:
  struct Impl;
  explicit HwlocHost(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpusched::agent
