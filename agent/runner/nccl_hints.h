#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "common/topology/node_topology.h"

namespace gpusched::agent {

// Which NICs NCCL should use for the GPUs a job holds on this node, so that
// two jobs sharing a node each stay on their own GPUs' rails and neither
// wanders onto a storage or management NIC.
//
// For each GPU (by CUDA index, in the order given) the NICs closest to it
// (NodeTopology::NicsClosestTo, all of them on a tie), then without repeats.
// A GPU whose closest NIC is only SYS away (across the CPU interconnect)
// contributes nothing as long as another GPU has a NIC on its own side: its
// traffic is better off reaching the network through a peer over NVLink
// (NCCL's PXN) than through the far socket. Only when no GPU has anything
// better are the SYS NICs used. NICs known only by a topo -m column title
// ("NIC0", no NIC Legend) have no usable name and are left out; GPU indices
// the topology does not know are skipped.
std::vector<int> NicsNearGpus(const topology::NodeTopology& topo, const std::vector<int>& gpu_indices);

// Whether a NIC device name is an RDMA device (what NCCL_IB_HCA lists)
// rather than a network interface (what NCCL_SOCKET_IFNAME lists). The
// topology model does not record it, so this goes by the kernel drivers'
// naming: mlx4_/mlx5_, ib*/roce* (rdma-core's predictable names), hfi1_,
// qib, efa_, bnxt_re, irdma, i40iw, qedr, erdma, mana_, hns_, cxgb4_,
// ocrdma, vmw_pvrdma, rxe, siw, ionic.
bool IsRdmaDevice(absl::string_view device);

// The NCCL variables that point a job at NicsNearGpus: NCCL_IB_HCA when any
// of those NICs is an RDMA device (listing only those), else
// NCCL_SOCKET_IFNAME with the network interfaces. Values start with "=",
// NCCL's exact-match marker: a bare "mlx5_1" is a prefix and would also
// select mlx5_10 and mlx5_11. Empty when no NIC is known near the GPUs.
std::map<std::string, std::string> NcclNetworkEnv(const topology::NodeTopology& topo,
                                                  const std::vector<int>& gpu_indices);

}  // namespace gpusched::agent
