#pragma once

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/topology/node_topology.h"

namespace gpusched::topology {

// Parses the output of `nvidia-smi topo -m`:
//
//   <tab>GPU0<tab>GPU1<tab>NIC0<tab>CPU Affinity<tab>NUMA Affinity<tab>GPU NUMA ID
//   GPU0<tab> X <tab>NV12<tab>PXB<tab>0-23,48-71<tab>0<tab><tab>N/A
//   ...
//   NIC0<tab>PXB<tab>...
//
//   Legend:
//     X    = Self
//     ...
//   NIC Legend:
//     NIC0: mlx5_0
//
// Both the tab-separated and the space-aligned layouts are accepted. Device
// columns are GPU0..GPUn-1 followed by NICs (named NIC<k>, mapped to devices
// through the "NIC Legend" block, or named after the device, e.g. mlx5_0);
// the attribute columns (CPU Affinity, NUMA Affinity, GPU NUMA ID) are each
// optional. NIC rows are optional; every GPU needs a row.
//
// What the output does not show is left unknown: GPU UUID, PCI bus id, model,
// memory, MIG mode; NIC PCI bus id and speed; NUMA memory; whether NVLinks go
// through NVSwitch (see NodeTopology::nvswitch). Derived values:
//   - a NIC's NUMA node is that of its closest GPU when the link is PIX, PXB,
//     PHB or NODE (all of which stay inside one NUMA node) and that GPU's node
//     is known;
//   - NUMA nodes are those named by some GPU's NUMA Affinity; each node's CPU
//     list is the union of the CPU affinity of its GPUs.
//
// Anything else is an InvalidArgument that names the 1-based line number and
// what was expected there.
absl::StatusOr<NodeTopology> ParseNvidiaSmiTopo(absl::string_view text);

}  // namespace gpusched::topology
