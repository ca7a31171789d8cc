#pragma once

#include <string>

#include "gpusched/v1/types.pb.h"

namespace gpusched::cli {

// `gpusched nodes show NODE`: the node's state, place in the network and
// labels, a table of its GPUs and NICs, then the GPU/NIC link matrix drawn
// the way `nvidia-smi topo -m` draws it.
std::string RenderNodeDetail(const v1::Node& node);

// The node's last NCCL link calibration (NodeInfo.probe): each GPU pair's
// measured bus bandwidth next to its link's estimate; "" when it has none.
std::string RenderLinkCalibration(const v1::Node& node);

}  // namespace gpusched::cli
