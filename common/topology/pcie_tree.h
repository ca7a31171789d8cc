#pragma once

#include <compare>
#include <optional>
#include <vector>

#include "common/topology/node_topology.h"

namespace gpusched::topology {

// A GPU or NIC of a NodeTopology, by position in gpus() / nics(). GPUs order
// before NICs.
struct DeviceRef {
  enum class Kind { kGpu, kNic };
  Kind kind = Kind::kGpu;
  int index = 0;
  friend auto operator<=>(const DeviceRef&, const DeviceRef&) = default;
};

// The link class between two devices of `topo` (SYS when out of range).
Link LinkBetween(const NodeTopology& topo, DeviceRef a, DeviceRef b);

// One node of a PCIe tree: a device (leaf) or a PCIe bridge / switch.
struct PcieNode {
  std::optional<DeviceRef> device;  // nullopt for a bridge
  std::vector<PcieNode> children;   // a bridge's, in device order
  bool is_bridge() const { return !device.has_value(); }
};

// The devices attached to one CPU socket / NUMA node.
struct CpuDomain {
  // The NUMA node; -1 holds the devices whose node cannot be told.
  int numa_id = -1;
  // True when numa_id was made up for a group of GPUs with the same CPU
  // affinity but no NUMA Affinity (DGX-1 style topo -m output).
  bool numa_id_synthesized = false;
  std::vector<int> cpus;           // sorted; empty when unknown
  std::vector<PcieNode> children;  // in device order
};

// A plausible PCIe tree for a model that only knows link classes between
// devices. The real tree is not recoverable from topo -m, so this builds the
// smallest one that reproduces the classes:
//
// CPU domains. A device belongs to its NUMA node. A GPU without one but with
// a CPU affinity shares a domain with the GPUs of the same affinity; that
// domain gets the lowest id no known NUMA node uses (numa_id_synthesized). A
// NIC without a NUMA node joins the domain of its closest GPU unless every
// GPU is SYS away. Everything else goes to domain -1. Domains come in id order
// with -1 last; every NUMA node of the model appears, even without devices.
//
// Bridges, inside one domain. Devices joined by PIX or PXB (transitively)
// share a bridge. Within such a group, devices joined by PIX (transitively)
// sit directly under one bridge; when the group holds more than one PIX
// cluster, each cluster gets a bridge of its own below a common top bridge,
// so that devices of different clusters are two bridges apart (PXB). PHB,
// NODE and SYS put no bridge between devices: they meet at the CPU, or
// between CPUs. A GPU pair joined by NVLink says nothing about PCIe (topo -m
// shows NV<n> instead), so it contributes no edge; p4d-style GPU pairs still
// end up under one bridge through the NIC they both share.
std::vector<CpuDomain> SynthesizePcieTree(const NodeTopology& topo);

}  // namespace gpusched::topology
