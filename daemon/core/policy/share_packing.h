#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "daemon/core/sharing/fragmentation.h"

namespace gpusched::core {

// How a share of a GPU picks its GPU among those it fits (share_placement.h).
enum class SharePacking {
  // The tightest fit, then leaving idle nodes and NVLink islands whole.
  kBestFit,
  // FGD (Weng et al., USENIX ATC '23): where the fragmentation expected for
  // the cluster's task mix grows least; best fit among equals.
  kFgd,
  // A share of one GPU first keeps each GPU fillable by the sizes common
  // among the mix's shares (sharing::FillableLeftovers: where that grows
  // least), then FGD; a share of several GPUs by FGD. The simulator's
  // fill-fgd for shares (its rules for whole GPUs and CPU-only tasks are not
  // the daemon's, whose placement policy places those).
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
  // kFillFgd: sharing::FillableLeftovers(mix), by free thousandths of a GPU.
  std::vector<int> fillable_leftover;

  static ShareWeighing Of(SharePacking packing, sharing::TaskMix mix);
};

}  // namespace gpusched::core
