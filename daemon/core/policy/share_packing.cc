#include "daemon/core/policy/share_packing.h"

namespace gpusched::core {

std::vector<std::string> SharePackingNames() { return {"best-fit", "fgd"}; }

std::optional<SharePacking> ParseSharePacking(absl::string_view name) {
  if (name == "best-fit") return SharePacking::kBestFit;
  if (name == "fgd") return SharePacking::kFgd;
  return std::nullopt;
}

}  // namespace gpusched::core
