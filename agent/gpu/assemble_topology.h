#pragma once

#include "agent/gpu/hwloc_host.h"
#include "agent/gpu/nvml_gpu_reader.h"
#include "common/topology/node_topology.h"

namespace gpusched::agent {

// One node's model from what NVML says about its GPUs (none on a node
// without the driver) and what hwloc says about the host:
//   - GPUs and GPU–GPU links from NVML; a pair NVML could not place on PCIe
//     gets hwloc's class, else SYS;
//   - each GPU's NUMA node from hwloc (where its PCI device is attached),
//     else the one node holding all of its CPUs; its CPUs from NVML, else
//     hwloc;
//   - NUMA nodes, NICs, GPU–NIC and NIC–NIC classes from hwloc's PCI tree; a
//     GPU hwloc cannot see is NODE to the NICs of its own NUMA node, else SYS;
//   - nvswitch from NVML, and network().nvlink_domain "<cluster>/<clique>"
//     when every GPU reports the same multi-node NVLink fabric.
topology::NodeTopology AssembleTopology(const NvmlGpus& gpus, const HwlocHost& host);

}  // namespace gpusched::agent
