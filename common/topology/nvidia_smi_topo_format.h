#pragma once

#include <string>

#include "common/topology/node_topology.h"

namespace gpusched::topology {

// Draws the model as `nvidia-smi topo -m` does, tab-separated like the tool:
//
//   <tab>GPU0<tab>GPU1<tab>NIC0<tab>CPU Affinity<tab>NUMA Affinity
//   GPU0<tab> X <tab>NV12<tab>PXB<tab>0-23,48-71<tab>0
//   GPU1<tab>NV12<tab> X <tab>PXB<tab>0-23,48-71<tab>0
//   NIC0<tab>PXB<tab>PXB<tab> X
//
//   Legend:
//
//     X    = Self
//     ...
//
//   NIC Legend:
//
//     NIC0: mlx5_0
//
// GPUs are titled GPU<i> and NICs NIC<k> by position, as current drivers do;
// each NIC with a known device gets a NIC Legend line (the block is left out
// when none has one). A GPU's unknown CPU affinity or NUMA node prints as
// N/A. NIC rows carry links only. The Legend explains the classes in this
// project's words (see link_kind.h), not the driver's.
//
// ParseNvidiaSmiTopo reads the result back into the same links, NIC devices,
// GPU NUMA nodes and CPU affinities (NICs then carry NIC<k> names). What
// topo -m cannot show (bus ids, models, NVSwitch, ...) is not printed.
std::string FormatNvidiaSmiTopo(const NodeTopology& topo);

}  // namespace gpusched::topology
