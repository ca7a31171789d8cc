#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "daemon/core/sharing/fragmentation.h"
#include "daemon/core/sharing/node_waste.h"

namespace gpusched::core {

// How a share of a GPU picks its GPU among those it fits (share_placement.h).
enum class SharePacking {
  // The tightest fit, then leaving idle nodes and NVLink islands whole.
  kBestFit,
  // The GPU with the most share free, on the node with the most whole GPUs
  // free: load balancing, each share contending least for its GPU's time,
  // at the cost of opening more GPUs to sharing (and keeping fewer whole).
  kSpread,
  // FGD (Weng et al., USENIX ATC '23): where the fragmentation expected for
  // the cluster's task mix grows least; best fit among equals.
  kFgd,
  // Where the node's likely waste grows least (sharing::NodeWaste: what the
  // sizes common among the mix's shares cannot fill of each GPU, and the
  // share the node's CPU or memory cannot feed), then FGD. The simulator's
  // fill-fgd for shares, less its model term (the mix here does not carry
  // the GPU models jobs are limited to); its rules for whole GPUs and
  // CPU-only tasks are not the daemon's, whose placement policy places those.
  kFillFgd,
};

inline constexpr char kDefaultSharePacking[] = "best-fit";
std::vector<std::string> SharePackingNames();
std::optional<SharePacking> ParseSharePacking(absl::string_view name);
absl::string_view SharePackingName(SharePacking packing);

// What PlaceShares weighs a choice by: the packing, and for FGD and
// fill-fgd the tasks the cluster holds and waits for (the mix its fragment
// is expected over).
struct ShareWeighing {
  SharePacking packing = SharePacking::kBestFit;
  sharing::TaskMix mix;
  // kFillFgd: the waste measure for the mix.
  std::optional<sharing::NodeWaste> waste;

  static ShareWeighing Of(SharePacking packing, sharing::TaskMix mix);
};

}  // namespace gpusched::core
